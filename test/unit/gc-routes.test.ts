import { GC_NODE_FIELDS, gcNode, gcRoutes } from '../../activities/gc/routes';
import { collectionPath, type ResourceInfo } from '../../activities/kube/discovery';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES, apiVersionOf, resourcePath } from '../../activities/kube/resources';
import { gcWorkflowId, type GcEvent } from '../../workflows/gc/workflow';
import { type ApiResource, fakeDiscovery, routeHarness } from '../support/routes';

const PODS = RESOURCES.pods;
const RS = RESOURCES.replicaSets;
const WIDGETS = '/apis/example.com/v1/widgets';

const ALL_VERBS = ['list', 'watch', 'delete', 'get'];

const CLUSTER = {
  v1: [
    { name: 'pods', kind: 'Pod', namespaced: true, verbs: ALL_VERBS },
    { name: 'pods/status', kind: 'Pod', namespaced: true, verbs: ALL_VERBS },
    { name: 'events', kind: 'Event', namespaced: true, verbs: ALL_VERBS },
    { name: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create'] },
  ],
  'apps/v1': [{ name: 'replicasets', kind: 'ReplicaSet', namespaced: true, verbs: ALL_VERBS }],
  'example.com/v1': [{ name: 'widgets', kind: 'Widget', namespaced: false, verbs: ALL_VERBS }],
};

const harness = (groups: Record<string, ApiResource[]> = CLUSTER) =>
  routeHarness<GcEvent>(gcRoutes, { controllers: ['garbagecollector'] }, { rest: fakeDiscovery(groups) });

interface Meta { ns?: string; owners?: Array<{ kind: string; name: string; uid?: string }>; finalizers?: string[]; deleting?: boolean; rv?: string }
const obj = (apiVersion: string, kind: string, name: string, m: Meta = {}): KubeObject => ({
  apiVersion, kind,
  metadata: {
    ...(m.ns === undefined ? { namespace: 'a' } : m.ns ? { namespace: m.ns } : {}),
    name, uid: `u-${name}`, resourceVersion: m.rv ?? '1',
    ...(m.owners ? { ownerReferences: m.owners.map((o) => ({ apiVersion: 'apps/v1', kind: o.kind, name: o.name, uid: o.uid ?? `u-${o.name}` })) } : {}),
    ...(m.finalizers ? { finalizers: m.finalizers } : {}),
    ...(m.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
});
const pod = (name: string, m: Meta = {}) => ({ ...obj('v1', 'Pod', name, m), spec: { nodeName: 'n1' } } as KubeObject);
const rs = (name: string, m: Meta = {}) => ({ ...obj('apps/v1', 'ReplicaSet', name, m), spec: { replicas: 1 } } as KubeObject);
const widget = (name: string, m: Meta = {}) => obj('example.com/v1', 'Widget', name, { ...m, ns: '' });

/** the workflows signalled (one queued twice merges into one signal) */
const ids = (sent: Array<{ target: { workflowId?: string } }>) => [...new Set(sent.map((s) => s.target.workflowId))].sort();
const podRef = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name, uid: `u-${name}` });

describe('gc routes: paths and masks', () => {
  test('a discovered resource that RESOURCES also names gets the same collection path', () => {
    for (const r of Object.values(RESOURCES)) {
      const info = { apiVersion: apiVersionOf(r), resource: r.resource, namespaced: r.namespaced };
      expect(collectionPath(info)).toBe(resourcePath(r));
      expect(collectionPath(info, 'ns1')).toBe(resourcePath(r, 'ns1'));
      expect(collectionPath(info, '')).toBe(resourcePath(r));
    }
    expect(collectionPath({ apiVersion: 'example.com/v1', resource: 'widgets', namespaced: true }, 'b')).toBe('/apis/example.com/v1/namespaces/b/widgets');
  });

  test('GC_NODE_FIELDS keeps everything gcNode reads', () => {
    const res: ResourceInfo = { apiVersion: 'apps/v1', kind: 'ReplicaSet', resource: 'replicasets', namespaced: true, creatable: true };
    const rich = {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: {
        namespace: 'a', name: 'web', uid: 'u-web', resourceVersion: '9', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'],
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-dep', controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 3 }, status: { replicas: 3 },
    } as unknown as KubeObject;
    expect(gcNode(res, prune(rich, GC_NODE_FIELDS) as KubeObject)).toEqual(gcNode(res, rich));
    expect(gcNode(res, rich)).toMatchObject({ deleting: true, finalizers: ['foregroundDeletion'], ref: { namespace: 'a', uid: 'u-web' } });
  });
});

describe('gc routes: discovery registers with the shared cache', () => {
  test('each listable, watchable, deletable resource is watched once, at the path its routes use; metadata only for its own', async () => {
    const { cache, family, discover } = harness();
    await discover();
    expect(cache.paths.sort()).toEqual([resourcePath(RS), resourcePath(PODS), WIDGETS].sort());
    // another round finds nothing new
    await discover();
    expect(cache.paths).toHaveLength(3);
    expect(family!.sizes!()).toEqual({ gcNodes: 0, gcResources: 3 });
  });

  test('a resource another route reads in full is shared: one store, typed objects, the collector takes its metadata', async () => {
    const { cache, discover, h } = harness();
    const podStore = cache.watch(PODS, { metadata: true, spec: true });
    await discover();
    expect(cache.store(resourcePath(PODS))).toBe(podStore);
    h(PODS).relisted([pod('p1')], '5');
    expect(podStore.get('u-p1')?.spec).toEqual({ nodeName: 'n1' });
    // a resource only the collector reads keeps metadata only
    h(RS).relisted([rs('web')], '5');
    expect(cache.store(resourcePath(RS))!.get('u-web')).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: rs('web').metadata });
  });
});

describe('gc routes: what reaches the collector workflows', () => {
  test('a dependent whose owner is missing is sent only once every watched resource has been listed', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(PODS).relisted([pod('orphaned', { owners: [{ kind: 'ReplicaSet', name: 'gone' }] }), pod('owned', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    h(RS).relisted([rs('web')], '2');
    expect(sent).toHaveLength(0);
    h(WIDGETS).relisted([], '3');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('orphaned'))]);
    expect(sent[0].target).toMatchObject({ controller: 'garbagecollector', kind: 'Pod', namespace: 'a', name: 'orphaned', uid: 'u-orphaned' });
    expect(sent[0].target.args).toEqual({ ref: podRef('orphaned'), tuning: undefined });
    expect(sent[0].event).toEqual({ dependents: [] });
  });

  test('stores already listed by other routes replay into the graph, and count as listed for a late collector', async () => {
    const { sent, cache, family, discover, h } = harness({ v1: CLUSTER.v1, 'apps/v1': CLUSTER['apps/v1'] });
    cache.watch(PODS, true);
    cache.watch(RS, true);
    h(PODS).relisted([pod('orphaned', { owners: [{ kind: 'ReplicaSet', name: 'gone' }] }), pod('owned', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    // replicasets are not listed yet: the first store's replay must not declare the graph complete
    await discover();
    expect(sent).toHaveLength(0);
    expect(family!.sizes!()).toEqual({ gcNodes: 2, gcResources: 2 });
    h(RS).relisted([rs('web')], '2');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('orphaned'))]);
  });

  test('every store listed before discovery: the graph is complete as soon as the round registers', async () => {
    const { sent, cache, discover, h } = harness({ v1: CLUSTER.v1, 'apps/v1': CLUSTER['apps/v1'] });
    cache.watch(PODS, true);
    cache.watch(RS, true);
    h(PODS).relisted([pod('orphaned', { owners: [{ kind: 'ReplicaSet', name: 'gone' }] })], '1');
    h(RS).relisted([], '2');
    await discover();
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('orphaned'))]);
  });

  test('a resumed watch: an owner deleted while no watch ran, before the collector subscribed, still gets its dependent sent', async () => {
    // the job CI failure: pods and replicasets resumed at the last holder's positions (muted), their
    // watches replayed the owner's deletion, and only then did discovery hand the collector those
    // stores and a resumed store of its own, whose muted list completed the graph
    const { sent, cache, discover, h } = harness();
    cache.watch(PODS, true);
    cache.watch(RS, true);
    h(PODS).resumed([pod('left', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '7');
    h(RS).resumed([rs('web')], '7');
    h(RS).event('DELETED', rs('web', { rv: '8' }));
    await discover();
    expect(sent).toHaveLength(0);
    h(WIDGETS).resumed([], '7');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('left'))]);
  });

  test('a resumed list still sends nothing for what the last holder had sent: an owner deleting in the foreground', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(WIDGETS).resumed([], '7');
    h(PODS).resumed([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '7');
    h(RS).resumed([rs('web', { deleting: true, finalizers: ['foregroundDeletion'] })], '7');
    expect(sent).toHaveLength(0);
  });

  test('an owner deleted in the foreground is sent with its dependents, and they are sent too; it looks again when one changes', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(WIDGETS).relisted([], '1');
    h(RS).relisted([rs('web')], '1');
    h(PODS).relisted([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] }), pod('p2', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    expect(sent).toHaveLength(0);
    h(RS).event('MODIFIED', rs('web', { deleting: true, finalizers: ['foregroundDeletion'], rv: '2' }));
    const web = gcWorkflowId({ namespace: 'a', uid: 'u-web' });
    expect(ids(sent)).toEqual([web, gcWorkflowId(podRef('p1')), gcWorkflowId(podRef('p2'))].sort());
    expect(sent.find((s) => s.target.workflowId === web)!.event.dependents).toEqual([podRef('p1'), podRef('p2')]);
    sent.length = 0;
    h(PODS).event('MODIFIED', pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }], rv: '3', deleting: true }));
    expect(ids(sent)).toEqual([web]);
    sent.length = 0;
    // a dependent gone: the owner again, now with one dependent left
    h(PODS).event('DELETED', pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }], rv: '4' }));
    expect(ids(sent)).toEqual([web]);
    expect(sent[0].event.dependents).toEqual([podRef('p2')]);
  });

  test('a dependent listed after its owner is already deleting in the foreground (a restart) is sent to its own workflow', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(WIDGETS).relisted([], '1');
    h(RS).relisted([rs('web', { deleting: true, finalizers: ['foregroundDeletion'] })], '1');
    sent.length = 0;
    h(PODS).relisted([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    expect(ids(sent)).toContain(gcWorkflowId(podRef('p1')));
  });

  test('an owner that vanishes in a relist sends its dependents, as a deleted owner does', async () => {
    const { sent, family, discover, h } = harness();
    await discover();
    h(WIDGETS).relisted([], '1');
    h(PODS).relisted([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    h(RS).relisted([rs('web'), rs('db')], '1');
    expect(sent).toHaveLength(0);
    h(RS).relisted([rs('db')], '9');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('p1'))]);
    expect(family!.sizes!()).toEqual({ gcNodes: 2, gcResources: 3 });
    sent.length = 0;
    // an unchanged relist re-evaluates each object but sends nothing for healthy ones
    h(RS).relisted([rs('db')], '10');
    h(PODS).relisted([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '11');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('p1'))]); // its owner is still absent
  });

  test('an owner found in another namespace is named as such', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(WIDGETS).relisted([], '1');
    h(RS).relisted([rs('web', { ns: 'b' })], '1');
    h(PODS).relisted([pod('p1', { owners: [{ kind: 'ReplicaSet', name: 'web' }] })], '1');
    expect(ids(sent)).toEqual([gcWorkflowId(podRef('p1'))]);
    expect(sent[0].event.ownersElsewhere).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'b', name: 'web', uid: 'u-web' }]);
  });

  test('a cluster-scoped custom resource is a node without a namespace; orphaning owners are sent while they wait', async () => {
    const { sent, discover, h } = harness();
    await discover();
    h(PODS).relisted([], '1');
    h(RS).relisted([], '1');
    h(WIDGETS).relisted([widget('w', { deleting: true, finalizers: ['orphan'] })], '1');
    const w = gcWorkflowId({ uid: 'u-w' });
    expect(w).toBe('garbagecollector/_cluster/u-w');
    expect(ids(sent)).toEqual([w]);
    expect(sent[0].target.args).toEqual({ ref: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u-w' }, tuning: undefined });
    sent.length = 0;
    // gone: its workflow is told, and ends
    h(WIDGETS).event('DELETED', widget('w', { deleting: true, finalizers: ['orphan'] }));
    expect(ids(sent)).toEqual([w]);
  });
});
