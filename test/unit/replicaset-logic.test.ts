import {
  DEFAULT_BURST_REPLICAS,
  MAX_NAME_LENGTH,
  NAME_SUFFIX_ALPHABET,
  REPLICA_FAILURE,
  calculateStatus,
  choosePodsToDelete,
  classifyPods,
  colocationRanks,
  controllerRefFor,
  filterActivePods,
  filterTerminatingPods,
  fnv1a64,
  formatTime,
  isControlledBy,
  isPodActive,
  isPodAvailable,
  isPodReady,
  isPodTerminating,
  logarithmicAgeRank,
  nextAvailabilityCheck,
  parseTime,
  planReplicas,
  podFromTemplate,
  podName,
  podSeq,
  SEQ_CATCH_UP_WINDOW,
  seqAfterNames,
  podTemplateError,
  rankPodsForDeletion,
  slowStartBatches,
  statusEqual,
} from '../../workflows/replicaset/logic';
import { selectorFromMap } from '../../workflows/common/selector';
import type { PodSummary, ReplicaOwner, ReplicaStatus } from '../../workflows/replicaset/types';
import type { OwnerRef } from '../../workflows/common/meta';

// ---------------------------------------------------------------------------------------------
// fixtures

const NOW = Date.parse('2025-06-01T12:00:00Z');
const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const ago = (ms: number): string => new Date(NOW - ms).toISOString();

const OWNER_UID = 'rs-uid-1';

function ownerRef(uid = OWNER_UID, controller = true): OwnerRef {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid, controller, blockOwnerDeletion: true };
}

let podCounter = 0;
function pod(overrides: Partial<PodSummary> = {}): PodSummary {
  podCounter++;
  return {
    namespace: 'default',
    name: `web-${podCounter}`,
    uid: `uid-${String(podCounter).padStart(4, '0')}`,
    resourceVersion: '1',
    creationTimestamp: ago(2 * HOUR),
    labels: { app: 'web' },
    ownerReferences: [ownerRef()],
    phase: 'Running',
    nodeName: 'node-1',
    ready: true,
    readySince: ago(HOUR),
    restartCount: 0,
    deletionCost: 0,
    ...overrides,
  };
}

function emptyStatus(): ReplicaStatus {
  return { replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0, observedGeneration: 0, conditions: [] };
}

function owner(overrides: Partial<ReplicaOwner> = {}): ReplicaOwner {
  return {
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    namespace: 'default',
    name: 'web',
    uid: OWNER_UID,
    resourceVersion: '10',
    generation: 3,
    replicas: 3,
    minReadySeconds: 0,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web', tier: 'frontend' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    },
    status: emptyStatus(),
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------

describe('time helpers', () => {
  test('parseTime: RFC 3339 to millis, absent/garbage to undefined', () => {
    expect(parseTime('2025-06-01T12:00:00Z')).toBe(NOW);
    expect(parseTime('2025-06-01T14:00:00+02:00')).toBe(NOW);
    expect(parseTime(undefined)).toBeUndefined();
    expect(parseTime('')).toBeUndefined();
    expect(parseTime('not a time')).toBeUndefined();
  });

  test('formatTime: whole seconds in UTC, sub-seconds truncated', () => {
    expect(formatTime(NOW)).toBe('2025-06-01T12:00:00Z');
    expect(formatTime(NOW + 999)).toBe('2025-06-01T12:00:00Z');
    expect(formatTime(new Date(NOW + 61_500))).toBe('2025-06-01T12:01:01Z');
  });
});

describe('pod state', () => {
  test.each([
    ['Running', undefined, true, false],
    ['Pending', undefined, true, false],
    ['Unknown', undefined, true, false],
    ['Succeeded', undefined, false, false],
    ['Failed', undefined, false, false],
    ['Running', '2025-06-01T11:00:00Z', false, true],
    ['Pending', '2025-06-01T11:00:00Z', false, true],
    ['Succeeded', '2025-06-01T11:00:00Z', false, false],
    ['Failed', '2025-06-01T11:00:00Z', false, false],
  ] as const)('phase %s deletion %s: active=%s terminating=%s', (phase, deletionTimestamp, active, terminating) => {
    const p = pod({ phase, deletionTimestamp });
    expect(isPodActive(p)).toBe(active);
    expect(isPodTerminating(p)).toBe(terminating);
  });

  test('filters', () => {
    const a = pod();
    const t = pod({ deletionTimestamp: ago(SEC) });
    const s = pod({ phase: 'Succeeded' });
    expect(filterActivePods([a, t, s])).toEqual([a]);
    expect(filterTerminatingPods([a, t, s])).toEqual([t]);
  });

  test('isPodAvailable', () => {
    expect(isPodReady(pod({ ready: false }))).toBe(false);
    // not ready is never available
    expect(isPodAvailable(pod({ ready: false, readySince: undefined }), 0, NOW)).toBe(false);
    // minReadySeconds 0: ready is enough, even without a transition time
    expect(isPodAvailable(pod({ readySince: undefined }), 0, NOW)).toBe(true);
    // minReadySeconds > 0 needs a known transition time
    expect(isPodAvailable(pod({ readySince: undefined }), 5, NOW)).toBe(false);
    expect(isPodAvailable(pod({ readySince: ago(4 * SEC) }), 5, NOW)).toBe(false);
    // exactly minReadySeconds is enough
    expect(isPodAvailable(pod({ readySince: ago(5 * SEC) }), 5, NOW)).toBe(true);
    expect(isPodAvailable(pod({ readySince: ago(5 * SEC) }), 5, new Date(NOW))).toBe(true);
    expect(isPodAvailable(pod({ readySince: ago(HOUR) }), 5, NOW)).toBe(true);
  });
});

describe('ownership', () => {
  test('isControlledBy compares the controller reference by UID', () => {
    const plain = { ...ownerRef(), controller: false };
    expect(isControlledBy(pod({ ownerReferences: [plain] }), { uid: OWNER_UID })).toBe(false);
    expect(isControlledBy(pod(), { uid: OWNER_UID })).toBe(true);
    expect(isControlledBy(pod(), { uid: 'someone-else' })).toBe(false);
  });

  test('controllerRefFor / RC', () => {
    expect(controllerRefFor(owner())).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web',
      uid: OWNER_UID,
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(controllerRefFor(owner({ kind: 'ReplicationController', apiVersion: 'v1' }))).toMatchObject({
      apiVersion: 'v1',
      kind: 'ReplicationController',
    });
  });

  const orphan = (o: Partial<PodSummary> = {}) => pod({ ownerReferences: [], ...o });

  test('classification of every kind of pod', () => {
    const owned = pod();
    const ownedTerminating = pod({ deletionTimestamp: ago(SEC) });
    const ownedSucceeded = pod({ phase: 'Succeeded' });
    const ownedMismatch = pod({ labels: { app: 'other' } });
    const ownedMismatchTerminating = pod({ labels: { app: 'other' }, deletionTimestamp: ago(SEC) });
    const ownedMismatchFailed = pod({ labels: { app: 'other' }, phase: 'Failed' });
    const orphanMatch = orphan();
    const orphanMatchPending = orphan({ phase: 'Pending', nodeName: undefined, ready: false });
    const orphanDeleting = orphan({ deletionTimestamp: ago(SEC) });
    const orphanFailed = orphan({ phase: 'Failed' });
    const orphanMismatch = orphan({ labels: { app: 'api' } });
    const orphanWithPlainRef = orphan({ ownerReferences: [{ ...ownerRef('gc-owner'), controller: false }] });
    const othersPod = pod({ ownerReferences: [ownerRef('another-rs')] });
    const otherNamespace = orphan({ namespace: 'kube-system' });

    const c = classifyPods(owner(), [
      owned,
      ownedTerminating,
      ownedSucceeded,
      ownedMismatch,
      ownedMismatchTerminating,
      ownedMismatchFailed,
      orphanMatch,
      orphanMatchPending,
      orphanDeleting,
      orphanFailed,
      orphanMismatch,
      orphanWithPlainRef,
      othersPod,
      otherNamespace,
    ]);
    expect(c.selectorError).toBeUndefined();
    expect(c.owned).toEqual([owned, ownedTerminating, ownedSucceeded]);
    expect(c.activeOwned).toEqual([owned]);
    expect(c.toAdopt).toEqual([orphanMatch, orphanMatchPending, orphanWithPlainRef]);
    expect(c.toRelease).toEqual([ownedMismatch]);
  });

  test('an owner being deleted neither adopts nor releases, but keeps what it owns', () => {
    const owned = pod();
    const mismatch = pod({ labels: { app: 'other' } });
    const o = orphan();
    const c = classifyPods(owner({ deletionTimestamp: ago(SEC) }), [owned, mismatch, o]);
    expect(c.owned).toEqual([owned]);
    expect(c.activeOwned).toEqual([owned]);
    expect(c.toAdopt).toEqual([]);
    expect(c.toRelease).toEqual([]);
  });

  test('ownership is by UID: a same-named owner with another UID does not own the pod', () => {
    const p = pod({ ownerReferences: [{ ...ownerRef('old-uid'), name: 'web' }] });
    const c = classifyPods(owner(), [p]);
    expect(c.owned).toEqual([]);
    expect(c.toAdopt).toEqual([]);
    expect(c.toRelease).toEqual([]);
  });

  test('an invalid selector classifies nothing and reports the error (owned pods are not released)', () => {
    const owned = pod();
    const c = classifyPods(owner({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } }), [owned, orphan()]);
    expect(c.selectorError).toMatch(/non-empty values/);
    expect(c.owned).toEqual([]);
    expect(c.toRelease).toEqual([]);
    expect(c.toAdopt).toEqual([]);
  });

  test('an empty selector matches (and adopts) every active orphan in the namespace', () => {
    const a = orphan({ labels: {} });
    const b = orphan({ labels: { anything: 'x' } });
    const c = classifyPods(owner({ selector: {} }), [a, b]);
    expect(c.toAdopt).toEqual([a, b]);
  });

  test('ReplicationController map selector', () => {
    const rc = owner({ kind: 'ReplicationController', apiVersion: 'v1', selector: selectorFromMap({ app: 'web' })! });
    const o = orphan();
    const other = orphan({ labels: { app: 'api' } });
    expect(classifyPods(rc, [o, other]).toAdopt).toEqual([o]);
  });
});

describe('deletion order', () => {
  // Each row: a must be deleted before b, decided by `rule`. Fixtures stack the later rules against a
  // where possible, so the row proves the rule takes precedence over what follows it.
  const rows: Array<{ rule: string; a: Partial<PodSummary>; b: Partial<PodSummary>; related?: Array<Partial<PodSummary>> }> = [
    {
      rule: '1 unassigned before assigned (beats phase, readiness, cost, age)',
      a: { nodeName: undefined, phase: 'Running', ready: true, deletionCost: 100, creationTimestamp: ago(10 * HOUR) },
      b: { nodeName: 'node-1', phase: 'Pending', ready: false, deletionCost: -100, creationTimestamp: ago(SEC) },
    },
    {
      rule: '1 empty-string node name counts as unassigned',
      a: { nodeName: '' },
      b: { nodeName: 'node-1', phase: 'Pending', ready: false },
    },
    {
      rule: '2 Pending before Unknown',
      a: { phase: 'Pending', ready: true, deletionCost: 100 },
      b: { phase: 'Unknown', ready: false, deletionCost: 0 },
    },
    {
      rule: '2 Unknown before Running',
      a: { phase: 'Unknown', ready: true, deletionCost: 100 },
      b: { phase: 'Running', ready: false },
    },
    {
      rule: '2 Pending before Running (both unassigned)',
      a: { phase: 'Pending', nodeName: undefined },
      b: { phase: 'Running', nodeName: undefined, ready: false, restartCount: 9 },
    },
    {
      rule: '3 not ready before ready',
      a: { ready: false, deletionCost: 100, creationTimestamp: ago(10 * HOUR) },
      b: { ready: true, deletionCost: 0, restartCount: 5, creationTimestamp: ago(SEC) },
    },
    {
      rule: '4 lower deletion cost first',
      a: { deletionCost: -5, nodeName: 'node-2' },
      b: { deletionCost: 0, nodeName: 'node-1', restartCount: 10, readySince: ago(SEC) },
      related: [{ nodeName: 'node-1' }, { nodeName: 'node-1' }, { nodeName: 'node-1' }],
    },
    {
      rule: '5 more colocated related pods first',
      a: { nodeName: 'node-1', readySince: ago(10 * HOUR), creationTimestamp: ago(20 * HOUR) },
      b: { nodeName: 'node-2', readySince: ago(SEC), restartCount: 10, creationTimestamp: ago(2 * SEC) },
      related: [{ nodeName: 'node-1' }, { nodeName: 'node-1' }, { nodeName: 'node-2' }],
    },
    {
      rule: '6 ready for less time first (different log2 buckets)',
      a: { readySince: ago(10 * SEC), creationTimestamp: ago(10 * HOUR), uid: 'zzz' },
      b: { readySince: ago(HOUR), restartCount: 3, creationTimestamp: ago(HOUR + SEC), uid: 'aaa' },
    },
    {
      rule: '6 ready with unknown transition time first',
      a: { readySince: undefined, uid: 'zzz' },
      b: { readySince: ago(SEC), restartCount: 3, uid: 'aaa' },
    },
    {
      rule: '6 same log2 bucket: lower UID first, restarts and age not consulted',
      // 65 and 70 minutes are both in bucket floor(log2(ns)) = 41
      a: { uid: 'aaa', readySince: ago(70 * MIN), creationTimestamp: ago(10 * HOUR) },
      b: { uid: 'bbb', readySince: ago(65 * MIN), restartCount: 7, creationTimestamp: ago(2 * HOUR) },
    },
    {
      rule: '7 more restarts first (readiness times equal)',
      a: { restartCount: 3, creationTimestamp: ago(10 * HOUR), uid: 'zzz' },
      b: { restartCount: 1, creationTimestamp: ago(SEC), uid: 'aaa' },
    },
    {
      rule: '7 more restarts first (not ready pods skip rule 6)',
      a: { ready: false, readySince: ago(10 * HOUR), restartCount: 2 },
      b: { ready: false, readySince: ago(SEC), restartCount: 1 },
    },
    {
      rule: '7 sidecar restarts break a tie in regular restarts',
      a: { restartCount: 1, sidecarRestartCount: 4, creationTimestamp: ago(10 * HOUR), uid: 'zzz' },
      b: { restartCount: 1, sidecarRestartCount: 0, creationTimestamp: ago(SEC), uid: 'aaa' },
    },
    {
      rule: '8 newer first (different log2 buckets)',
      a: { creationTimestamp: ago(MIN), uid: 'zzz' },
      b: { creationTimestamp: ago(10 * HOUR), uid: 'aaa' },
    },
    {
      rule: '8 same log2 bucket: lower UID first',
      a: { creationTimestamp: ago(70 * MIN), uid: 'aaa' },
      b: { creationTimestamp: ago(65 * MIN), uid: 'bbb' },
    },
    {
      rule: '8 unknown creation time first',
      a: { creationTimestamp: '', uid: 'zzz' },
      b: { creationTimestamp: ago(SEC), uid: 'aaa' },
    },
  ];

  test.each(rows)('$rule', ({ a, b, related }) => {
    const pa = pod(a);
    const pb = pod(b);
    const rel = related ? [pa, pb, ...related.map((r) => pod(r))] : [];
    expect(rankPodsForDeletion([pa, pb], rel, NOW)).toEqual([pa, pb]);
    expect(rankPodsForDeletion([pb, pa], rel, NOW)).toEqual([pa, pb]);
    expect(choosePodsToDelete([pb, pa], 1, rel, NOW)).toEqual([pa]);
  });

  test('without `now`, times compare exactly (no buckets, no UID spread)', () => {
    const older = pod({ uid: 'aaa', readySince: ago(70 * MIN) });
    const newer = pod({ uid: 'bbb', readySince: ago(65 * MIN) });
    expect(rankPodsForDeletion([older, newer], [], NOW)).toEqual([older, newer]); // bucketed: UID decides
    expect(rankPodsForDeletion([older, newer])).toEqual([newer, older]); // exact: newer first
    const c1 = pod({ uid: 'aaa', creationTimestamp: ago(70 * MIN) });
    const c2 = pod({ uid: 'bbb', creationTimestamp: ago(65 * MIN) });
    expect(rankPodsForDeletion([c1, c2])).toEqual([c2, c1]);
  });

  test('pods identical for every rule are ordered by UID, whatever the input order', () => {
    const ps = ['d', 'a', 'c', 'b'].map((u) => pod({ uid: u }));
    const expected = [...ps].sort((x, y) => (x.uid < y.uid ? -1 : 1));
    expect(rankPodsForDeletion(ps, [], NOW)).toEqual(expected);
    expect(rankPodsForDeletion([...ps].reverse(), [], NOW)).toEqual(expected);
  });

  test('a mixed set sorts into the documented order and input order does not matter', () => {
    const unassigned = pod({ uid: 'u1', nodeName: undefined, phase: 'Pending', ready: false });
    const pending = pod({ uid: 'u2', phase: 'Pending', ready: false });
    const unknown = pod({ uid: 'u3', phase: 'Unknown', ready: false });
    const notReady = pod({ uid: 'u4', ready: false });
    const cheap = pod({ uid: 'u5', deletionCost: -1 });
    const youngReady = pod({ uid: 'u6', readySince: ago(5 * SEC) });
    const oldReady = pod({ uid: 'u7', readySince: ago(10 * HOUR) });
    const expected = [unassigned, pending, unknown, notReady, cheap, youngReady, oldReady];
    // a fixed scramble and its reverse
    const scrambled = [oldReady, notReady, unassigned, youngReady, pending, cheap, unknown];
    expect(rankPodsForDeletion(scrambled, [], NOW)).toEqual(expected);
    expect(rankPodsForDeletion([...scrambled].reverse(), [], NOW)).toEqual(expected);
  });

  test('rankPodsForDeletion does not modify its input', () => {
    const ps = [pod({ uid: 'b' }), pod({ uid: 'a', ready: false })];
    const copy = [...ps];
    rankPodsForDeletion(ps, [], NOW);
    expect(ps).toEqual(copy);
  });

  test('colocationRanks counts active related pods per node, deduplicated by UID', () => {
    const mine = [pod({ nodeName: 'n1' }), pod({ nodeName: 'n2' }), pod({ nodeName: 'n3' }), pod({ nodeName: undefined })];
    const dup = pod({ nodeName: 'n1' });
    const related = [
      ...mine,
      dup,
      dup, // same UID twice counts once
      pod({ nodeName: 'n1', deletionTimestamp: ago(SEC) }), // not active
      pod({ nodeName: 'n2', phase: 'Succeeded' }), // not active
      pod({ nodeName: undefined }),
    ];
    expect(colocationRanks(mine, related)).toEqual([2, 1, 1, 2]);
    expect(colocationRanks(mine, [])).toEqual([0, 0, 0, 0]);
  });

  test('choosePodsToDelete: count 0 / negative / all', () => {
    const ps = [pod({ uid: 'b' }), pod({ uid: 'a', ready: false })];
    expect(choosePodsToDelete(ps, 0, [], NOW)).toEqual([]);
    expect(choosePodsToDelete(ps, -1, [], NOW)).toEqual([]);
    // everything goes: the input order is kept (nothing to choose)
    expect(choosePodsToDelete(ps, 2, [], NOW)).toEqual(ps);
    expect(choosePodsToDelete(ps, 5, [], NOW)).toEqual(ps);
    expect(choosePodsToDelete(ps, 1, [], NOW)).toEqual([ps[1]]);
  });

  test('logarithmicAgeRank: floor(log2(age in ns)), -1 for the present and future', () => {
    expect(logarithmicAgeRank(NOW, NOW)).toBe(-1);
    expect(logarithmicAgeRank(NOW + SEC, NOW)).toBe(-1);
    expect(logarithmicAgeRank(NOW - 1, NOW)).toBe(19); // 1e6 ns
    expect(logarithmicAgeRank(NOW - SEC, NOW)).toBe(29); // 1e9 ns
    expect(logarithmicAgeRank(NOW - 65 * MIN, NOW)).toBe(41);
    expect(logarithmicAgeRank(NOW - 70 * MIN, NOW)).toBe(41);
    expect(logarithmicAgeRank(NOW - 80 * MIN, NOW)).toBe(42);
    // agrees with an exact integer log2 across a wide range of ages
    for (let ms = 1; ms < 4e11; ms = Math.ceil(ms * 1.37) + 1) {
      const exact = BigInt(ms) * 1000000n;
      expect(logarithmicAgeRank(0, ms)).toBe(exact.toString(2).length - 1);
    }
  });
});

describe('slowStartBatches', () => {
  test('known shapes', () => {
    expect(slowStartBatches(0)).toEqual([]);
    expect(slowStartBatches(-3)).toEqual([]);
    expect(slowStartBatches(1)).toEqual([1]);
    expect(slowStartBatches(2)).toEqual([1, 1]);
    expect(slowStartBatches(3)).toEqual([1, 2]);
    expect(slowStartBatches(7)).toEqual([1, 2, 4]);
    expect(slowStartBatches(10)).toEqual([1, 2, 4, 3]);
    expect(slowStartBatches(500)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 245]);
    expect(slowStartBatches(10, 3)).toEqual([3, 6, 1]);
    expect(slowStartBatches(2, 5)).toEqual([2]);
  });

  test('batches sum to the total, double, and number 1+floor(log2(ceil(N/initial)))', () => {
    const problems: string[] = [];
    for (const initial of [1, 2, 3]) {
      for (let n = 1; n <= 1000; n++) {
        const b = slowStartBatches(n, initial);
        const where = `n=${n} initial=${initial}: ${b.join(',')}`;
        if (b.reduce((s, x) => s + x, 0) !== n) problems.push(`sum ${where}`);
        if (b[0] !== Math.min(n, initial)) problems.push(`first ${where}`);
        for (let i = 1; i < b.length - 1; i++) if (b[i] !== 2 * b[i - 1]) problems.push(`doubling ${where}`);
        if (b.length > 1 && (b[b.length - 1] < 1 || b[b.length - 1] > 2 * b[b.length - 2])) problems.push(`last ${where}`);
        if (b.length !== 1 + Math.floor(Math.log2(Math.ceil(n / initial)))) problems.push(`count ${where}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('a non-positive initial batch size is a programming error', () => {
    expect(() => slowStartBatches(5, 0)).toThrow(RangeError);
    expect(() => slowStartBatches(5, 1.5)).toThrow(RangeError);
  });
});

describe('planReplicas', () => {
  const pods = (n: number, o: Partial<PodSummary> = {}) => Array.from({ length: n }, () => pod(o));

  test('nothing to do at the desired count', () => {
    expect(planReplicas(owner({ replicas: 3 }), pods(3))).toEqual({ action: 'none' });
    expect(planReplicas(owner({ replicas: 0 }), [])).toEqual({ action: 'none' });
  });

  test('creates the shortfall, capped at burstReplicas', () => {
    expect(planReplicas(owner({ replicas: 5 }), pods(2))).toEqual({ action: 'create', count: 3 });
    expect(planReplicas(owner({ replicas: 5000 }), [])).toEqual({ action: 'create', count: DEFAULT_BURST_REPLICAS });
    expect(planReplicas(owner({ replicas: 10 }), [], 4)).toEqual({ action: 'create', count: 4 });
    expect(planReplicas(owner({ replicas: 10 }), [], { burstReplicas: 4 })).toEqual({ action: 'create', count: 4 });
  });

  test('deletes the excess, capped at burstReplicas, choosing by the deletion order', () => {
    const ready = pods(3);
    const notReady = pod({ ready: false });
    const unassigned = pod({ nodeName: undefined, phase: 'Pending', ready: false });
    const all = [...ready, notReady, unassigned];
    expect(planReplicas(owner({ replicas: 3 }), all, { now: NOW })).toEqual({ action: 'delete', pods: [unassigned, notReady] });
    expect(planReplicas(owner({ replicas: 0 }), all, { burstReplicas: 2, now: NOW })).toEqual({
      action: 'delete',
      pods: [unassigned, notReady],
    });
    const many = pods(DEFAULT_BURST_REPLICAS + 20);
    const plan = planReplicas(owner({ replicas: 0 }), many);
    expect(plan.action).toBe('delete');
    expect(plan.action === 'delete' && plan.pods.length).toBe(DEFAULT_BURST_REPLICAS);
  });

  test('related pods steer deletion to crowded nodes', () => {
    const onCrowded = pod({ nodeName: 'crowded', uid: 'zzz' });
    const onQuiet = pod({ nodeName: 'quiet', uid: 'aaa' });
    const related = [onCrowded, onQuiet, pod({ nodeName: 'crowded', ownerReferences: [ownerRef('sibling-rs')] })];
    expect(planReplicas(owner({ replicas: 1 }), [onQuiet, onCrowded], { relatedPods: related, now: NOW })).toEqual({
      action: 'delete',
      pods: [onCrowded],
    });
    expect(planReplicas(owner({ replicas: 1 }), [onQuiet, onCrowded], { now: NOW })).toEqual({ action: 'delete', pods: [onQuiet] });
  });

  test('an owner being deleted is not scaled', () => {
    expect(planReplicas(owner({ replicas: 5, deletionTimestamp: ago(SEC) }), [])).toEqual({ action: 'none' });
    expect(planReplicas(owner({ replicas: 0, deletionTimestamp: ago(SEC) }), pods(2))).toEqual({ action: 'none' });
  });
});

describe('podName', () => {
  const suffixRe = new RegExp(`^[${NAME_SUFFIX_ALPHABET}]{5}$`);

  test('FNV-1a 64 reference vectors', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
  });

  test('deterministic, "<owner>-<5 alphabet chars>"', () => {
    const n = podName('web', OWNER_UID, 0);
    expect(n).toBe(podName('web', OWNER_UID, 0));
    expect(n).toMatch(/^web-/);
    expect(n.slice(4)).toMatch(suffixRe);
    expect(n).toHaveLength(9);
  });

  test('pinned values (changing them would break workflow replay of running owners)', () => {
    expect([0, 1, 2, 3].map((s) => podName('web', OWNER_UID, s))).toEqual(['web-8lg56', 'web-z45ls', 'web-dpp9r', 'web-zhvkw']);
  });

  test('depends on owner UID and seq', () => {
    expect(podName('web', 'uid-a', 0)).not.toBe(podName('web', 'uid-b', 0));
    expect(podName('web', 'uid-a', 0)).not.toBe(podName('web', 'uid-a', 1));
  });

  test('10,000 consecutive seqs give 10,000 distinct names (the suffix map is a bijection)', () => {
    for (const uid of [OWNER_UID, 'f47ac10b-58cc-4372-a567-0e02b2c3d479', '']) {
      const names = new Set<string>();
      const malformed: string[] = [];
      for (let s = 0; s < 10_000; s++) {
        const n = podName('web', uid, s);
        if (!suffixRe.test(n.slice(4))) malformed.push(n);
        names.add(n);
      }
      expect(malformed).toEqual([]);
      expect(names.size).toBe(10_000);
    }
  });

  test('no collisions over a large sample of the 27^5 range either', () => {
    const names = new Set<string>();
    const count = 100_000;
    for (let s = 0; s < count; s++) names.add(podName('web', OWNER_UID, s * 47));
    expect(names.size).toBe(count);
    // the space wraps after 27^5
    expect(podName('web', OWNER_UID, 27 ** 5 + 3)).toBe(podName('web', OWNER_UID, 3));
  });

  test('suffix characters are spread over the whole alphabet', () => {
    const seen = new Set<string>();
    for (let s = 0; s < 2000; s++) for (const ch of podName('w', OWNER_UID, s).slice(2)) seen.add(ch);
    expect([...seen].sort().join('')).toBe([...NAME_SUFFIX_ALPHABET].sort().join(''));
  });

  test('long owner names are truncated to a 58-character base (names stay <= 63)', () => {
    const name57 = 'a'.repeat(57);
    expect(podName(name57, OWNER_UID, 1)).toMatch(new RegExp(`^${name57}-[${NAME_SUFFIX_ALPHABET}]{5}$`));
    expect(podName(name57, OWNER_UID, 1)).toHaveLength(MAX_NAME_LENGTH);
    const name58 = 'b'.repeat(58);
    expect(podName(name58, OWNER_UID, 1)).toMatch(new RegExp(`^${name58}[${NAME_SUFFIX_ALPHABET}]{5}$`));
    const name253 = 'c'.repeat(253);
    const n = podName(name253, OWNER_UID, 1);
    expect(n).toHaveLength(MAX_NAME_LENGTH);
    expect(n.startsWith('c'.repeat(58))).toBe(true);
    for (let len = 1; len <= 253; len++) expect(podName('x'.repeat(len), OWNER_UID, len).length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
  });

  test('bad seq is rejected', () => {
    expect(() => podName('web', OWNER_UID, -1)).toThrow(RangeError);
    expect(() => podName('web', OWNER_UID, 1.5)).toThrow(RangeError);
    expect(() => podName('web', OWNER_UID, Number.NaN)).toThrow(RangeError);
  });
});

describe('podFromTemplate', () => {
  test('shape', () => {
    const o = owner({
      template: {
        metadata: { labels: { app: 'web' }, annotations: { note: 'x' }, finalizers: ['example.com/keep'] },
        spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }], restartPolicy: 'Always' },
      },
    });
    expect(podFromTemplate(o, 'web-abcde')).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-abcde',
        namespace: 'default',
        labels: { app: 'web' },
        annotations: { note: 'x' },
        finalizers: ['example.com/keep'],
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: OWNER_UID, controller: true, blockOwnerDeletion: true }],
      },
      spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }], restartPolicy: 'Always' },
    });
  });

  test('copies everything: changing the manifest leaves the template alone', () => {
    const o = owner();
    const m = podFromTemplate(o, 'web-x');
    m.metadata.labels!.app = 'changed';
    (m.spec.containers as Array<{ image: string }>)[0].image = 'changed';
    expect(o.template.metadata!.labels!.app).toBe('web');
    expect((o.template.spec.containers as Array<{ image: string }>)[0].image).toBe('nginx');
  });

  test('empty collections are left out; RC owner reference', () => {
    const rc = owner({
      kind: 'ReplicationController',
      apiVersion: 'v1',
      template: { metadata: { labels: { app: 'web' }, annotations: {}, finalizers: [] }, spec: {} },
    });
    const m = podFromTemplate(rc, 'web-x');
    expect(m.metadata).toEqual({
      name: 'web-x',
      namespace: 'default',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: OWNER_UID, controller: true, blockOwnerDeletion: true }],
    });
    expect(m.spec).toEqual({});
  });

  test('podTemplateError: pods without labels cannot be created', () => {
    expect(podTemplateError(owner())).toBeUndefined();
    expect(podTemplateError(owner({ template: { spec: {} } }))).toBe('unable to create pods, no labels');
    expect(podTemplateError(owner({ template: { metadata: { labels: {} }, spec: {} } }))).toBe('unable to create pods, no labels');
  });
});

describe('calculateStatus', () => {
  const full = { app: 'web', tier: 'frontend' };

  test('counters without minReadySeconds', () => {
    const pods = [
      pod({ labels: full }),
      pod({ labels: { ...full, extra: 'y' } }),
      pod({ labels: { app: 'web' } }), // missing a template label
      pod({ labels: full, ready: false }),
    ];
    const s = calculateStatus(owner(), pods, pods, undefined, NOW);
    expect(s).toEqual({
      replicas: 4,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      terminatingReplicas: 0,
      observedGeneration: 3,
      conditions: [],
    });
  });

  test('minReadySeconds holds back availability', () => {
    const o = owner({ minReadySeconds: 10 });
    const pods = [
      pod({ readySince: ago(HOUR) }),
      pod({ readySince: ago(10 * SEC) }), // exactly at the threshold: available
      pod({ readySince: ago(9 * SEC) }),
      pod({ readySince: undefined }), // ready, transition time unknown: not available
      pod({ ready: false }),
    ];
    const s = calculateStatus(o, pods, pods, undefined, NOW);
    expect(s.readyReplicas).toBe(4);
    expect(s.availableReplicas).toBe(2);
    expect(calculateStatus(o, pods, pods, undefined, NOW + HOUR).availableReplicas).toBe(3);
  });

  test('an empty template label set makes every pod fully labeled', () => {
    const o = owner({ template: { spec: {} } });
    expect(calculateStatus(o, [pod({ labels: {} }), pod()], [], undefined, NOW).fullyLabeledReplicas).toBe(2);
  });

  test('terminatingReplicas: owned, matching, deleting and not terminal; ReplicaSet only', () => {
    const active = pod();
    const all = [
      active,
      pod({ deletionTimestamp: ago(SEC) }), // counts
      pod({ deletionTimestamp: ago(SEC), phase: 'Pending' }), // counts
      pod({ deletionTimestamp: ago(SEC), phase: 'Failed' }), // terminal
      pod({ deletionTimestamp: ago(SEC), ownerReferences: [] }), // orphan
      pod({ deletionTimestamp: ago(SEC), ownerReferences: [ownerRef('other')] }), // someone else's
      pod({ deletionTimestamp: ago(SEC), labels: { app: 'other' } }), // selector no longer matches
    ];
    expect(calculateStatus(owner(), [active], all, undefined, NOW).terminatingReplicas).toBe(2);
    expect(calculateStatus(owner(), [active], undefined, undefined, NOW).terminatingReplicas).toBe(0);
    const rc = owner({ kind: 'ReplicationController', apiVersion: 'v1' });
    const s = calculateStatus(rc, [active], all, undefined, NOW);
    expect(s.terminatingReplicas).toBeUndefined();
    expect('terminatingReplicas' in s).toBe(false);
  });

  test('ReplicaFailure is added on a failed create or delete', () => {
    const c = calculateStatus(owner(), [], [], { kind: 'create', message: 'quota exceeded' }, NOW + 1500);
    expect(c.conditions).toEqual([
      { type: REPLICA_FAILURE, status: 'True', reason: 'FailedCreate', message: 'quota exceeded', lastTransitionTime: '2025-06-01T12:00:01Z' },
    ]);
    const d = calculateStatus(owner({ replicas: 0 }), [pod()], [], { kind: 'delete', message: 'forbidden' }, NOW);
    expect(d.conditions).toEqual([
      { type: REPLICA_FAILURE, status: 'True', reason: 'FailedDelete', message: 'forbidden', lastTransitionTime: '2025-06-01T12:00:00Z' },
    ]);
  });

  test('an existing ReplicaFailure stays as it is while errors continue (time and message preserved)', () => {
    const existing = {
      type: REPLICA_FAILURE,
      status: 'True' as const,
      reason: 'FailedCreate',
      message: 'first error',
      lastTransitionTime: '2025-06-01T10:00:00Z',
    };
    const other = { type: 'Other', status: 'False' as const, lastTransitionTime: '2025-05-01T00:00:00Z' };
    const o = owner({ status: { ...emptyStatus(), conditions: [other, existing] } });
    const s = calculateStatus(o, [], [], { kind: 'delete', message: 'second error' }, NOW);
    expect(s.conditions).toEqual([other, existing]);
  });

  test('ReplicaFailure is removed after a clean round; other conditions stay', () => {
    const other = { type: 'Other', status: 'False' as const };
    const failure = { type: REPLICA_FAILURE, status: 'True' as const, reason: 'FailedCreate', message: 'x', lastTransitionTime: '2025-06-01T10:00:00Z' };
    const o = owner({ status: { ...emptyStatus(), conditions: [failure, other] } });
    expect(calculateStatus(o, [], [], undefined, NOW).conditions).toEqual([other]);
    expect(calculateStatus(o, [], [], null, NOW).conditions).toEqual([other]);
    // no failure, no condition: conditions untouched
    const clean = owner({ status: { ...emptyStatus(), conditions: [other] } });
    expect(calculateStatus(clean, [], [], undefined, NOW).conditions).toEqual([other]);
  });

  test('does not modify the owner', () => {
    const failure = { type: REPLICA_FAILURE, status: 'True' as const, reason: 'FailedCreate', message: 'x' };
    const o = owner({ status: { ...emptyStatus(), conditions: [failure] } });
    const before = JSON.parse(JSON.stringify(o));
    calculateStatus(o, [pod()], [pod()], undefined, NOW);
    calculateStatus(owner(), [], [], { kind: 'create', message: 'm' }, NOW);
    expect(o).toEqual(before);
  });
});

describe('statusEqual', () => {
  const base: ReplicaStatus = {
    replicas: 3,
    fullyLabeledReplicas: 3,
    readyReplicas: 2,
    availableReplicas: 1,
    terminatingReplicas: 0,
    observedGeneration: 4,
    conditions: [{ type: REPLICA_FAILURE, status: 'True', reason: 'FailedCreate', message: 'm', lastTransitionTime: '2025-06-01T10:00:00Z' }],
  };

  test('equal statuses, including equivalent time spellings and absent vs empty strings', () => {
    expect(statusEqual(base, JSON.parse(JSON.stringify(base)))).toBe(true);
    const sameInstant = { ...base, conditions: [{ ...base.conditions[0], lastTransitionTime: '2025-06-01T12:00:00+02:00' }] };
    expect(statusEqual(base, sameInstant)).toBe(true);
    const a = { ...base, conditions: [{ type: 'X', status: 'True' as const }] };
    const b = { ...base, conditions: [{ type: 'X', status: 'True' as const, reason: '', message: '' }] };
    expect(statusEqual(a, b)).toBe(true);
  });

  test.each([
    ['replicas', { replicas: 4 }],
    ['fullyLabeledReplicas', { fullyLabeledReplicas: 2 }],
    ['readyReplicas', { readyReplicas: 3 }],
    ['availableReplicas', { availableReplicas: 2 }],
    ['terminatingReplicas', { terminatingReplicas: 1 }],
    ['terminatingReplicas absent vs 0', { terminatingReplicas: undefined }],
    ['observedGeneration', { observedGeneration: 5 }],
    ['conditions removed', { conditions: [] }],
  ] as Array<[string, Partial<ReplicaStatus>]>)('differs in %s', (_name, change) => {
    expect(statusEqual(base, { ...base, ...change })).toBe(false);
  });

  test.each([
    ['status', { status: 'False' as const }],
    ['reason', { reason: 'FailedDelete' }],
    ['message', { message: 'other' }],
    ['lastTransitionTime', { lastTransitionTime: '2025-06-01T10:00:01Z' }],
    ['type', { type: 'Other' }],
  ])('differs in condition %s', (_name, change) => {
    expect(statusEqual(base, { ...base, conditions: [{ ...base.conditions[0], ...change }] })).toBe(false);
  });

  test('condition order matters', () => {
    const x = { type: 'X', status: 'True' as const };
    const y = { type: 'Y', status: 'True' as const };
    expect(statusEqual({ ...base, conditions: [x, y] }, { ...base, conditions: [y, x] })).toBe(false);
  });

  test('steady state skips the write; a new generation or first terminatingReplicas forces one', () => {
    const pods = [pod({ labels: { app: 'web', tier: 'frontend' } })];
    const o = owner({ replicas: 1 });
    const first = calculateStatus(o, pods, pods, undefined, NOW);
    // first sync after upgrade: status had no terminatingReplicas yet
    expect(statusEqual(o.status, first)).toBe(false);
    const written = owner({ replicas: 1, status: first });
    expect(statusEqual(written.status, calculateStatus(written, pods, pods, undefined, NOW + MIN))).toBe(true);
    const bumped = owner({ replicas: 1, status: first, generation: 4 });
    const next = calculateStatus(bumped, pods, pods, undefined, NOW);
    expect(statusEqual(bumped.status, next)).toBe(false);
    expect(next.observedGeneration).toBe(4);
  });
});

describe('nextAvailabilityCheck', () => {
  test('undefined when minReadySeconds is 0', () => {
    expect(nextAvailabilityCheck(owner(), [pod({ readySince: ago(SEC) })], NOW)).toBeUndefined();
  });

  test('undefined when every ready pod is available', () => {
    const o = owner({ minReadySeconds: 10 });
    expect(nextAvailabilityCheck(o, [pod({ readySince: ago(HOUR) }), pod({ ready: false })], NOW)).toBeUndefined();
    expect(nextAvailabilityCheck(o, [], NOW)).toBeUndefined();
  });

  test('time until the earliest pod crosses minReadySeconds', () => {
    const o = owner({ minReadySeconds: 10 });
    const pods = [pod({ readySince: ago(3 * SEC) }), pod({ readySince: ago(8 * SEC) }), pod({ readySince: ago(HOUR) })];
    expect(nextAvailabilityCheck(o, pods, NOW)).toBe(2 * SEC);
    expect(nextAvailabilityCheck(o, pods, new Date(NOW + SEC))).toBe(SEC);
  });

  test('falls back to minReadySeconds when no pod has a known future availability time', () => {
    const o = owner({ minReadySeconds: 30 });
    expect(nextAvailabilityCheck(o, [pod({ readySince: undefined })], NOW)).toBe(30 * SEC);
  });

  test('uses the given status counters when provided', () => {
    const o = owner({ minReadySeconds: 10 });
    const pods = [pod({ readySince: ago(4 * SEC) })];
    const s = calculateStatus(o, pods, pods, undefined, NOW);
    expect(nextAvailabilityCheck(o, pods, NOW, s)).toBe(6 * SEC);
    expect(nextAvailabilityCheck(o, pods, NOW, { readyReplicas: 1, availableReplicas: 1 })).toBeUndefined();
  });
});

describe('podSeq and seqAfterNames', () => {
  test('podSeq inverts podName for every owner, base length and seq', () => {
    const long = 'x'.repeat(70);
    for (const uid of [OWNER_UID, 'f47ac10b-58cc-4372-a567-0e02b2c3d479', '']) {
      for (const name of ['web', long]) {
        for (const s of [0, 1, 2, 999, 65_535, 14_348_906]) expect(podSeq(name, uid, podName(name, uid, s))).toBe(s);
      }
    }
  });

  test('a name that is not one of the owner\'s generated names decodes to nothing', () => {
    expect(podSeq('web', OWNER_UID, 'web-8lg5')).toBeUndefined(); // too short
    expect(podSeq('web', OWNER_UID, 'api-8lg56')).toBeUndefined(); // another base
    expect(podSeq('web', OWNER_UID, 'web-8lg5a')).toBeUndefined(); // 'a' is not in the alphabet
  });

  test('pods created by a task whose counter advance was lost move the counter past them', () => {
    // a failed workflow task created seqs 0..2; its retry saw the pods and created none
    const names = [0, 1, 2].map((s) => podName('web', OWNER_UID, s));
    expect(seqAfterNames(0, 'web', OWNER_UID, names)).toBe(3);
    expect(seqAfterNames(0, 'web', OWNER_UID, [names[2]])).toBe(3);
    // names behind the counter leave it where it is
    expect(seqAfterNames(5, 'web', OWNER_UID, names)).toBe(5);
    expect(seqAfterNames(3, 'web', OWNER_UID, ['web-abcde', 'api-8lg56'])).toBe(3);
  });

  test('a name far ahead of the counter (an adopted pod) does not move it; the window is placed in the counter\'s lap', () => {
    expect(seqAfterNames(0, 'web', OWNER_UID, [podName('web', OWNER_UID, SEQ_CATCH_UP_WINDOW)])).toBe(0);
    expect(seqAfterNames(0, 'web', OWNER_UID, [podName('web', OWNER_UID, SEQ_CATCH_UP_WINDOW - 1)])).toBe(SEQ_CATCH_UP_WINDOW);
    const space = 27 ** 5;
    // past one wrap, seq space + 3 names the same pod as seq 3
    expect(seqAfterNames(space + 1, 'web', OWNER_UID, [podName('web', OWNER_UID, 3)])).toBe(space + 4);
    expect(seqAfterNames(space - 2, 'web', OWNER_UID, [podName('web', OWNER_UID, 1)])).toBe(space + 2);
  });
});
