import type { Signaller, Target } from '../../activities/informers/signaller';
import { serviceRoutes } from '../../activities/service-endpoints/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { mergeServicePodsEvents } from '../../workflows/service-endpoints/state';
import type { ServicePodsEvent } from '../../workflows/service-endpoints/types';
import { resourceOfPath } from '../../workers/metrics';

function harness() {
  const sent: Array<{ id: string; event: ServicePodsEvent }> = [];
  const signaller = { queue: (t: Target, event: ServicePodsEvent) => sent.push({ id: t.workflowId ?? '', event }) } as unknown as Signaller;
  const family = serviceRoutes({ controllers: ['endpoint', 'endpointslice'] }, signaller)!;
  const h = (p: string) => family.handlers.get(p)!;
  return { sent, h };
}

const svc = (name: string, selector?: Record<string, string>, ns = 'a'): KubeObject =>
  ({ metadata: { namespace: ns, name, uid: `u-${name}`, resourceVersion: '1' }, spec: { selector, ports: [{ port: 80 }] } } as KubeObject);
const pod = (name: string, labels: Record<string, string>, rv = '1', ns = 'a', ready = true): KubeObject =>
  ({ metadata: { namespace: ns, name, uid: `p-${name}`, resourceVersion: rv, labels }, spec: { nodeName: 'n1', containers: [] },
    status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } } as unknown as KubeObject);

describe('service routes', () => {
  test('after both lists, every Service gets its matching pods, to both controllers', () => {
    const { sent, h } = harness();
    h('/api/v1/services').relisted([svc('web', { app: 'web' }), svc('db', { app: 'db' }), svc('ext')]);
    expect(sent).toHaveLength(0); // pods not listed yet
    h('/api/v1/pods').relisted([pod('w1', { app: 'web' }), pod('w2', { app: 'web', x: 'y' }), pod('d1', { app: 'db' }), pod('other', { app: 'web' }, '1', 'b')]);
    const web = sent.filter((s) => s.id === 'endpoints/a/web');
    expect(web).toHaveLength(1);
    expect(web[0].event.relist).toBe(true);
    expect(web[0].event.pods?.map((p) => p.name).sort()).toEqual(['w1', 'w2']);
    expect(sent.filter((s) => s.id === 'endpointslice/a/web')).toHaveLength(1);
    expect(sent.find((s) => s.id === 'endpoints/a/ext')?.event.pods).toEqual([]);
  });

  test('a pod goes to the Services selecting it before or after, and an unchanged pod to none', () => {
    const { sent, h } = harness();
    h('/api/v1/services').relisted([svc('web', { app: 'web' }), svc('canary', { app: 'web', track: 'canary' }), svc('db', { app: 'db' })]);
    h('/api/v1/pods').relisted([]);
    sent.length = 0;
    h('/api/v1/pods').event('ADDED', pod('w1', { app: 'web', track: 'canary' }));
    expect(sent.filter((s) => s.id.startsWith('endpoints/')).map((s) => s.id).sort()).toEqual(['endpoints/a/canary', 'endpoints/a/web']);
    sent.length = 0;
    h('/api/v1/pods').event('MODIFIED', pod('w1', { app: 'web', track: 'canary' }, '2'));
    expect(sent).toHaveLength(0);
    h('/api/v1/pods').event('MODIFIED', pod('w1', { app: 'db' }, '3'));
    const byId = new Map(sent.filter((s) => s.id.startsWith('endpoints/')).map((s) => [s.id, s.event]));
    expect(byId.get('endpoints/a/db')?.pods?.[0].name).toBe('w1');
    expect(byId.get('endpoints/a/web')?.podsGone).toEqual(['p-w1']);
    expect(byId.get('endpoints/a/canary')?.podsGone).toEqual(['p-w1']);
  });

  test('a Service deleted, or with a new selector, is told so', () => {
    const { sent, h } = harness();
    h('/api/v1/services').relisted([svc('web', { app: 'web' })]);
    h('/api/v1/pods').relisted([pod('w1', { app: 'web' }), pod('d1', { app: 'db' })]);
    sent.length = 0;
    h('/api/v1/services').event('MODIFIED', svc('web', { app: 'db' }));
    expect(sent[0].event.relist).toBe(true);
    expect(sent[0].event.pods?.map((p) => p.name)).toEqual(['d1']);
    sent.length = 0;
    h('/api/v1/services').event('DELETED', svc('web', { app: 'db' }));
    expect(sent[0].event.serviceDeletedUid).toBe('u-web');
  });

  test('merging: a relist replaces what came before; pod changes accumulate', () => {
    const p1 = { uid: '1', name: 'a' } as never;
    const p2 = { uid: '2', name: 'b' } as never;
    expect(mergeServicePodsEvents({ pods: [p1] }, { podsGone: ['1'] })).toEqual({ podsGone: ['1'] });
    expect(mergeServicePodsEvents({ pods: [p1] }, { pods: [p2] }).pods).toHaveLength(2);
    expect(mergeServicePodsEvents({ pods: [p1], relist: true }, { pods: [p2] })).toEqual({ pods: [p1, p2], relist: true });
    expect(mergeServicePodsEvents({ pods: [p1] }, { pods: [p2], relist: true })).toEqual({ pods: [p2], relist: true });
  });
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
