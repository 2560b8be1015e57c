import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { nodeLifecycleRoutes } from '../../activities/node-lifecycle/routes';
import { taintEvictionRoutes } from '../../activities/taint-eviction/routes';
import { ttlRoutes } from '../../activities/ttl/routes';
import type { NodeLifecycleEvent } from '../../workflows/node-lifecycle/types';
import type { TaintEvictionEvent } from '../../workflows/taint-eviction/workflow';
import type { TtlEvent } from '../../workflows/ttl/workflow';
import { routeHarness } from '../support/routes';

const node = (name: string, o: { taints?: Array<{ key: string; effect: string; value?: string }>; ready?: string; heartbeat?: string; ttl?: string; rv?: string } = {}): KubeObject =>
  ({
    metadata: { name, uid: `n-${name}`, resourceVersion: o.rv ?? '1', creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'topology.kubernetes.io/zone': 'z', 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'linux' },
      ...(o.ttl !== undefined ? { annotations: { 'node.alpha.kubernetes.io/ttl': o.ttl } } : {}) },
    spec: { ...(o.taints ? { taints: o.taints } : {}) },
    status: { conditions: o.ready ? [{ type: 'Ready', status: o.ready, lastHeartbeatTime: o.heartbeat ?? 'h1', lastTransitionTime: 't' }] : [] },
  } as unknown as KubeObject);

const pod = (name: string, nodeName: string, tolerations: object[] = [], rv = '1'): KubeObject =>
  ({ metadata: { namespace: 'a', name, uid: `p-${name}`, resourceVersion: rv }, spec: { nodeName, tolerations, containers: [] },
    status: { conditions: [{ type: 'Ready', status: 'True' }] } } as unknown as KubeObject);

const NOEXEC = { key: 'k', effect: 'NoExecute' };

/** An eviction event without the sender's clock stamp, which every one carries. */
const unstamped = (e: unknown) => {
  const { at, ...rest } = e as { at?: number };
  expect(typeof at).toBe('number');
  return rest;
};

describe('taint-eviction routes', () => {
  const harness = () => routeHarness<TaintEvictionEvent>(taintEvictionRoutes, { controllers: ['taint-eviction'] });

  test('a node with NoExecute taints sends its taints and every pod bound to it; an untainted node sends nothing', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([pod('p1', 'n1', [{ operator: 'Exists' }]), pod('p2', 'n2')], '1');
    h(RESOURCES.nodes).relisted([node('n1', { taints: [NOEXEC, { key: 's', effect: 'NoSchedule' }] }), node('n2')], '1');
    expect(sent.map((s) => [s.target.workflowId, unstamped(s.event)])).toEqual([['taint-eviction/n1', { node: { uid: 'n-n1', taints: [NOEXEC],
      pods: [{ namespace: 'a', name: 'p1', uid: 'p-p1', tolerations: [{ operator: 'Exists' }] }] } }]]);
  });

  test('nodes listed before pods (a restarted replica) send nothing until the pods are listed: no countdown is cancelled for a pod not yet seen', () => {
    const { sent, h } = harness();
    h(RESOURCES.nodes).relisted([node('n1', { taints: [NOEXEC] })], '1');
    expect(sent).toEqual([]);
    h(RESOURCES.pods).relisted([pod('p1', 'n1', [{ operator: 'Exists' }])], '1');
    expect(sent.map((s) => unstamped(s.event))).toEqual([{ node: { uid: 'n-n1', taints: [NOEXEC], pods: [{ namespace: 'a', name: 'p1', uid: 'p-p1', tolerations: [{ operator: 'Exists' }] }] } }]);
  });

  test('watched: pods on a tainted node come and go; the taints going sends the empty set; heartbeats send nothing', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([], '1');
    h(RESOURCES.nodes).relisted([node('n1', { taints: [NOEXEC] }), node('n2')], '1');
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('p3', 'n1', [], '2'));
    h(RESOURCES.pods).event('ADDED', pod('p4', 'n2', [], '3'));
    h(RESOURCES.nodes).event('MODIFIED', node('n1', { taints: [NOEXEC], ready: 'True', heartbeat: 'h2', rv: '4' }));
    h(RESOURCES.pods).event('DELETED', pod('p3', 'n1', [], '5'));
    h(RESOURCES.nodes).event('MODIFIED', node('n1', { rv: '6' }));
    expect(sent.map((s) => unstamped(s.event))).toEqual([
      { pods: [{ namespace: 'a', name: 'p3', uid: 'p-p3', tolerations: [] }] },
      { podsDeleted: ['a/p3'] },
      { node: { uid: 'n-n1', taints: [], pods: [] } },
    ]);
  });
});

describe('ttl routes', () => {
  test('the node count and each node\'s annotation when it appears or changes; nothing for other updates', () => {
    const { sent, h } = routeHarness<TtlEvent>(ttlRoutes, { controllers: ['ttl'] });
    h(RESOURCES.nodes).relisted([node('n1', { ttl: '0' }), node('n2')], '1');
    h(RESOURCES.nodes).event('MODIFIED', node('n1', { ttl: '0', ready: 'True', rv: '2' }));
    h(RESOURCES.nodes).event('MODIFIED', node('n1', { ttl: '15', rv: '3' }));
    h(RESOURCES.nodes).event('DELETED', node('n2', { rv: '4' }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['ttl/test-queue', { count: 2, nodes: [['n1', '0']] }],
      ['ttl/test-queue', { count: 2, nodes: [['n2', null]] }],
      ['ttl/test-queue', { count: 2, nodes: [['n1', '15']] }],
      ['ttl/test-queue', { count: 1, nodesGone: ['n2'] }],
    ]);
  });
});

describe('node lifecycle routes', () => {
  const harness = () => routeHarness<NodeLifecycleEvent>(nodeLifecycleRoutes, { controllers: ['nodelifecycle'], flags: { 'node-monitor-grace-period': 20_000 } });
  const lease = (name: string, renew: string, rv: string): KubeObject =>
    ({ metadata: { namespace: 'kube-node-lease', name, uid: `l-${name}`, resourceVersion: rv }, spec: { renewTime: renew } } as unknown as KubeObject);

  test('a node is reported once, then again only when its report changes: silence past the grace period, a taint', () => {
    const { sent, h, family } = harness();
    h(RESOURCES.leases).relisted([lease('n1', '2026-01-01T00:00:00Z', '1')], '1');
    h(RESOURCES.pods).relisted([], '1');
    h(RESOURCES.nodes).relisted([node('n1', { ready: 'True' })], '1');
    expect(sent).toHaveLength(1);
    expect(sent[0].target.workflowId).toBe('nodelifecycle/test-queue');
    expect(sent[0].event.nodes!.n1).toMatchObject({ uid: 'n-n1', ready: 'True', stale: false, unreachableTaint: false,
      noScheduleOutOfSync: false, labelsOutOfSync: false });
    // a tick inside the grace period, and a lease renewal: nothing new to say
    family!.periodic!.run(Date.now() + 10_000);
    h(RESOURCES.leases).event('MODIFIED', lease('n1', '2026-01-01T00:00:10Z', '2'));
    expect(sent).toHaveLength(1);
    // silent for longer than the grace period
    family!.periodic!.run(Date.now() + 21_000);
    expect(sent).toHaveLength(2);
    expect(sent[1].event.nodes!.n1).toMatchObject({ stale: true, heartbeat: 'h1' });
    // the unreachable NoExecute taint, as the workflow writes it
    h(RESOURCES.nodes).event('MODIFIED', node('n1', { ready: 'Unknown', taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }], rv: '3' }));
    expect(sent[2].event.nodes!.n1).toMatchObject({ ready: 'Unknown', unreachableTaint: true, noScheduleOutOfSync: true });
    h(RESOURCES.nodes).event('DELETED', node('n1', { rv: '4' }));
    expect(sent[3].event).toEqual({ nodesGone: { n1: 'n-n1' } });
  });

  test('a pod bound to a node that is not Ready is sent to be marked not ready', () => {
    const { sent, h } = harness();
    h(RESOURCES.leases).relisted([], '1');
    h(RESOURCES.pods).relisted([], '1');
    h(RESOURCES.nodes).relisted([node('n1', { ready: 'Unknown' }), node('n2', { ready: 'True' })], '1');
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('p1', 'n1', [], '2'));
    h(RESOURCES.pods).event('ADDED', pod('p2', 'n2', [], '3'));
    // besides each node's report saying it now has pods
    expect(sent.filter((s) => !s.event.nodes).map((s) => s.event)).toEqual([{ pods: [{ namespace: 'a', name: 'p1', node: 'n1' }] }]);
    expect(sent.filter((s) => s.event.nodes).map((s) => Object.entries(s.event.nodes!).map(([n, r]) => [n, r.hasPods]))).toEqual([[['n1', true]], [['n2', true]]]);
  });
});

test('node lifecycle routes: a node\'s report says whether pods are bound to it, once the pods are listed, and goes again when that changes', () => {
  const { sent, h } = routeHarness<NodeLifecycleEvent>(nodeLifecycleRoutes, { controllers: ['nodelifecycle'] });
  h(RESOURCES.leases).relisted([], '1');
  h(RESOURCES.nodes).relisted([node('n1', { ready: 'True' }), node('n2', { ready: 'True' })], '1');
  const hasPods = () => sent.map((s) => Object.entries(s.event.nodes ?? {}).map(([n, r]) => `${n}:${r.hasPods}`)).flat();
  // not known before the pods are listed: the workflow then lists a node's pods
  expect(hasPods()).toEqual(['n1:undefined', 'n2:undefined']);
  sent.length = 0;
  h(RESOURCES.pods).relisted([pod('p1', 'n1')], '1');
  expect(hasPods()).toEqual(['n1:true', 'n2:false']);
  sent.length = 0;
  // a second pod on n1 changes nothing; n2's first pod and n1's pods leaving do
  h(RESOURCES.pods).event('ADDED', pod('p2', 'n1', [], '2'));
  h(RESOURCES.pods).event('ADDED', pod('p3', 'n2', [], '3'));
  h(RESOURCES.pods).event('DELETED', pod('p1', 'n1', [], '4'));
  h(RESOURCES.pods).event('DELETED', pod('p2', 'n1', [], '5'));
  expect(hasPods()).toEqual(['n2:true', 'n1:false']);
});

test('node lifecycle routes: a relist sends every node again, changed or not', () => {
  const { sent, h } = routeHarness<NodeLifecycleEvent>(nodeLifecycleRoutes, { controllers: ['nodelifecycle'] });
  h(RESOURCES.leases).relisted([], '1');
  h(RESOURCES.pods).relisted([], '1');
  h(RESOURCES.nodes).relisted([node('n1', { ready: 'True' })], '1');
  h(RESOURCES.nodes).relisted([node('n1', { ready: 'True' })], '2');
  expect(sent.map((s) => Object.keys(s.event.nodes ?? {}))).toEqual([['n1'], ['n1']]);
});
