import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import { rootCaView, sha256Hex } from '../../activities/root-ca-cert-publisher/activities';
import { ROOT_CA_CONFIGMAP_FIELDS, rootCaRoutes } from '../../activities/root-ca-cert-publisher/routes';
import { DESCRIPTION_ANNOTATION } from '../../workflows/root-ca-cert-publisher/logic';
import { rootCaWorkflow, type RootCaEvent } from '../../workflows/root-ca-cert-publisher/workflow';
import { routeHarness } from '../support/routes';

const NS = RESOURCES.namespaces;
const CM = RESOURCES.configMaps;
const CA = '-----BEGIN CERTIFICATE-----\nroot\n-----END CERTIFICATE-----\n';

const harness = (rootCa: string | undefined = CA) =>
  routeHarness<RootCaEvent>(rootCaRoutes, { controllers: ['root-ca-cert-publisher'], tuning: { resyncMs: 1000 } }, { rootCa });
const namespace = (name: string, o: { phase?: string; rv?: string } = {}): KubeObject =>
  ({ metadata: { name, uid: `ns-${name}`, resourceVersion: o.rv ?? '1' }, ...(o.phase ? { status: { phase: o.phase } } : {}) });
const configMap = (ns: string, o: { name?: string; ca?: string; extra?: boolean; described?: boolean; rv?: string } = {}): KubeObject => ({
  metadata: {
    namespace: ns, name: o.name ?? 'kube-root-ca.crt', uid: `cm-${ns}-${o.name ?? 'root'}`, resourceVersion: o.rv ?? '1',
    ...(o.described === false ? {} : { annotations: { [DESCRIPTION_ANNOTATION]: 'the cluster CA' } }),
  },
  data: { 'ca.crt': o.ca ?? CA, ...(o.extra ? { other: 'x' } : {}) },
} as KubeObject);

describe('root-ca routes: what they watch', () => {
  test('only with the controller enabled and a CA to publish; namespaces and every ConfigMap (no field selector)', () => {
    expect(routeHarness(rootCaRoutes, { controllers: ['job'] }, { rootCa: CA }).family).toBeUndefined();
    expect(harness('').family).toBeUndefined();
    const { cache, family } = harness();
    expect(family).toEqual({});
    expect(cache.paths.sort()).toEqual([resourcePath(CM), resourcePath(NS)].sort());
  });
});

describe('root-ca routes: which namespaces need the ConfigMap written', () => {
  test('namespaces listed first wait for the ConfigMaps; then each active one without the exact ConfigMap is signalled', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('ok'), namespace('missing'), namespace('stale'), namespace('extra'), namespace('bare'), namespace('t', { phase: 'Terminating' })], '1');
    expect(sent).toHaveLength(0);
    h(CM).relisted([
      configMap('ok'), configMap('stale', { ca: 'old' }), configMap('extra', { extra: true }), configMap('bare', { described: false }),
      configMap('missing', { name: 'something-else' }),
    ], '2');
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['root-ca-cert-publisher/missing', { active: true }],
      ['root-ca-cert-publisher/stale', { active: true, configMap: { resourceVersion: '1', caSha256: sha256Hex('old'), dataKeys: ['ca.crt'], hasDescription: true } }],
      ['root-ca-cert-publisher/extra', { active: true, configMap: { resourceVersion: '1', caSha256: sha256Hex(CA), dataKeys: ['ca.crt', 'other'], hasDescription: true } }],
      ['root-ca-cert-publisher/bare', { active: true, configMap: { resourceVersion: '1', caSha256: sha256Hex(CA), dataKeys: ['ca.crt'], hasDescription: false } }],
    ]);
    expect(sent[0].target).toMatchObject({ controller: 'root-ca-cert-publisher', workflow: rootCaWorkflow, kind: 'Namespace', namespace: 'missing', name: 'missing', uid: '',
      args: { namespace: 'missing', caSha256: sha256Hex(CA), tuning: { resyncMs: 1000 } } });
    expect(sent[0].urgent).toBe(false);
  });

  test('with the ConfigMaps listed, a namespace added, updated or relisted is judged as it comes; a deleted one is not', () => {
    const { sent, h } = harness();
    h(CM).relisted([configMap('ok')], '1');
    h(NS).relisted([namespace('ok'), namespace('a')], '2');
    expect(sent.map((s) => s.id)).toEqual(['a/a']);
    sent.length = 0;
    h(NS).event('ADDED', namespace('new', { rv: '3' }));
    h(NS).event('MODIFIED', namespace('ok', { rv: '4' }));
    h(NS).event('MODIFIED', namespace('a', { rv: '5', phase: 'Terminating' }));
    h(NS).event('DELETED', namespace('new', { rv: '6' }));
    expect(sent.map((s) => s.id)).toEqual(['new/new']);
  });

  test('the ConfigMap edited or deleted wakes its namespace; another ConfigMap, or one in a terminating namespace, does not', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('a'), namespace('t', { phase: 'Terminating' })], '1');
    h(CM).relisted([configMap('a'), configMap('t')], '2');
    expect(sent).toHaveLength(0);
    h(CM).event('MODIFIED', configMap('a', { rv: '3' }));
    h(CM).event('ADDED', configMap('a', { name: 'other', rv: '4' }));
    h(CM).event('DELETED', configMap('a', { name: 'other', rv: '5' }));
    h(CM).event('DELETED', configMap('t', { rv: '6' }));
    expect(sent).toHaveLength(0);
    h(CM).event('MODIFIED', configMap('a', { ca: 'tampered', rv: '7' }));
    h(CM).event('DELETED', configMap('a', { ca: 'tampered', rv: '8' }));
    expect(sent.map((s) => [s.id, s.event.configMap?.caSha256])).toEqual([['a/a', sha256Hex('tampered')], ['a/a', undefined]]);
  });

  test('a ConfigMap relist judges every active namespace again: one deleted during the gap is written back', () => {
    const { sent, h } = harness();
    h(NS).relisted([namespace('a'), namespace('b')], '1');
    h(CM).relisted([configMap('a'), configMap('b')], '2');
    h(CM).relisted([configMap('a')], '3');
    expect(sent.map((s) => [s.id, s.event])).toEqual([['b/b', { active: true }]]);
  });
});

test('rootCaView reads nothing ROOT_CA_CONFIGMAP_FIELDS drops', () => {
  const rich = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { namespace: 'a', name: 'kube-root-ca.crt', uid: 'u', resourceVersion: '4', labels: { x: 'y' }, annotations: { [DESCRIPTION_ANNOTATION]: 'd', other: 'o' } },
    data: { 'ca.crt': CA, other: 'x' },
    binaryData: { blob: 'AAAA' },
    immutable: false,
  } as unknown as KubeObject;
  const full = rootCaView(rich);
  expect(full).toEqual({ resourceVersion: '4', caSha256: sha256Hex(CA), dataKeys: ['ca.crt', 'other'], hasDescription: true });
  expect(rootCaView(prune(rich, ROOT_CA_CONFIGMAP_FIELDS) as KubeObject)).toEqual(full);
  expect(prune(rich, ROOT_CA_CONFIGMAP_FIELDS)).not.toHaveProperty('binaryData');
});
