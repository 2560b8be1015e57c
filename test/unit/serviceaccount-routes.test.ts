import pino from 'pino';
import { InformerCache } from '../../activities/informers/cache';
import { METADATA, metadataOnly, prune } from '../../activities/informers/fields';
import type { Signaller, Target } from '../../activities/informers/signaller';
import type { KubeRest } from '../../activities/kube/rest';
import { NAMESPACE_PHASE_FIELDS, namespaceActive } from '../../activities/informers/namespace-phases';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import { SERVICE_ACCOUNT_NAME_FIELDS, serviceAccountRoutes } from '../../activities/serviceaccount/routes';
import { serviceAccountWorkflow, type NamespaceAccountsEvent } from '../../workflows/serviceaccount/workflow';
import { routeHarness } from '../support/routes';

const NS = RESOURCES.namespaces;
const SA = RESOURCES.serviceAccounts;

const harness = () => routeHarness<NamespaceAccountsEvent>(serviceAccountRoutes, { controllers: ['serviceaccount'], tuning: { resyncMs: 1000 } });
const namespace = (name: string, o: { phase?: string; deleting?: boolean; rv?: string } = {}): KubeObject => ({
  metadata: { name, uid: `ns-${name}`, resourceVersion: o.rv ?? '1', ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  ...(o.phase ? { status: { phase: o.phase } } : {}),
});
const account = (ns: string, name: string, rv = '1'): KubeObject => ({ metadata: { namespace: ns, name, uid: `sa-${ns}-${name}`, resourceVersion: rv } });

describe('serviceaccount routes: what they watch', () => {
  test('only with the controller enabled; namespaces and the accounts\' metadata', () => {
    expect(routeHarness(serviceAccountRoutes, { controllers: ['job'] }).family).toBeUndefined();
    const { cache, family } = harness();
    expect(family).toEqual({});
    expect(cache.paths.sort()).toEqual([resourcePath(NS), resourcePath(SA)].sort());
    expect(metadataOnly(SERVICE_ACCOUNT_NAME_FIELDS)).toBe(true);
  });
});

describe('serviceaccount routes: which namespaces are owed an account', () => {
  test('namespaces listed first wait for the accounts; then every active one lacking `default` is signalled', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('a'), namespace('b', { phase: 'Active' }), namespace('has'), namespace('gone', { phase: 'Terminating' }), namespace('going', { deleting: true })], '1');
    expect(sent).toHaveLength(0);
    h(SA).relisted([account('has', 'default'), account('a', 'builder')], '2');
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['serviceaccount/a', { active: true, present: [] }],
      ['serviceaccount/b', { active: true, present: [] }],
    ]);
    expect(sent[0].target).toMatchObject({ controller: 'serviceaccount', workflow: serviceAccountWorkflow, kind: 'Namespace', namespace: 'a', name: 'a', uid: '',
      args: { namespace: 'a', tuning: { resyncMs: 1000 } } });
    expect(sent[0].urgent).toBe(false);
  });

  test('with the accounts listed, a namespace added, updated or relisted without `default` is signalled; one with it, or terminating, is not', () => {
    const { sent, h } = harness();
    h(SA).relisted([account('has', 'default')], '1');
    h(NS).relisted([namespace('has'), namespace('a')], '2');
    expect(sent.map((s) => s.id)).toEqual(['a/a']);
    sent.length = 0;
    h(NS).event('ADDED', namespace('new', { rv: '3' }));
    h(NS).event('MODIFIED', namespace('has', { rv: '4' }));
    h(NS).event('MODIFIED', namespace('a', { rv: '5', phase: 'Terminating' }));
    h(NS).event('DELETED', namespace('new', { rv: '6' }));
    expect(sent.map((s) => s.id)).toEqual(['new/new']);
    sent.length = 0;
    h(NS).relisted([namespace('has'), namespace('b')], '7');
    expect(sent.map((s) => s.id)).toEqual(['b/b']);
  });

  test('a deleted `default` in an active namespace is signalled; an added account, another account or a terminating namespace is not', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('a'), namespace('t', { phase: 'Terminating' })], '1');
    h(SA).relisted([account('a', 'default'), account('a', 'builder'), account('t', 'default')], '2');
    expect(sent).toHaveLength(0);
    h(SA).event('ADDED', account('a', 'other', '3'));
    h(SA).event('DELETED', account('a', 'builder', '4'));
    h(SA).event('DELETED', account('t', 'default', '5'));
    expect(sent).toHaveLength(0);
    h(SA).event('DELETED', account('a', 'default', '6'));
    expect(sent.map((s) => [s.id, s.event])).toEqual([['a/a', { active: true, present: [] }]]);
  });

  test('an accounts relist judges every active namespace again: a `default` gone during the gap is owed', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('a'), namespace('b')], '1');
    h(SA).relisted([account('a', 'default'), account('b', 'default')], '2');
    h(SA).relisted([account('a', 'default')], '3');
    expect(sent.map((s) => s.id)).toEqual(['b/b']);
  });
});

test('routes registered on stores another controller already listed judge them at once', () => {
  const cache = new InformerCache({} as KubeRest, pino({ level: 'silent' }));
  cache.watch(NS, METADATA).replace([namespace('a'), namespace('has')], '1');
  cache.watch(SA, METADATA).replace([account('has', 'default')], '2');
  const sent: string[] = [];
  const signaller = { queue: (t: Target) => sent.push(t.workflowId ?? '') } as unknown as Signaller;
  serviceAccountRoutes({ input: { controllers: ['serviceaccount'] }, signaller, cache, baseTaskQueue: 'q' });
  // told once by each replayed store; the signaller sends one signal per workflow ID
  expect([...new Set(sent)]).toEqual(['serviceaccount/a']);
});

describe('namespace phases', () => {
  test('active: not being deleted, and phase Active or none yet', () => {
    expect(namespaceActive(namespace('a'))).toBe(true);
    expect(namespaceActive(namespace('a', { phase: 'Active' }))).toBe(true);
    expect(namespaceActive(namespace('a', { phase: 'Terminating' }))).toBe(false);
    expect(namespaceActive(namespace('a', { phase: 'Active', deleting: true }))).toBe(false);
  });

  test('namespaceActive reads nothing NAMESPACE_PHASE_FIELDS drops', () => {
    const rich = (deleting: boolean, phase: string): KubeObject => ({
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'a', uid: 'u', resourceVersion: '3', labels: { 'kubernetes.io/metadata.name': 'a' }, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
      spec: { finalizers: ['kubernetes'] },
      status: { phase, conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False' }] },
    });
    for (const o of [rich(false, 'Active'), rich(true, 'Active'), rich(false, 'Terminating')]) {
      expect(namespaceActive(prune(o, NAMESPACE_PHASE_FIELDS) as KubeObject)).toBe(namespaceActive(o));
    }
    expect(prune(rich(false, 'Active'), NAMESPACE_PHASE_FIELDS)).not.toHaveProperty('spec');
  });

  test('the account mask keeps every name and UID the routes read', () => {
    const rich = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'a', name: 'default', uid: 'u', resourceVersion: '1' }, secrets: [{ name: 's' }], automountServiceAccountToken: false } as unknown as KubeObject;
    expect(prune(rich, SERVICE_ACCOUNT_NAME_FIELDS)).toEqual({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: rich.metadata });
  });
});
