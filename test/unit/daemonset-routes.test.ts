import { daemonSetRoutes, shrinkDaemonSetEvent } from '../../activities/daemonset/routes';
import { SIGNAL_BUDGET_BYTES } from '../../activities/informers/signaller';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { DaemonSetEvent } from '../../workflows/daemonset/types';
import { daemonSetWorkflow, mergeDaemonSetEvents } from '../../workflows/daemonset/workflow';
import { routeHarness } from '../support/routes';

const harness = () => routeHarness<DaemonSetEvent>(daemonSetRoutes, { controllers: ['daemonset'], tuning: { resyncMs: 7 } });

const ds = (name: string, o: { rv?: string; image?: string; selector?: Record<string, string> } = {}): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: `u-${name}`, resourceVersion: o.rv ?? '1', generation: 1 },
  spec: {
    selector: { matchLabels: o.selector ?? { app: name } },
    template: { metadata: { labels: o.selector ?? { app: name } }, spec: { nodeSelector: { role: 'agent' }, containers: [{ name: 'c', image: o.image ?? 'i:1' }] } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
  },
  status: {},
} as unknown as KubeObject);

const node = (name: string, labels: Record<string, string>, o: { rv?: string; taints?: object[]; ready?: string } = {}): KubeObject => ({
  metadata: { name, uid: `n-${name}`, resourceVersion: o.rv ?? '1', labels },
  spec: { taints: o.taints ?? [] },
  status: { conditions: [{ type: 'Ready', status: o.ready ?? 'True' }] },
} as unknown as KubeObject);

const pod = (name: string, o: { owner?: string; labels?: Record<string, string>; node?: string; rv?: string } = {}): KubeObject => ({
  metadata: {
    namespace: 'ns', name, uid: `p-${name}`, resourceVersion: o.rv ?? '1', labels: o.labels ?? { app: 'agent' },
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: o.owner, uid: `u-${o.owner}`, controller: true }] } : {}),
  },
  spec: { nodeName: o.node ?? 'a' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
} as unknown as KubeObject);

const listAll = (h: ReturnType<typeof harness>['h'], objs: { ds?: KubeObject[]; nodes?: KubeObject[]; pods?: KubeObject[] }) => {
  h(RESOURCES.nodes).relisted(objs.nodes ?? [], '1');
  h(RESOURCES.pods).relisted(objs.pods ?? [], '1');
  h(RESOURCES.controllerRevisions).relisted([], '1');
  h(RESOURCES.daemonSets).relisted(objs.ds ?? [], '1');
};

describe('daemonset routes', () => {
  test('once everything is listed, each DaemonSet gets every node\'s verdict and its pods, on its own workflow', () => {
    const { sent, h } = harness();
    listAll(h, { ds: [ds('agent')], nodes: [node('a', { role: 'agent' }), node('b', {})], pods: [pod('x', { owner: 'agent' }), pod('orphan'), pod('other', { labels: { app: 'db' } })] });
    expect(sent).toHaveLength(1);
    expect(sent[0].target).toMatchObject({ controller: 'daemonset', workflow: daemonSetWorkflow, kind: 'DaemonSet', workflowId: 'daemonset/ns/agent' });
    const e = sent[0].event;
    expect(e.full).toBe(true);
    expect(e.verdicts).toEqual({ a: { shouldRun: true, shouldContinueRunning: true }, b: { shouldRun: false, shouldContinueRunning: false } });
    expect(e.pods!.map((p) => p.name).sort()).toEqual(['orphan', 'x']);
  });

  test('a DaemonSet the route throws on at the end of a list leaves the ones after it their full event', () => {
    const { sent, h } = harness();
    // no API server would admit it: the selector's matchExpressions is not a list
    const bad = ds('bad');
    (bad.spec as { selector: Record<string, unknown> }).selector.matchExpressions = 5;
    listAll(h, { ds: [bad, ds('agent')], nodes: [node('a', { role: 'agent' })], pods: [pod('orphan')] });
    expect(sent.map((s) => [s.target.workflowId, s.event.full])).toEqual([['daemonset/ns/agent', true]]);
  });

  test('a node\'s labels or taints changing send the verdicts that changed; a status heartbeat sends nothing', () => {
    const { sent, h } = harness();
    listAll(h, { ds: [ds('agent')], nodes: [node('a', { role: 'agent' })] });
    sent.length = 0;
    h(RESOURCES.nodes).event('MODIFIED', node('a', { role: 'agent' }, { rv: '2', ready: 'False' }));
    expect(sent).toEqual([]);
    h(RESOURCES.nodes).event('MODIFIED', node('a', { role: 'agent' }, { rv: '3', taints: [{ key: 'k', effect: 'NoExecute' }] }));
    expect(sent.map((s) => s.event)).toEqual([{ verdicts: { a: { shouldRun: false, shouldContinueRunning: false } } }]);
    h(RESOURCES.nodes).event('ADDED', node('b', { role: 'agent' }));
    h(RESOURCES.nodes).event('DELETED', node('a', { role: 'agent' }, { rv: '4' }));
    expect(sent.slice(1).map((s) => s.event)).toEqual([{ verdicts: { b: { shouldRun: true, shouldContinueRunning: true } } }, { nodesGone: ['a'] }]);
  });

  test('a pod goes to its controller; an orphan to the DaemonSets whose selector matches; a pod leaving is gone for it', () => {
    const { sent, h } = harness();
    listAll(h, { ds: [ds('agent'), ds('db', { selector: { app: 'db' } })] });
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('x', { owner: 'agent' }));
    h(RESOURCES.pods).event('ADDED', pod('o', { labels: { app: 'db' } }));
    expect(sent.map((s) => [s.target.workflowId, s.event.pods?.map((p) => p.name)])).toEqual([['daemonset/ns/agent', ['x']], ['daemonset/ns/db', ['o']]]);
    sent.length = 0;
    h(RESOURCES.pods).event('MODIFIED', pod('o', { labels: { app: 'web' }, rv: '2' }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([['daemonset/ns/db', { podsGone: ['p-o'] }]]);
  });

  test('a template change sends everything again; a status write only the DaemonSet', () => {
    const { sent, h } = harness();
    listAll(h, { ds: [ds('agent')], nodes: [node('a', { role: 'agent' })] });
    sent.length = 0;
    h(RESOURCES.daemonSets).event('MODIFIED', ds('agent', { rv: '2' }));
    expect(sent[0].event.full).toBeUndefined();
    h(RESOURCES.daemonSets).event('MODIFIED', ds('agent', { rv: '3', image: 'i:2' }));
    expect(sent[1].event.full).toBe(true);
    h(RESOURCES.daemonSets).event('DELETED', ds('agent', { rv: '4' }));
    expect(sent[2].event).toEqual({ dsGone: true });
  });
});

describe('daemonset routes: an event too large for a payload', () => {
  test('a DaemonSet on thousands of nodes has a full event past the signal budget, which goes out as a look again', () => {
    const { sent, h } = harness();
    const nodes = Array.from({ length: 6000 }, (_, i) => node(`node-${String(i).padStart(5, '0')}`, { role: 'agent' }));
    const pods = nodes.map((n, i) => pod(`agent-${i}`, { owner: 'agent', node: n.metadata!.name }));
    listAll(h, { ds: [ds('agent', { selector: { app: 'agent' } })], nodes, pods });
    const { target, event } = sent.find((x) => x.event.full)!;
    expect(Object.keys(event.verdicts ?? {})).toHaveLength(6000);
    expect(Buffer.byteLength(JSON.stringify(event))).toBeGreaterThan(SIGNAL_BUDGET_BYTES);
    expect(target.shrink).toBe(shrinkDaemonSetEvent);
    expect(target.shrink!(event)).toEqual({ lookAgain: true });
  });

  test('a look again is kept through merges until a full event supersedes it', () => {
    const delta: DaemonSetEvent = { verdicts: { a: { shouldRun: true, shouldContinueRunning: true } } };
    expect(mergeDaemonSetEvents(delta, { lookAgain: true })).toEqual({ lookAgain: true });
    expect(mergeDaemonSetEvents({ lookAgain: true }, delta)).toMatchObject({ lookAgain: true, verdicts: delta.verdicts });
    expect(mergeDaemonSetEvents({ lookAgain: true }, { full: true, verdicts: {}, pods: [], revisions: [] }).lookAgain).toBeUndefined();
    expect(mergeDaemonSetEvents({ lookAgain: true }, { dsGone: true })).toEqual({ dsGone: true });
  });
});
