import { serviceEndpointsRoutes } from '../../activities/service-endpoints/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { mergeServicePodsEvents } from '../../workflows/service-endpoints/state';
import type { ServicePodsEvent } from '../../workflows/service-endpoints/types';
import { resourceOfPath } from '../../workers/metrics';
import { routeHarness } from '../support/routes';

const SVC = RESOURCES.services;
const PODS = RESOURCES.pods;
const NODES = RESOURCES.nodes;
const EP = RESOURCES.endpoints;
const SLICES = RESOURCES.endpointSlices;
const ZONE = 'topology.kubernetes.io/zone';

function harness(controllers = ['endpoint', 'endpointslice'], flags?: Record<string, number>) {
  const t = routeHarness<ServicePodsEvent>(serviceEndpointsRoutes, { controllers, flags });
  const wid = (s: (typeof t.sent)[number]) => s.target.workflowId ?? '';
  const to = (id: string) => t.sent.filter((s) => wid(s) === id).map((s) => s.event);
  const ids = () => t.sent.map(wid).sort();
  return { ...t, to, ids };
}

const svc = (name: string, selector?: Record<string, string>, o: { ns?: string; rv?: string; uid?: string } = {}): KubeObject =>
  ({ metadata: { namespace: o.ns ?? 'a', name, uid: o.uid ?? `u-${name}`, resourceVersion: o.rv ?? '1' }, spec: { selector, ports: [{ port: 80 }] } } as KubeObject);
const pod = (name: string, labels: Record<string, string>, o: { rv?: string; ns?: string; ready?: boolean; node?: string } = {}): KubeObject =>
  ({ metadata: { namespace: o.ns ?? 'a', name, uid: `p-${name}`, resourceVersion: o.rv ?? '1', labels }, spec: { nodeName: o.node ?? 'n1', containers: [] },
    status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] } } as unknown as KubeObject);
const node = (name: string, zone?: string, rv = '1'): KubeObject =>
  ({ metadata: { name, uid: `n-${name}`, resourceVersion: rv, labels: zone ? { [ZONE]: zone } : {} }, spec: { podCIDR: '10.0.0.0/24' }, status: { capacity: { cpu: '4' } } } as unknown as KubeObject);
const slice = (name: string, service: string, managedBy = 'endpointslice-controller.k8s.io'): KubeObject =>
  ({ metadata: { namespace: 'a', name, uid: `s-${name}`, resourceVersion: '1', labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': managedBy } },
    addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }] } as unknown as KubeObject);
const endpoints = (name: string): KubeObject =>
  ({ metadata: { namespace: 'a', name, uid: `e-${name}`, resourceVersion: '1' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] } as unknown as KubeObject);

describe('service routes: lists', () => {
  test('after both lists, every Service gets its matching pods, to both controllers', () => {
    const { sent, h, to } = harness();
    h(SVC).relisted([svc('web', { app: 'web' }), svc('db', { app: 'db' }), svc('ext')]);
    expect(sent).toHaveLength(0); // pods not listed yet
    h(PODS).relisted([pod('w1', { app: 'web' }), pod('w2', { app: 'web', x: 'y' }), pod('d1', { app: 'db' }), pod('other', { app: 'web' }, { ns: 'b' })]);
    const web = to('endpoints/a/web');
    expect(web).toHaveLength(1);
    expect(web[0].relist).toBe(true);
    expect(web[0].service?.uid).toBe('u-web');
    expect(web[0].pods?.map((p) => p.name).sort()).toEqual(['w1', 'w2']);
    expect(to('endpointslice/a/web')).toEqual(web);
    expect(to('endpoints/a/ext')[0].pods).toEqual([]);
    expect(sent.every((s) => !s.urgent)).toBe(true);
  });

  test('the pods listed first: the Services list sends everything, and the pods list sends nothing alone', () => {
    const { sent, h, to } = harness();
    h(PODS).relisted([pod('w1', { app: 'web' })]);
    expect(sent).toHaveLength(0);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    expect(to('endpoints/a/web')).toEqual([expect.objectContaining({ relist: true, pods: [expect.objectContaining({ name: 'w1' })] })]);
  });

  test('a later list of either resends everything; a Service gone meanwhile is told it was deleted', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(SVC).relisted([svc('web', { app: 'web' }), svc('old', { app: 'x' })]);
    h(PODS).relisted([pod('w1', { app: 'web' }), pod('w2', { app: 'web' })]);
    sent.length = 0;
    h(PODS).relisted([pod('w1', { app: 'web' }, { rv: '5' })]);
    expect(to('endpoints/a/web')).toEqual([expect.objectContaining({ relist: true, pods: [expect.objectContaining({ name: 'w1', resourceVersion: '5' })] })]);
    expect(to('endpoints/a/old')).toEqual([expect.objectContaining({ relist: true, pods: [] })]);
    sent.length = 0;
    h(SVC).relisted([svc('web', { app: 'web' })]);
    expect(to('endpoints/a/old')).toEqual([{ serviceDeletedUid: 'u-old' }]);
    expect(to('endpoints/a/web')).toEqual([expect.objectContaining({ relist: true })]);
  });

  test('Service events before the pods are listed wait for that list', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(SVC).relisted([]);
    h(SVC).event('ADDED', svc('web', { app: 'web' }));
    expect(sent).toHaveLength(0);
    h(PODS).relisted([pod('w1', { app: 'web' })]);
    expect(to('endpoints/a/web')).toEqual([expect.objectContaining({ relist: true, pods: [expect.objectContaining({ name: 'w1' })] })]);
  });
});

describe('service routes: watch events', () => {
  test('a pod goes to the Services selecting it before or after, and an unchanged pod to none', () => {
    const { sent, h } = harness();
    h(SVC).relisted([svc('web', { app: 'web' }), svc('canary', { app: 'web', track: 'canary' }), svc('db', { app: 'db' })]);
    h(PODS).relisted([]);
    sent.length = 0;
    h(PODS).event('ADDED', pod('w1', { app: 'web', track: 'canary' }));
    const wid = (s: (typeof sent)[number]) => s.target.workflowId ?? '';
    expect(sent.filter((s) => wid(s).startsWith('endpoints/')).map(wid).sort()).toEqual(['endpoints/a/canary', 'endpoints/a/web']);
    sent.length = 0;
    h(PODS).event('MODIFIED', pod('w1', { app: 'web', track: 'canary' }, { rv: '2' }));
    expect(sent).toHaveLength(0);
    h(PODS).event('MODIFIED', pod('w1', { app: 'db' }, { rv: '3' }));
    const byId = new Map(sent.filter((s) => wid(s).startsWith('endpoints/')).map((s) => [wid(s), s.event]));
    expect(byId.get('endpoints/a/db')?.pods?.[0].name).toBe('w1');
    expect(byId.get('endpoints/a/web')?.podsGone).toEqual(['p-w1']);
    expect(byId.get('endpoints/a/canary')?.podsGone).toEqual(['p-w1']);
  });

  test('a deleted pod is gone from the Services that selected it; a pod of another namespace reaches none', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([pod('w1', { app: 'web' })]);
    sent.length = 0;
    h(PODS).event('ADDED', pod('w9', { app: 'web' }, { ns: 'b' }));
    expect(sent).toHaveLength(0);
    h(PODS).event('DELETED', pod('w1', { app: 'web' }, { rv: '4' }));
    expect(to('endpoints/a/web')).toEqual([{ podsGone: ['p-w1'] }]);
  });

  test('a Service deleted, or with a new selector, is told so; another change sends the Service alone', () => {
    const { sent, h } = harness(['endpoint']);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([pod('w1', { app: 'web' }), pod('d1', { app: 'db' })]);
    sent.length = 0;
    h(SVC).event('MODIFIED', svc('web', { app: 'web' }, { rv: '2' }));
    expect(sent.map((s) => s.event)).toEqual([{ service: expect.objectContaining({ resourceVersion: '2' }) }]);
    sent.length = 0;
    h(SVC).event('MODIFIED', svc('web', { app: 'db' }, { rv: '3' }));
    expect(sent[0].event.relist).toBe(true);
    expect(sent[0].event.pods?.map((p) => p.name)).toEqual(['d1']);
    sent.length = 0;
    h(SVC).event('DELETED', svc('web', { app: 'db' }, { rv: '4' }));
    expect(sent.map((s) => s.event)).toEqual([{ serviceDeletedUid: 'u-web' }]);
    sent.length = 0;
    h(SVC).event('ADDED', svc('api', { app: 'web' }));
    expect(sent.map((s) => s.event)).toEqual([expect.objectContaining({ relist: true, pods: [expect.objectContaining({ name: 'w1' })] })]);
  });

  test('what the workflows are started with: IDs, kind, UID, --max-endpoints-per-slice only for the slice controller', () => {
    const { sent, h } = harness(['endpoint', 'endpointslice'], { 'max-endpoints-per-slice': 7 });
    h(PODS).relisted([]);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    const targets = sent.map((s) => ({ id: s.target.workflowId, controller: s.target.controller, kind: s.target.kind, uid: s.target.uid, args: s.target.args }));
    expect(targets).toEqual([
      { id: 'endpoints/a/web', controller: 'endpoint', kind: 'Service', uid: 'u-web', args: { namespace: 'a', name: 'web', uid: 'u-web', tuning: undefined } },
      { id: 'endpointslice/a/web', controller: 'endpointslice', kind: 'Service', uid: 'u-web', args: { namespace: 'a', name: 'web', uid: 'u-web', tuning: undefined, maxEndpointsPerSlice: 7 } },
    ]);
  });
});

describe('service routes: node zones', () => {
  test('a pod carries its Node\'s zone; a zone change reaches the Services of the Node\'s pods, other node changes nothing', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(NODES).relisted([node('n1', 'z1'), node('n2', 'z2')]);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([pod('w1', { app: 'web' }, { node: 'n1' }), pod('w2', { app: 'web' }, { node: 'n2' })]);
    expect(to('endpoints/a/web')[0].pods?.map((p) => [p.name, p.zone]).sort()).toEqual([['w1', 'z1'], ['w2', 'z2']]);
    sent.length = 0;
    h(NODES).event('MODIFIED', node('n1', 'z1', '2'));
    expect(sent).toHaveLength(0);
    h(NODES).event('MODIFIED', node('n1', 'z3', '3'));
    expect(to('endpoints/a/web')).toEqual([{ pods: [expect.objectContaining({ name: 'w1', zone: 'z3' })] }]);
    sent.length = 0;
    h(NODES).event('DELETED', node('n2', 'z2', '4'));
    expect(to('endpoints/a/web')).toEqual([{ pods: [expect.not.objectContaining({ zone: expect.anything() })] }]);
    expect(to('endpoints/a/web')[0].pods?.[0].name).toBe('w2');
  });

  test('Nodes listed after the pods give the pods on them their zones', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([pod('w1', { app: 'web' }, { node: 'n1' })]);
    sent.length = 0;
    h(NODES).relisted([node('n1', 'z1'), node('n9', 'z9')]);
    expect(to('endpoints/a/web')).toEqual([{ pods: [expect.objectContaining({ name: 'w1', zone: 'z1' })] }]);
  });

  test('Nodes are kept as metadata only', () => {
    const { h, cache } = harness(['endpoint']);
    h(NODES).relisted([node('n1', 'z1')]);
    expect(Object.keys([...cache.store(NODES)!.list()][0]).sort()).toEqual(['metadata']);
  });
});

describe('service routes: deleted Endpoints and slices', () => {
  test('deleted Endpoints of a selecting Service are written again by the endpoints controller alone', () => {
    const { sent, h, to } = harness();
    h(SVC).relisted([svc('web', { app: 'web' }), svc('ext')]);
    h(PODS).relisted([]);
    h(EP).relisted([endpoints('web'), endpoints('ext')]);
    sent.length = 0;
    h(EP).event('MODIFIED', { ...endpoints('web'), metadata: { ...endpoints('web').metadata, resourceVersion: '2' } });
    h(EP).event('DELETED', endpoints('ext'));
    expect(sent).toHaveLength(0);
    h(EP).event('DELETED', endpoints('web'));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['endpoints/a/web']);
    expect(to('endpoints/a/web')).toEqual([{ service: expect.objectContaining({ uid: 'u-web' }) }]);
  });

  test('Endpoints gone while the watch was down count as deleted', () => {
    const { sent, h, to } = harness(['endpoint']);
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([]);
    h(EP).relisted([endpoints('web')]);
    sent.length = 0;
    h(EP).relisted([]);
    expect(to('endpoints/a/web')).toEqual([{ service: expect.objectContaining({ uid: 'u-web' }) }]);
  });

  test('a deleted slice of ours makes the endpointslice workflow start over; others\' slices do not', () => {
    const { sent, h, to } = harness();
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([pod('w1', { app: 'web' })]);
    h(SLICES).relisted([slice('web-1', 'web'), slice('web-x', 'web', 'someone-else')]);
    sent.length = 0;
    h(SLICES).event('DELETED', slice('web-x', 'web', 'someone-else'));
    h(SLICES).event('MODIFIED', { ...slice('web-1', 'web'), metadata: { ...slice('web-1', 'web').metadata, resourceVersion: '2' } });
    expect(sent).toHaveLength(0);
    h(SLICES).event('DELETED', slice('web-1', 'web'));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['endpointslice/a/web']);
    expect(to('endpointslice/a/web')).toEqual([expect.objectContaining({ relist: true, service: expect.objectContaining({ uid: 'u-web' }), pods: [expect.objectContaining({ name: 'w1' })] })]);
  });

  test('a slice of ours gone while the watch was down counts as deleted; Endpoints and slices are kept as metadata only', () => {
    const { sent, h, to, cache } = harness();
    h(SVC).relisted([svc('web', { app: 'web' })]);
    h(PODS).relisted([]);
    h(EP).relisted([endpoints('web')]);
    h(SLICES).relisted([slice('web-1', 'web')]);
    expect(Object.keys([...cache.store(EP)!.list()][0])).toEqual(['metadata']);
    expect(Object.keys([...cache.store(SLICES)!.list()][0])).toEqual(['metadata']);
    sent.length = 0;
    h(SLICES).relisted([]);
    expect(to('endpointslice/a/web')).toEqual([expect.objectContaining({ relist: true, pods: [] })]);
    expect(sent).toHaveLength(1);
  });

  test('only the enabled controllers watch what they need', () => {
    const onlyEndpoints = harness(['endpoint']);
    expect(onlyEndpoints.cache.store(SLICES)).toBeUndefined();
    expect(onlyEndpoints.cache.store(EP)).toBeDefined();
    const onlySlices = harness(['endpointslice']);
    expect(onlySlices.cache.store(EP)).toBeUndefined();
    onlySlices.h(PODS).relisted([]);
    onlySlices.h(SVC).relisted([svc('web', { app: 'web' })]);
    expect(onlySlices.ids()).toEqual(['endpointslice/a/web']);
    expect(harness(['job']).family).toBeUndefined();
  });
});

test('merging: a relist replaces what came before; pod changes accumulate', () => {
  const p1 = { uid: '1', name: 'a' } as never;
  const p2 = { uid: '2', name: 'b' } as never;
  expect(mergeServicePodsEvents({ pods: [p1] }, { podsGone: ['1'] })).toEqual({ podsGone: ['1'] });
  expect(mergeServicePodsEvents({ pods: [p1] }, { pods: [p2] }).pods).toHaveLength(2);
  expect(mergeServicePodsEvents({ pods: [p1], relist: true }, { pods: [p2] })).toEqual({ pods: [p1, p2], relist: true });
  expect(mergeServicePodsEvents({ pods: [p1] }, { pods: [p2], relist: true })).toEqual({ pods: [p2], relist: true });
});

test('API metrics name the resource a path is about', () => {
  expect(resourceOfPath('/api/v1/namespaces/a/pods/x')).toBe('pods');
  expect(resourceOfPath('/api/v1/namespaces/a/endpoints/web')).toBe('endpoints');
  expect(resourceOfPath('/apis/discovery.k8s.io/v1/namespaces/a/endpointslices?labelSelector=x')).toBe('endpointslices');
  expect(resourceOfPath('/api/v1/namespaces/a')).toBe('namespaces');
  expect(resourceOfPath('/api/v1/namespaces/a/finalize')).toBe('finalize');
  expect(resourceOfPath('/apis/apps/v1/replicasets?watch=1')).toBe('replicasets');
  expect(resourceOfPath('/api/v1/pods')).toBe('pods');
  expect(resourceOfPath('/apis')).toBe('other');
});
