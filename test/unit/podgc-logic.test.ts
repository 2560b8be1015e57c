import { podGcNodeView, podGcPodView } from '../../activities/podgc/activities';
import {
  advanceQuarantine,
  compareForGc,
  dueNodes,
  failedStatusPatch,
  isPodTerminated,
  selectPodsForGc,
  SelectionOptions,
  toTarget,
} from '../../workflows/podgc/logic';
import { ORPHAN_CONDITION, PodGcNodeView, PodGcPodView, PodGcSelection } from '../../workflows/podgc/types';

// ---------------------------------------------------------------------------------------------
// fixtures: pods created an hour apart in the order given, as upstream's tests make them

let clock = 0;
beforeEach(() => {
  clock = Date.parse('2026-01-01T00:00:00Z');
});

function pod(name: string, opts: { phase?: string; reason?: string; node?: string; deleting?: boolean } = {}): PodGcPodView {
  clock += 3600_000;
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    phase: opts.phase ?? '',
    ...(opts.reason ? { reason: opts.reason } : {}),
    nodeName: opts.node ?? 'node',
    creationTimestamp: new Date(clock).toISOString(),
    ...(opts.deleting ? { deletionTimestamp: '2026-06-01T00:00:00Z' } : {}),
    generation: 0,
  };
}

const node = (name: string, ready = true, outOfService = false): PodGcNodeView => ({ name, ready, outOfService });

const opts = (o: Partial<SelectionOptions> = {}): SelectionOptions => ({ terminatedPodThreshold: 0, dueNodes: [], maxTargets: 500, ...o });

const names = (targets: Array<{ name: string }>) => targets.map((t) => t.name).sort();
const all = (s: PodGcSelection) => [...s.terminated, ...s.terminatingOutOfService, ...s.orphaned, ...s.terminatingUnscheduled];

// ---------------------------------------------------------------------------------------------

describe('terminated pods beyond the threshold (upstream TestGCTerminated)', () => {
  test.each([
    ['two oldest of three terminated go', [['a', 'Failed'], ['b', 'Succeeded'], ['c', 'Failed']], 1, ['a', 'b']],
    ['threshold 0 turns it off', [['a', 'Failed'], ['b', 'Succeeded']], 0, []],
    ['a negative threshold turns it off too', [['a', 'Failed'], ['b', 'Succeeded']], -1, []],
    ['running pods do not count', [['a', 'Running'], ['b', 'Succeeded'], ['c', 'Failed']], 1, ['b']],
    ['the oldest goes', [['a', 'Failed'], ['b', 'Succeeded']], 1, ['a']],
    ['under the threshold nothing goes', [['a', 'Failed'], ['b', 'Succeeded']], 5, []],
    ['evicted first, whatever its age', [['a', 'Failed'], ['b', 'Succeeded'], ['c', 'Failed', 'Evicted']], 1, ['a', 'c']],
    ['evicted first, running ignored', [['a', 'Running'], ['b', 'Succeeded'], ['c', 'Failed', 'Evicted']], 1, ['c']],
  ])('%s', (_n, spec, threshold, want) => {
    const pods = (spec as string[][]).map(([name, phase, reason]) => pod(name, { phase, reason }));
    const s = selectPodsForGc(pods, [node('node')], opts({ terminatedPodThreshold: threshold as number }));
    expect(names(s.terminated)).toEqual(want);
    expect(names(all(s))).toEqual(want);
  });

  test('Pending, Running and Unknown are not terminated; any other phase, even none, is', () => {
    expect(['Pending', 'Running', 'Unknown'].map(isPodTerminated)).toEqual([false, false, false]);
    expect(['Succeeded', 'Failed', ''].map(isPodTerminated)).toEqual([true, true, true]);
  });

  test('pods being deleted still count against the threshold and take deletion slots', () => {
    const pods = [pod('old', { phase: 'Succeeded', deleting: true }), pod('mid', { phase: 'Succeeded' }), pod('new', { phase: 'Succeeded' })];
    const s = selectPodsForGc(pods, [], opts({ terminatedPodThreshold: 1 }));
    expect(s.terminatedCount).toBe(3);
    expect(names(s.terminated)).toEqual(['mid', 'old']);
    expect(s.terminated.find((t) => t.name === 'old')?.terminating).toBe(true);
  });

  test('same creation second: by name, across namespaces', () => {
    const a = { ...pod('b'), namespace: 'x', creationTimestamp: '2026-01-01T00:00:00Z' };
    const b = { ...pod('a'), namespace: 'y', creationTimestamp: '2026-01-01T00:00:00Z' };
    expect([a, b].sort(compareForGc).map((p) => p.name)).toEqual(['a', 'b']);
  });
});

describe('terminating pods on out-of-service nodes (upstream TestGCTerminating)', () => {
  test('only pods being deleted on not-ready nodes that carry the out-of-service taint', () => {
    const nodes = [
      node('worker-0', false, true),
      node('worker-1', false),
      node('worker-2', true),
      node('worker-3', false, true),
      node('worker-4', false, true),
      node('worker-5', false, true),
    ];
    const pods: PodGcPodView[] = [];
    for (let i = 0; i <= 5; i++) {
      const w = `worker-${i}`;
      pods.push(
        pod(`a${i}`, { node: w }),
        pod(`b${i}`, { node: w, deleting: true }),
        pod(`c${i}`, { node: w, phase: 'Pending' }),
        pod(`d${i}`, { node: w, phase: 'Running' }),
        pod(`e${i}`, { node: w, phase: 'Unknown' }),
      );
    }
    const s = selectPodsForGc(pods, nodes, opts());
    expect(names(s.terminatingOutOfService)).toEqual(['b0', 'b3', 'b4', 'b5']);
    expect(names(all(s))).toEqual(['b0', 'b3', 'b4', 'b5']);
    // none of them is Succeeded or Failed: each is marked Failed first
    expect(s.terminatingOutOfService.every((t) => failedStatusPatch(t, undefined, 'now') !== undefined)).toBe(true);
  });

  test('pods in any phase go; only those not yet Succeeded or Failed are patched', () => {
    const pods = [
      pod('a', { node: 'worker', phase: 'Running', deleting: true }),
      pod('b', { node: 'worker', phase: 'Failed', deleting: true }),
      pod('c', { node: 'worker', phase: 'Succeeded', deleting: true }),
    ];
    const s = selectPodsForGc(pods, [node('worker', false, true)], opts());
    expect(names(s.terminatingOutOfService)).toEqual(['a', 'b', 'c']);
    expect(s.terminatingOutOfService.filter((t) => failedStatusPatch(t, undefined, 'now')).map((t) => t.name)).toEqual(['a']);
  });

  test('a node missing from the list is not out of service (the orphan rules apply instead)', () => {
    const s = selectPodsForGc([pod('a', { node: 'gone', deleting: true })], [], opts());
    expect(s.terminatingOutOfService).toEqual([]);
    expect(s.missingNodes).toEqual(['gone']);
  });
});

describe('terminating pods never scheduled (upstream TestGCUnscheduledTerminating)', () => {
  test('unscheduled and being deleted, in any phase', () => {
    const pods = [
      pod('a', { phase: 'Failed', deleting: true, node: '' }),
      pod('b', { phase: 'Succeeded', deleting: true, node: '' }),
      pod('c', { phase: 'Running', deleting: true, node: '' }),
    ];
    expect(names(selectPodsForGc(pods, [], opts()).terminatingUnscheduled)).toEqual(['a', 'b', 'c']);
  });

  test('not when not being deleted, or when scheduled', () => {
    const pods = [
      pod('a', { phase: 'Failed', node: '' }),
      pod('b', { phase: 'Succeeded', node: 'node' }),
      pod('c', { phase: 'Running', deleting: true, node: 'node' }),
    ];
    expect(all(selectPodsForGc(pods, [node('node')], opts()))).toEqual([]);
  });
});

describe('orphans and the quarantine of missing nodes (upstream TestGCOrphaned)', () => {
  const Q = 40_000;
  const T0 = 1_000_000;

  /**
   * Two passes as upstream's test runs them: the first quarantines, the second (after `delay`)
   * selects orphans of the nodes that came due, which a live check then confirms.
   */
  function twoPasses(pods: PodGcPodView[], first: PodGcNodeView[], second: PodGcNodeView[], delay: number) {
    const s1 = selectPodsForGc(pods, first, opts({ dueNodes: dueNodes({}, T0) }));
    const q = advanceQuarantine({}, T0, [], s1.missingNodes, Q);
    const due = dueNodes(q, T0 + delay);
    const s2 = selectPodsForGc(pods, second, opts({ dueNodes: due }));
    return { s1, q, due, s2 };
  }

  test('nodes in the list: nothing quarantined, nothing deleted', () => {
    const pods = [pod('a', { node: 'existing1', phase: 'Running' }), pod('b', { node: 'existing2', phase: 'Failed' })];
    const nodes = [node('existing1'), node('existing2')];
    const r = twoPasses(pods, nodes, nodes, 2 * Q);
    expect(r.q).toEqual({});
    expect(all(r.s1)).toEqual([]);
    expect(all(r.s2)).toEqual([]);
  });

  test('no nodes at all: after the quarantine every pod on the node is an orphan, running ones are marked', () => {
    const pods = [pod('a', { node: 'deleted', phase: 'Failed' }), pod('b', { node: 'deleted', phase: 'Succeeded' }), pod('c', { node: 'deleted', phase: 'Running' })];
    const r = twoPasses(pods, [], [], 2 * Q);
    expect(all(r.s1)).toEqual([]);
    expect(r.q).toEqual({ deleted: T0 + Q });
    expect(r.due).toEqual(['deleted']);
    expect(names(r.s2.orphaned)).toEqual(['a', 'b', 'c']);
    expect(r.s2.orphaned.filter((t) => failedStatusPatch(t, ORPHAN_CONDITION, 'now')).map((t) => t.name)).toEqual(['c']);
  });

  test('quarantine not over: nothing yet', () => {
    const r = twoPasses([pod('a', { node: 'deleted', phase: 'Failed' })], [], [], Q / 2);
    expect(r.due).toEqual([]);
    expect(all(r.s2)).toEqual([]);
  });

  test('only pods of the missing node go', () => {
    const pods = [
      pod('a', { node: 'deleted', phase: 'Failed' }),
      pod('b', { node: 'existing', phase: 'Failed' }),
      pod('c', { node: 'deleted', phase: 'Succeeded' }),
      pod('d', { node: 'deleted', phase: 'Running' }),
    ];
    const r = twoPasses(pods, [node('existing')], [node('existing')], 2 * Q);
    expect(names(r.s2.orphaned)).toEqual(['a', 'c', 'd']);
  });

  test('a node that shows up in the list by the time it comes due keeps its pods', () => {
    const r = twoPasses([pod('a', { node: 'node', phase: 'Failed' })], [], [node('node')], 2 * Q);
    expect(r.due).toEqual(['node']);
    expect(r.s2.orphaned).toEqual([]);
  });

  test('a node that leaves the list only now starts its quarantine now', () => {
    const r = twoPasses([pod('a', { node: 'node', phase: 'Succeeded' })], [node('node')], [], 2 * Q);
    expect(r.due).toEqual([]);
    expect(r.s2.orphaned).toEqual([]);
    expect(r.s2.missingNodes).toEqual(['node']);
  });

  test('quarantine bookkeeping: a waiting node keeps its first deadline; due nodes start over only if still missing', () => {
    let q = advanceQuarantine({}, 0, [], ['n1'], Q);
    q = advanceQuarantine(q, 20_000, dueNodes(q, 20_000), ['n1', 'n2'], Q);
    expect(q).toEqual({ n1: Q, n2: 20_000 + Q });
    const due = dueNodes(q, Q);
    expect(due).toEqual(['n1']);
    // n1's pods were deleted in that pass; n2 came back
    q = advanceQuarantine(q, Q, due, ['n2'], Q);
    expect(q).toEqual({ n2: 20_000 + Q });
    q = advanceQuarantine(q, 60_000, dueNodes(q, 60_000), [], Q);
    expect(q).toEqual({});
    // still missing when due: quarantined afresh
    expect(advanceQuarantine({ n3: 10 }, 100, ['n3'], ['n3'], Q)).toEqual({ n3: 100 + Q });
  });
});

describe('marking a pod Failed before the forced delete (upstream TestGCInspectingPatchedPodBeforeDeletion)', () => {
  test('an orphan still running gets phase Failed and a DisruptionTarget condition, guarded by its UID', () => {
    const t = toTarget(pod('testPod', { node: 'deletedNode', phase: 'Running' }));
    expect(failedStatusPatch(t, ORPHAN_CONDITION, '2026-02-02T00:00:00Z')).toEqual({
      metadata: { uid: 'uid-testPod' },
      status: {
        phase: 'Failed',
        conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists',
          lastTransitionTime: '2026-02-02T00:00:00Z' }],
      },
    });
  });

  test('observedGeneration follows the pod generation; an existing True condition keeps its time', () => {
    const t = { ...toTarget(pod('p', { phase: 'Pending' })), generation: 3, disruptionTarget: { status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' } };
    const patch = failedStatusPatch(t, ORPHAN_CONDITION, 'now');
    expect(patch?.status.observedGeneration).toBe(3);
    expect(patch?.status.conditions?.[0]).toMatchObject({ lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 3 });
  });

  test('other reasons mark Failed without a condition; Succeeded and Failed pods are not patched', () => {
    expect(failedStatusPatch(toTarget(pod('p', { phase: 'Unknown' })), undefined, 'now')).toEqual({ metadata: { uid: 'uid-p' }, status: { phase: 'Failed' } });
    expect(failedStatusPatch(toTarget(pod('q', { phase: 'Succeeded' })), ORPHAN_CONDITION, 'now')).toBeUndefined();
    expect(failedStatusPatch(toTarget(pod('r', { phase: 'Failed' })), ORPHAN_CONDITION, 'now')).toBeUndefined();
  });
});

describe('keeping each listing small', () => {
  test('a pod picked by two rules is returned once, under the first', () => {
    const pods = [pod('a', { node: 'gone', phase: 'Failed' }), pod('b', { node: 'gone', phase: 'Failed' })];
    const s = selectPodsForGc(pods, [], opts({ terminatedPodThreshold: 1, dueNodes: ['gone'] }));
    expect(names(s.terminated)).toEqual(['a']);
    expect(names(s.orphaned)).toEqual(['b']);
  });

  test('over the budget: pods not yet being deleted first, and a truncated flag', () => {
    const pods = [
      pod('t1', { phase: 'Succeeded', deleting: true }),
      pod('t2', { phase: 'Succeeded' }),
      pod('t3', { phase: 'Succeeded' }),
      pod('t4', { phase: 'Succeeded' }),
      pod('u1', { node: '', deleting: true }),
    ];
    const s = selectPodsForGc(pods, [node('node')], opts({ terminatedPodThreshold: 1, maxTargets: 2 }));
    expect(names(all(s))).toEqual(['t2', 't3']);
    expect(s.truncated).toBe(true);
    const roomy = selectPodsForGc(pods, [node('node')], opts({ terminatedPodThreshold: 1, maxTargets: 4 }));
    expect(names(all(roomy))).toEqual(['t1', 't2', 't3', 't4']);
    expect(roomy.truncated).toBe(false);
  });

  test('only terminating pods left over: not truncated (they are retried next period, not at once)', () => {
    const pods = [pod('u1', { node: '', deleting: true }), pod('u2', { node: '', deleting: true })];
    const s = selectPodsForGc(pods, [], opts({ maxTargets: 1 }));
    expect(names(all(s))).toEqual(['u1']);
    expect(s.truncated).toBe(false);
  });
});

describe('projections', () => {
  test('pod and node views read what the rules need', () => {
    const p = podGcPodView({
      metadata: { namespace: 'ns', name: 'p', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z', generation: 2 },
      spec: { nodeName: 'n1' },
      status: { phase: 'Failed', reason: 'Evicted', conditions: [{ type: 'DisruptionTarget', status: 'True', lastTransitionTime: 'x' }] },
    });
    expect(p).toEqual({ namespace: 'ns', name: 'p', uid: 'u', phase: 'Failed', reason: 'Evicted', nodeName: 'n1',
      creationTimestamp: '2026-01-01T00:00:00Z', generation: 2, disruptionTarget: { status: 'True', lastTransitionTime: 'x' } });
    expect(podGcNodeView({ metadata: { name: 'n' }, spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] },
      status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } })).toEqual({ name: 'n', ready: false, outOfService: true });
    expect(podGcNodeView({ metadata: { name: 'n' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }))
      .toEqual({ name: 'n', ready: true, outOfService: false });
  });
});
