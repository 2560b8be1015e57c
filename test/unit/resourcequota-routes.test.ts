import { RESOURCE_QUOTA_SYNC_PERIOD, quotaRoutes } from '../../activities/resourcequota/routes';
import { QUOTA_ENTRY_FIELDS, QUOTA_OBJECT_FIELDS, quotaEntry, quotaObjectNamespace } from '../../activities/resourcequota/projections';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { ResourceQuotaEvent } from '../../workflows/resourcequota/workflow';
import { fakeDiscovery, routeHarness } from '../support/routes';

const RQ = RESOURCES.resourceQuotas;
const PODS = RESOURCES.pods;
const SECRETS = RESOURCES.secrets;
const SERVICES = RESOURCES.services;

const harness = (flags = {}) => routeHarness<ResourceQuotaEvent>(quotaRoutes, { controllers: ['resourcequota'], flags });

const quota = (name: string, hard: Record<string, string>, o: { ns?: string; rv?: string; statusHard?: Record<string, string>; used?: Record<string, string> } = {}): KubeObject =>
  ({
    apiVersion: 'v1', kind: 'ResourceQuota',
    metadata: { namespace: o.ns ?? 'a', name, uid: `q-${name}`, resourceVersion: o.rv ?? '1' },
    spec: { hard },
    status: { hard: o.statusHard ?? hard, used: o.used ?? {} },
  } as unknown as KubeObject);
const thing = (kind: string, name: string, ns = 'a', rv = '1'): KubeObject =>
  ({ apiVersion: 'v1', kind, metadata: { namespace: ns, name, uid: `${kind}-${name}`, resourceVersion: rv }, spec: { x: 1 }, data: { k: 'dg==' } } as unknown as KubeObject);

const byId = (sent: Array<{ id: string; event: ResourceQuotaEvent }>) => sent.map((s) => [s.id, s.event]);

describe('resourcequota routes: masks', () => {
  test('QUOTA_ENTRY_FIELDS keeps everything quotaEntry reads', () => {
    const rich = {
      apiVersion: 'v1', kind: 'ResourceQuota',
      metadata: { namespace: 'a', name: 'q', uid: 'q-q', resourceVersion: '3', labels: { x: 'y' } },
      spec: {
        hard: { pods: '10', 'requests.cpu': '2', 'count/secrets': '5' },
        scopes: ['NotTerminating'],
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
      status: { hard: { pods: '10' }, used: { pods: '3' } },
    } as unknown as KubeObject;
    expect(quotaEntry(prune(rich, QUOTA_ENTRY_FIELDS) as KubeObject)).toEqual(quotaEntry(rich));
    expect(quotaEntry(rich)).toMatchObject({ hardSynced: false, tracks: new Set(['pods', 'secrets']) });
    expect(prune(rich, QUOTA_ENTRY_FIELDS)).not.toHaveProperty('status.used');
  });

  test('QUOTA_OBJECT_FIELDS keeps the namespace a counted object is routed by', () => {
    const rich = { ...thing('Secret', 's', 'ns1'), type: 'Opaque' } as KubeObject;
    expect(quotaObjectNamespace(prune(rich, QUOTA_OBJECT_FIELDS) as KubeObject)).toBe(quotaObjectNamespace(rich));
    expect(quotaObjectNamespace(rich)).toBe('ns1');
  });
});

describe('resourcequota routes: quotas', () => {
  test('a (re)list recounts every quota in full, to its workflow with its args; a quota gone meanwhile is told so', () => {
    const { sent, h } = harness({ [RESOURCE_QUOTA_SYNC_PERIOD.name]: 30_000 });
    h(RQ).relisted([quota('q1', { pods: '5' }), quota('q2', { secrets: '5' }, { ns: 'b' })], '3');
    expect(byId(sent)).toEqual([['a/q1', { all: true }], ['b/q2', { all: true }]]);
    expect(sent[0].target).toMatchObject({ controller: 'resourcequota', kind: 'ResourceQuota', namespace: 'a', name: 'q1', uid: 'q-q1', workflowId: 'resourcequota/a/q1' });
    expect(sent[0].target.args).toEqual({ namespace: 'a', name: 'q1', uid: 'q-q1', tuning: undefined, syncMs: 30_000 });
    sent.length = 0;
    h(RQ).relisted([quota('q1', { pods: '5' })], '9');
    expect(byId(sent)).toEqual([['a/q1', { all: true }], ['b/q2', { deletedUid: 'q-q2' }]]);
  });

  test('without the flag the args carry no sync period', () => {
    const { sent, h } = harness();
    h(RQ).relisted([quota('q1', { pods: '5' })], '3');
    expect(sent[0].target.args).toEqual({ namespace: 'a', name: 'q1', uid: 'q-q1', tuning: undefined });
  });

  test('a watched quota: new ones recount and nudge the namespace quotas counting quotas; spec changes and unsynced status recount; used does not', () => {
    const { sent, h } = harness();
    h(RQ).relisted([quota('counter', { resourcequotas: '3' }), quota('other', { resourcequotas: '3' }, { ns: 'b' })], '1');
    sent.length = 0;
    h(RQ).event('ADDED', quota('new', { pods: '5' }, { rv: '2' }));
    expect(byId(sent)).toEqual([['a/new', { all: true }], ['a/counter', { kinds: ['resourcequotas'] }]]);
    sent.length = 0;
    // quota admission charging usage: nothing
    h(RQ).event('MODIFIED', quota('new', { pods: '5' }, { rv: '3', used: { pods: '1' } }));
    expect(sent).toHaveLength(0);
    h(RQ).event('MODIFIED', quota('new', { pods: '6' }, { rv: '4', statusHard: { pods: '5' } }));
    expect(byId(sent)).toEqual([['a/new', { all: true }]]);
    sent.length = 0;
    // the spec already written, status.hard not yet mirroring it
    h(RQ).event('MODIFIED', quota('new', { pods: '6' }, { rv: '5', statusHard: { pods: '5' } }));
    expect(byId(sent)).toEqual([['a/new', { all: true }]]);
    sent.length = 0;
    h(RQ).event('DELETED', quota('new', { pods: '6' }, { rv: '6' }));
    expect(byId(sent)).toEqual([['a/new', { deletedUid: 'q-new' }], ['a/counter', { kinds: ['resourcequotas'] }]]);
  });
});

describe('resourcequota routes: counted objects', () => {
  test('a pod or service change nudges the quotas of its namespace that track the kind', () => {
    const { sent, h } = harness();
    h(RQ).relisted([quota('cpu', { 'requests.cpu': '2' }), quota('svc', { services: '2' }), quota('elsewhere', { pods: '5' }, { ns: 'b' })], '1');
    h(PODS).relisted([], '1');
    h(SERVICES).relisted([], '1');
    sent.length = 0;
    h(PODS).event('ADDED', thing('Pod', 'p1'));
    h(PODS).event('MODIFIED', thing('Pod', 'p1', 'a', '2'));
    h(PODS).event('DELETED', thing('Pod', 'p1', 'a', '3'));
    h(SERVICES).event('MODIFIED', thing('Service', 's1', 'a', '2'));
    expect(byId(sent)).toEqual([
      ['a/cpu', { kinds: ['pods'] }], ['a/cpu', { kinds: ['pods'] }], ['a/cpu', { kinds: ['pods'] }], ['a/svc', { kinds: ['services'] }],
    ]);
  });

  test('a counted-only kind nudges on creation and deletion, not on update', () => {
    const { sent, h } = harness();
    h(RQ).relisted([quota('s', { 'count/secrets': '2' })], '1');
    h(SECRETS).relisted([], '1');
    sent.length = 0;
    h(SECRETS).event('ADDED', thing('Secret', 's1'));
    h(SECRETS).event('MODIFIED', thing('Secret', 's1', 'a', '2'));
    h(SECRETS).event('DELETED', thing('Secret', 's1', 'a', '3'));
    expect(byId(sent)).toEqual([['a/s', { kinds: ['secrets'] }], ['a/s', { kinds: ['secrets'] }]]);
  });

  test('a (re)list of a kind nudges, once, every quota tracking it in any namespace; none before quotas are known', () => {
    const { sent, h } = harness();
    h(PODS).relisted([thing('Pod', 'p1')], '1');
    expect(sent).toHaveLength(0);
    h(RQ).relisted([quota('cpu', { 'requests.cpu': '2' }), quota('b', { pods: '2' }, { ns: 'b' }), quota('s', { secrets: '1' })], '2');
    sent.length = 0;
    h(PODS).relisted([thing('Pod', 'p1', 'a', '5'), thing('Pod', 'p2', 'b')], '6');
    expect(byId(sent)).toEqual([['a/cpu', { kinds: ['pods'] }], ['b/b', { kinds: ['pods'] }]]);
  });

  test('counted objects are kept as metadata only, secrets included', () => {
    const { cache, h } = harness();
    h(SECRETS).relisted([thing('Secret', 's1')], '1');
    expect(cache.store(SECRETS)!.get('Secret-s1')).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: thing('Secret', 's1').metadata });
  });
});

describe('resourcequota routes: monitors of every other quotable resource', () => {
  const CREATABLE = ['create', 'list', 'watch', 'delete', 'get'];
  const cluster = {
    v1: [
      { name: 'pods', kind: 'Pod', namespaced: true, verbs: CREATABLE },
      { name: 'resourcequotas', kind: 'ResourceQuota', namespaced: true, verbs: CREATABLE },
      { name: 'events', kind: 'Event', namespaced: true, verbs: CREATABLE },
    ],
    'apps/v1': [
      { name: 'replicasets', kind: 'ReplicaSet', namespaced: true, verbs: CREATABLE },
      { name: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true, verbs: ['list', 'watch', 'delete'] },
    ],
    'example.com/v1': [{ name: 'widgets', kind: 'Widget', namespaced: false, verbs: CREATABLE }],
  };
  const RS_PATH = '/apis/apps/v1/replicasets';
  const rsObj = (name: string, ns = 'a') => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { namespace: ns, name, uid: `rs-${name}`, resourceVersion: '2' } } as KubeObject);

  test('discovery adds a metadata watch per namespaced resource with create, list, watch and delete; no second one for the kinds already followed', async () => {
    const { cache, discover } = routeHarness<ResourceQuotaEvent>(quotaRoutes, { controllers: ['resourcequota'] }, { rest: fakeDiscovery(cluster) });
    const before = cache.paths.length;
    await discover();
    expect(cache.store(RS_PATH)).toBeDefined();
    expect(cache.store('/apis/apps/v1/controllerrevisions')).toBeUndefined(); // no create: not quotable
    expect(cache.store('/apis/example.com/v1/widgets')).toBeUndefined(); // cluster-scoped
    expect(cache.store('/api/v1/events')).toBeUndefined(); // ignored, as upstream's quota does
    expect(cache.paths.length).toBe(before + 1);
    await discover(); // rediscovery adds nothing twice
    expect(cache.paths.length).toBe(before + 1);
  });

  test('a ReplicaSet created or deleted recounts in full the quotas of its namespace that count ReplicaSets, and only those', async () => {
    const { sent, h, discover } = routeHarness<ResourceQuotaEvent>(quotaRoutes, { controllers: ['resourcequota'] }, { rest: fakeDiscovery(cluster) });
    await discover();
    h(RQ).relisted([quota('counts', { 'count/replicasets.apps': '5' }), quota('pods-only', { pods: '5' }), quota('elsewhere', { 'count/replicasets.apps': '5' }, { ns: 'b' })], '3');
    h(RS_PATH).relisted([], '3');
    sent.length = 0;
    h(RS_PATH).event('ADDED', rsObj('r1'));
    expect(byId(sent)).toEqual([['a/counts', { all: true }]]);
    sent.length = 0;
    h(RS_PATH).event('MODIFIED', { ...rsObj('r1'), metadata: { ...rsObj('r1').metadata, resourceVersion: '3' } } as KubeObject);
    expect(sent).toEqual([]); // an update moves no count
    h(RS_PATH).event('DELETED', rsObj('r1'));
    expect(byId(sent)).toEqual([['a/counts', { all: true }]]);
  });
});
