import { NAMESPACE_SYNC_PERIOD, TERMINATING_FIELDS, namespaceRoutes, terminating } from '../../activities/namespace/routes';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { NamespaceEvent } from '../../workflows/namespace/workflow';
import { routeHarness } from '../support/routes';

const NS = RESOURCES.namespaces;

const harness = () => routeHarness<NamespaceEvent>(namespaceRoutes, { controllers: ['namespace'], flags: { [NAMESPACE_SYNC_PERIOD.name]: 60_000 } });

const ns = (name: string, o: { deleting?: boolean; finalizers?: string[]; rv?: string; phase?: string } = {}): KubeObject =>
  ({
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name, uid: `u-${name}`, resourceVersion: o.rv ?? '1', ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { finalizers: o.finalizers ?? ['kubernetes'] },
    status: { phase: o.phase ?? (o.deleting ? 'Terminating' : 'Active') },
  } as unknown as KubeObject);

describe('namespace routes', () => {
  test('TERMINATING_FIELDS keeps everything terminating reads', () => {
    const rich = ns('gone', { deleting: true, finalizers: ['kubernetes', 'example.com/x'] });
    expect(terminating(prune(rich, TERMINATING_FIELDS) as KubeObject)).toEqual(terminating(rich));
    expect(terminating(rich)).toEqual({ name: 'gone', uid: 'u-gone', finalizers: 'kubernetes,example.com/x' });
  });

  test('a list sends every terminating namespace a relist, to its workflow, with its args; active ones nothing', () => {
    const { sent, h } = harness();
    h(NS).relisted([ns('live'), ns('gone', { deleting: true })], '5');
    expect(sent).toHaveLength(1);
    expect(sent[0].event).toEqual({ uid: 'u-gone', relist: true });
    expect(sent[0].target).toMatchObject({ controller: 'namespace', kind: 'Namespace', namespace: '', name: 'gone', uid: 'u-gone', workflowId: 'namespace/gone' });
    expect(sent[0].target.args).toEqual({ name: 'gone', uid: 'u-gone', syncMs: 60_000, tuning: undefined });
    // a later relist looks at every terminating namespace again, changed or not
    sent.length = 0;
    h(NS).relisted([ns('live'), ns('gone', { deleting: true })], '9');
    expect(sent.map((s) => s.event)).toEqual([{ uid: 'u-gone', relist: true }]);
  });

  test('a watched namespace is sent when it starts terminating and when its finalizers change, not for status writes', () => {
    const { sent, h } = harness();
    h(NS).relisted([ns('a')], '1');
    h(NS).event('MODIFIED', ns('a', { rv: '2', phase: 'Active' }));
    expect(sent).toHaveLength(0);
    h(NS).event('MODIFIED', ns('a', { rv: '3', deleting: true }));
    expect(sent.map((s) => s.event)).toEqual([{ uid: 'u-a' }]);
    sent.length = 0;
    // the workflow's own condition writes
    const withConditions = ns('a', { rv: '4', deleting: true });
    (withConditions.status as { conditions?: unknown[] }).conditions = [{ type: 'NamespaceContentRemaining', status: 'True' }];
    h(NS).event('MODIFIED', withConditions);
    expect(sent).toHaveLength(0);
    h(NS).event('MODIFIED', ns('a', { rv: '5', deleting: true, finalizers: [] }));
    expect(sent.map((s) => s.event)).toEqual([{ uid: 'u-a' }]);
    sent.length = 0;
    h(NS).event('DELETED', ns('a', { rv: '6', deleting: true, finalizers: [] }));
    expect(sent).toHaveLength(0);
  });

  test('a namespace created already terminating (seen first by the watch) is sent at once', () => {
    const { sent, h } = harness();
    h(NS).relisted([], '1');
    h(NS).event('ADDED', ns('b', { rv: '2', deleting: true }));
    expect(sent.map((s) => s.event)).toEqual([{ uid: 'u-b' }]);
  });
});
