import { dueEvictions, matchingTolerations, minToleration, nextFireAt, planPod, tolerates } from '../../workflows/taint-eviction/logic';
import { mergeTaintEvictionEvents } from '../../workflows/taint-eviction/workflow';

const taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const pod = (tolerations: object[]) => ({ namespace: 'ns', name: 'p', uid: 'u', tolerations });

describe('tolerations, as core/v1 matches them', () => {
  test('empty key with Exists tolerates everything; empty effect matches every effect', () => {
    expect(tolerates({ operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ key: taint.key, operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ key: taint.key, operator: 'Exists', effect: 'NoSchedule' }, taint)).toBe(false);
  });
  test('Equal (or no operator) needs the same value; Gt and Lt, alpha and off, match nothing', () => {
    expect(tolerates({ key: 'k', value: 'v' }, { key: 'k', value: 'v', effect: 'NoExecute' })).toBe(true);
    expect(tolerates({ key: 'k', operator: 'Equal', value: 'w' }, { key: 'k', value: 'v', effect: 'NoExecute' })).toBe(false);
    expect(tolerates({ key: 'k', operator: 'Equal' }, { key: 'k', effect: 'NoExecute' })).toBe(true);
    expect(tolerates({ key: 'k', operator: 'Gt', value: '1' }, { key: 'k', value: '5', effect: 'NoExecute' })).toBe(false);
  });
  test('every taint needs a toleration; the first covering one is used', () => {
    const a = { key: 'a', operator: 'Exists', tolerationSeconds: 30 };
    const any = { operator: 'Exists' };
    expect(matchingTolerations([{ key: 'a', effect: 'NoExecute' }, { key: 'b', effect: 'NoExecute' }], [a, any])).toEqual({ allTolerated: true, used: [a, any] });
    expect(matchingTolerations([{ key: 'b', effect: 'NoExecute' }], [a])).toEqual({ allTolerated: false, used: [] });
  });
  test('the shortest tolerationSeconds wins; none means forever; zero or less means now', () => {
    expect(minToleration([{ tolerationSeconds: 30 }, { tolerationSeconds: 10 }, {}])).toBe(10_000);
    expect(minToleration([{}, {}])).toBeUndefined();
    expect(minToleration([{ tolerationSeconds: 30 }, { tolerationSeconds: -1 }])).toBe(0);
  });
});

describe('planPod, as upstream processPodOnNode', () => {
  const now = 1_000_000;
  test('a pod that does not tolerate goes now; a running countdown is cancelled first', () => {
    expect(planPod([taint], pod([]), undefined, now)).toEqual({ cancel: false, schedule: { createdAtMs: now, fireAtMs: now } });
    expect(planPod([taint], pod([]), { createdAtMs: 5, fireAtMs: now + 5 }, now)).toEqual({ cancel: true, schedule: { createdAtMs: now, fireAtMs: now } });
  });
  test('tolerating forever cancels; no taints cancel', () => {
    expect(planPod([taint], pod([{ operator: 'Exists' }]), { createdAtMs: 0, fireAtMs: 9 }, now)).toEqual({ cancel: true });
    expect(planPod([], pod([]), { createdAtMs: 0, fireAtMs: 9 }, now)).toEqual({ cancel: true });
    expect(planPod([taint], pod([{ operator: 'Exists' }]), undefined, now)).toEqual({ cancel: false });
  });
  test('a countdown starts at the shortest toleration, and one already running is kept', () => {
    const p = pod([{ operator: 'Exists', tolerationSeconds: 20 }]);
    expect(planPod([taint], p, undefined, now)).toEqual({ cancel: false, schedule: { createdAtMs: now, fireAtMs: now + 20_000 } });
    expect(planPod([taint], p, { createdAtMs: now - 5000, fireAtMs: now + 15_000 }, now)).toEqual({ cancel: false });
    // planned again at the same workflow instant (a replay re-planned it so and recorded a cancel Event)
    const first = planPod([taint], p, undefined, now).schedule;
    expect(planPod([taint], p, first, now)).toEqual({ cancel: false });
  });
  test('due countdowns come soonest first; the next one is the earliest', () => {
    const s = new Map([['a', { createdAtMs: 0, fireAtMs: 30 }], ['b', { createdAtMs: 0, fireAtMs: 10 }], ['c', { createdAtMs: 0, fireAtMs: 99 }]]);
    expect(dueEvictions(s, 50)).toEqual(['b', 'a']);
    expect(nextFireAt(s)).toBe(10);
  });
});

describe('mergeTaintEvictionEvents', () => {
  const p1 = { namespace: 'ns', name: 'a', uid: '1', tolerations: [] };
  const p2 = { namespace: 'ns', name: 'b', uid: '2', tolerations: [] };
  test('a node event replaces what came before it; pod news after it folds into its pod list', () => {
    const node = { uid: 'n', taints: [taint], pods: [p1] };
    expect(mergeTaintEvictionEvents({ pods: [p2] }, { node })).toEqual({ node });
    expect(mergeTaintEvictionEvents({ node }, { pods: [p2], podsDeleted: ['ns/a'] })).toEqual({ node: { ...node, pods: [p2] }, podsDeleted: ['ns/a'] });
  });
  test('a pod deleted and then seen again is live; node gone wins', () => {
    expect(mergeTaintEvictionEvents({ podsDeleted: ['ns/a'] }, { pods: [p1] })).toEqual({ pods: [p1] });
    expect(mergeTaintEvictionEvents({ pods: [p1] }, { nodeGone: true })).toEqual({ nodeGone: true });
  });
});
