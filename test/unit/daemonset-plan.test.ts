import { daemonSetRevisionData } from '../../workflows/common/controller-history';
import { backoffKey, manage, planHistory, revisionHash, revisionsToDelete, rollingUpdate, statusCounts } from '../../workflows/daemonset/plan';
import type { DaemonPodView, DaemonSetView, NodeVerdict } from '../../workflows/daemonset/types';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const template = { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'agent:1' }] } };

const ds = (o: Partial<DaemonSetView> = {}): DaemonSetView => ({
  namespace: 'ns', name: 'agent', uid: 'u-ds', resourceVersion: '1', generation: 1, deleting: false, selector: { matchLabels: { app: 'agent' } },
  template, updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, maxSurge: 0 }, minReadySeconds: 0, revisionHistoryLimit: 10,
  status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 1 }, ...o,
});

let seq = 0;
const pod = (node: string, o: Partial<DaemonPodView> = {}): DaemonPodView => ({
  name: `agent-${node}-${seq++}`, uid: `u${seq}`, node, scheduled: true, hash: 'h1', phase: 'Running', ready: true, readySince: iso(T0 - 60_000),
  creationTimestamp: iso(T0 - 120_000 + seq), deleting: false, ...o,
});

const all = (names: string[], v: NodeVerdict = { shouldRun: true, shouldContinueRunning: true }) => new Map(names.map((n) => [n, v]));

describe('manage (podsShouldBeOnNode)', () => {
  test('nodes that want the daemon and have none get one; nodes that turned it away lose theirs', () => {
    const verdicts = all(['a', 'b', 'c']);
    verdicts.set('d', { shouldRun: false, shouldContinueRunning: false });
    const onD = pod('d');
    const p = manage(ds(), verdicts, [pod('a'), onD], 'h1', T0, new Map());
    expect(p.nodesNeedingPods).toEqual(['b', 'c']);
    expect(p.podsToDelete).toEqual([onD.name]);
  });
  test('one pod per node: all but the oldest go', () => {
    const older = pod('a', { creationTimestamp: iso(T0 - 500_000) });
    const newer = pod('a', { creationTimestamp: iso(T0 - 100_000) });
    expect(manage(ds(), all(['a']), [newer, older], 'h1', T0, new Map()).podsToDelete).toEqual([newer.name]);
  });
  test('a failed pod is killed with a backoff that doubles; a succeeded one is deleted with its Event', () => {
    const failed = pod('a', { phase: 'Failed' });
    const first = manage(ds(), all(['a']), [failed], 'h1', T0, new Map());
    expect(first.podsToDelete).toEqual([failed.name]);
    expect(first.events).toEqual([{ type: 'Warning', reason: 'FailedDaemonPod', message: `Found failed daemon pod ns/${failed.name} on node a, will try to kill it` }]);
    expect(first.backoffs.get(backoffKey(ds(), 'a'))).toEqual({ delayMs: 1000, lastUpdateMs: T0 });
    const again = manage(ds(), all(['a']), [pod('a', { phase: 'Failed' })], 'h1', T0 + 500, first.backoffs);
    expect(again.podsToDelete).toEqual([]);
    expect(again.requeueAfterMs).toBe(1000);
    const later = manage(ds(), all(['a']), [pod('a', { phase: 'Failed' })], 'h1', T0 + 1500, first.backoffs);
    expect(later.backoffs.get(backoffKey(ds(), 'a'))).toEqual({ delayMs: 2000, lastUpdateMs: T0 + 1500 });
    const done = pod('b', { phase: 'Succeeded' });
    expect(manage(ds(), all(['b']), [done], 'h1', T0, new Map()).events[0].reason).toBe('SucceededDaemonPod');
  });
  test('a NoSchedule-tainted node keeps its pod but gets no new one; an unscheduled pod for a gone node is deleted', () => {
    const stay = pod('a');
    const orphaned = pod('gone', { scheduled: false });
    const p = manage(ds(), all(['a', 'b'], { shouldRun: false, shouldContinueRunning: true }), [stay, orphaned], 'h1', T0, new Map());
    expect(p.nodesNeedingPods).toEqual([]);
    expect(p.podsToDelete).toEqual([orphaned.name]);
  });
  test('surging: old and new share a node until the new one is available', () => {
    const surge = ds({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 0, maxSurge: 1 } });
    const old = pod('a', { hash: 'h0', creationTimestamp: iso(T0 - 500_000) });
    const fresh = pod('a', { hash: 'h1', ready: false, readySince: undefined });
    expect(manage(surge, all(['a']), [old, fresh], 'h1', T0, new Map()).podsToDelete).toEqual([]);
    expect(manage(surge, all(['a']), [old, { ...fresh, ready: true, readySince: iso(T0) }], 'h1', T0, new Map()).podsToDelete).toEqual([old.name]);
  });
});

describe('rollingUpdate', () => {
  test('maxUnavailable 1: one old available pod at a time goes; an unavailable new pod holds the rest', () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, { hash: 'h0' }));
    expect(rollingUpdate(ds(), all(['a', 'b', 'c']), pods, 'h1', T0).podsToDelete).toEqual([pods[0].name]);
    const progressing = [pod('a', { hash: 'h1', ready: false }), pods[1], pods[2]];
    expect(rollingUpdate(ds(), all(['a', 'b', 'c']), progressing, 'h1', T0).podsToDelete).toEqual([]);
    // an old pod that is not available is replaced at once, whatever the budget
    const broken = [pod('a', { hash: 'h0', ready: false }), pods[1], pods[2]];
    expect(rollingUpdate(ds(), all(['a', 'b', 'c']), broken, 'h1', T0).podsToDelete).toEqual([broken[0].name]);
  });
  test('maxSurge 1: a new pod goes onto one node beside the old; an available new pod retires the old one', () => {
    const surge = ds({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 0, maxSurge: 1 } });
    const pods = ['a', 'b'].map((n) => pod(n, { hash: 'h0' }));
    expect(rollingUpdate(surge, all(['a', 'b']), pods, 'h1', T0)).toEqual({ podsToDelete: [], nodesToCreate: ['a'] });
    const surged = [...pods, pod('a', { hash: 'h1' })];
    expect(rollingUpdate(surge, all(['a', 'b']), surged, 'h1', T0)).toEqual({ podsToDelete: [pods[0].name], nodesToCreate: ['b'] });
  });
  test('both limits 0 counts as maxUnavailable 1, as upstream defaults it', () => {
    const pods = ['a', 'b'].map((n) => pod(n, { hash: 'h0' }));
    expect(rollingUpdate(ds({ updateStrategy: { type: 'RollingUpdate', maxUnavailable: 0, maxSurge: 0 } }), all(['a', 'b']), pods, 'h1', T0).podsToDelete).toHaveLength(1);
  });
});

describe('status', () => {
  test('desired, current, misscheduled, ready, updated, available and unavailable, by each node\'s oldest pod', () => {
    const verdicts = all(['a', 'b', 'c', 'd']);
    verdicts.set('x', { shouldRun: false, shouldContinueRunning: true });
    const pods = [pod('a'), pod('b', { hash: 'h0' }), pod('c', { ready: false }), pod('x')];
    expect(statusCounts(ds({ minReadySeconds: 0 }), verdicts, pods, 'h1', T0)).toEqual({
      desiredNumberScheduled: 4, currentNumberScheduled: 3, numberMisscheduled: 1, numberReady: 2, updatedNumberScheduled: 2, numberAvailable: 2, numberUnavailable: 2,
    });
    // minReadySeconds 120: ready for 60 s is not yet available
    expect(statusCounts(ds({ minReadySeconds: 120 }), verdicts, pods, 'h1', T0).numberAvailable).toBe(0);
  });
});

describe('history (constructHistory, cleanupHistory)', () => {
  const data = daemonSetRevisionData(template);
  test('the first sync creates revision 1, named by upstream\'s template hash', () => {
    const h = planHistory(ds(), []);
    expect(h.create).toEqual({ name: `agent-${revisionHash(ds())}`, hash: revisionHash(ds()), revision: 1 });
  });
  test('a template edited back to an older revision renumbers that revision past the newest', () => {
    const h = planHistory(ds(), [
      { name: 'agent-1', revision: 1, hash: 'h1', data },
      { name: 'agent-2', revision: 2, hash: 'h2', data: '{"spec":{"template":{"$patch":"replace"}}}' },
    ]);
    expect(h.current?.name).toBe('agent-1');
    expect(h.bumpTo).toBe(3);
    expect(h.old.map((r) => r.name)).toEqual(['agent-2']);
  });
  test('duplicates of the current template: the newest is kept; unlabelled revisions take their name as hash', () => {
    const h = planHistory(ds(), [{ name: 'agent-x', revision: 4, data }, { name: 'agent-y', revision: 2, hash: 'y', data }]);
    expect(h.current).toMatchObject({ name: 'agent-x', hash: 'agent-x' });
    expect(h.duplicates).toEqual(['agent-y']);
    expect(h.unlabelled).toEqual(['agent-x']);
  });
  test('old revisions beyond the limit go, oldest first, unless a pod still runs them', () => {
    const old = [1, 2, 3, 4].map((r) => ({ name: `r${r}`, revision: r, hash: `h${r}`, data: `${r}` }));
    expect(revisionsToDelete(old, 2, [pod('a', { hash: 'h1' })])).toEqual(['r2', 'r3']);
    expect(revisionsToDelete(old, 4, [])).toEqual([]);
  });
});
