import { expectedScale, type Workload, type WorkloadLookup } from '../../activities/disruption/scale';
import {
  budgetCounts,
  countHealthy,
  disruptedPodMap,
  failSafeStatus,
  nextStatus,
  notDeletedMessage,
  selectorString,
  setStatusCondition,
  staleConditionWaitMs,
  unmanagedPodsMessage,
} from '../../workflows/disruption/logic';
import type { PdbPodView, PdbView } from '../../workflows/disruption/types';
import { mergePdbEvents } from '../../workflows/disruption/workflow';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const pod = (name: string, o: Partial<PdbPodView> = {}): PdbPodView => ({ name, uid: `u-${name}`, deleting: false, ready: true, ...o });

const budget = (o: Partial<PdbView> = {}): PdbView => ({
  namespace: 'ns', name: 'b', uid: 'u-b', resourceVersion: '5', generation: 1, selector: { matchLabels: { app: 'web' } },
  status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }, ...o,
});

describe('budget counts (upstream getExpectedPodCount)', () => {
  test('an integer minAvailable counts the selected pods, whatever their controllers', () => {
    expect(budgetCounts({ minAvailable: 4 }, 5, 0)).toEqual({ expectedCount: 5, desiredHealthy: 4 });
  });
  test('a percentage minAvailable is of the controllers\' scale, rounded up', () => {
    expect(budgetCounts({ minAvailable: '50%' }, 3, 5)).toEqual({ expectedCount: 5, desiredHealthy: 3 });
  });
  test('maxUnavailable takes from the scale, rounded up, never below zero', () => {
    expect(budgetCounts({ maxUnavailable: 1 }, 5, 5)).toEqual({ expectedCount: 5, desiredHealthy: 4 });
    expect(budgetCounts({ maxUnavailable: '30%' }, 5, 5)).toEqual({ expectedCount: 5, desiredHealthy: 3 });
    expect(budgetCounts({ maxUnavailable: 9 }, 5, 5)).toEqual({ expectedCount: 5, desiredHealthy: 0 });
  });
  test('a string that is not a percentage is upstream\'s error', () => {
    expect(budgetCounts({ maxUnavailable: 'two' }, 1, 2).error).toBe('invalid value for IntOrString: invalid type: string is not a percentage');
  });
  test('neither set: nothing expected, nothing allowed', () => {
    expect(budgetCounts({}, 3, 0)).toEqual({ expectedCount: 0, desiredHealthy: 0 });
  });
});

describe('pending evictions and health (buildDisruptedPodMap, countHealthyPods)', () => {
  const status = { disruptedPods: { a: iso(T0), b: iso(T0 - 3 * 60_000), gone: iso(T0), c: iso(T0) } };
  test('an entry stays while its pod exists and is not deleted yet, and a recheck is due when the first one expires', () => {
    const r = disruptedPodMap(status, [pod('a'), pod('b'), pod('c', { deleting: true })], T0 + 1000);
    expect(r.disrupted).toEqual({ a: iso(T0) });
    expect(r.recheckAtMs).toBe(T0 + 120_000);
    // overdue: the API server let it go two minutes ago and it was never deleted
    expect(r.notDeleted).toEqual(['b']);
  });
  test('no entries recorded: nothing pending', () => {
    expect(disruptedPodMap({}, [pod('a')], T0)).toEqual({ disrupted: {}, notDeleted: [] });
  });
  test('healthy: Ready, not being deleted, and not evicted within the last two minutes', () => {
    const pods = [pod('a'), pod('b'), pod('c', { ready: false }), pod('d', { deleting: true }), pod('e')];
    expect(countHealthy(pods, { a: iso(T0) }, T0 + 1000)).toBe(2);
    expect(countHealthy(pods, { a: iso(T0) }, T0 + 121_000)).toBe(3);
  });
});

describe('status (updatePdbStatus)', () => {
  test('five healthy of five with minAvailable 4: one disruption allowed, SufficientPods', () => {
    const s = nextStatus(budget({ minAvailable: 4 }), 5, { expectedCount: 5, desiredHealthy: 4 }, {}, T0)!;
    expect(s).toEqual({
      currentHealthy: 5, desiredHealthy: 4, expectedPods: 5, disruptionsAllowed: 1, observedGeneration: 1,
      conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 1, lastTransitionTime: iso(T0) }],
    });
  });
  test('no pods expected: no disruption, whatever is healthy', () => {
    expect(nextStatus(budget(), 2, { expectedCount: 0, desiredHealthy: 0 }, {}, T0)!.disruptionsAllowed).toBe(0);
  });
  test('a status that already says it all is not written again', () => {
    const first = nextStatus(budget(), 5, { expectedCount: 5, desiredHealthy: 4 }, {}, T0)!;
    expect(nextStatus(budget({ status: first }), 5, { expectedCount: 5, desiredHealthy: 4 }, {}, T0 + 5000)).toBeUndefined();
    // a new generation is observed even with the same counts
    expect(nextStatus(budget({ generation: 2, status: first }), 5, { expectedCount: 5, desiredHealthy: 4 }, {}, T0 + 5000)!.observedGeneration).toBe(2);
  });
  test('the condition keeps its transition time while its status stays, and takes a new one when it flips', () => {
    const c1 = setStatusCondition(undefined, { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }, T0);
    const c2 = setStatusCondition(c1, { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 2 }, T0 + 9000);
    expect(c2[0].lastTransitionTime).toBe(iso(T0));
    const c3 = setStatusCondition(c2, { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' }, T0 + 20_000);
    expect(c3).toEqual([{ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', lastTransitionTime: iso(T0 + 20_000) }]);
  });
  test('fail-safe: no disruption, SyncFailed with the error, the rest of the status as it was', () => {
    const b = budget({ status: { disruptionsAllowed: 2, currentHealthy: 5, desiredHealthy: 3, expectedPods: 5, observedGeneration: 1 } });
    expect(failSafeStatus(b, 'found no controllers for pod "x"', T0)).toEqual({
      disruptionsAllowed: 0, currentHealthy: 5, desiredHealthy: 3, expectedPods: 5, observedGeneration: 1,
      conditions: [{ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "x"', observedGeneration: 1, lastTransitionTime: iso(T0) }],
    });
  });
});

describe('messages as upstream prints them', () => {
  test('the selector is Go\'s LabelSelector.String()', () => {
    expect(selectorString({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] }))
      .toBe('&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}');
    expect(selectorString({})).toBe('&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}');
    expect(unmanagedPodsMessage({ matchLabels: { app: 'web' } })).toContain('(selector: &LabelSelector{MatchLabels:map[string]string{app: web,},');
  });
  test('NotDeleted names the budget\'s namespace twice, as upstream does', () => {
    expect(notDeletedMessage({ namespace: 'ns' })).toBe('Pod was expected by PDB ns/ns to be deleted but it wasn\'t');
  });
});

describe('stale DisruptionTarget (nonTerminatingPodHasStaleDisruptionCondition)', () => {
  const marked = (o: object = {}) => ({ deleting: false, phase: 'Running', condition: { status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: iso(T0) }, ...o });
  test('a True mark on a live pod is stale two minutes after it was set', () => {
    expect(staleConditionWaitMs(marked(), T0 + 30_000)).toBe(90_000);
    expect(staleConditionWaitMs(marked(), T0 + 500_000)).toBe(0);
  });
  test('not stale: being deleted, finished, the kubelet\'s own, False, or none', () => {
    expect(staleConditionWaitMs(marked({ deleting: true }), T0)).toBeUndefined();
    expect(staleConditionWaitMs(marked({ phase: 'Failed' }), T0)).toBeUndefined();
    expect(staleConditionWaitMs(marked({ condition: { status: 'True', reason: 'TerminationByKubelet' } }), T0)).toBeUndefined();
    expect(staleConditionWaitMs(marked({ condition: { status: 'False' } }), T0)).toBeUndefined();
    expect(staleConditionWaitMs({ deleting: false }, T0)).toBeUndefined();
  });
});

describe('controller scale (getExpectedScale and its finders)', () => {
  const ref = (kind: string, name: string, apiVersion = 'apps/v1') => ({ apiVersion, kind, name, uid: `u-${name}` });
  const objects: Record<string, Workload> = {
    'ReplicaSet/web-1': { uid: 'u-web-1', replicas: 5, controllerRef: { ...ref('Deployment', 'web') } },
    'ReplicaSet/web-2': { uid: 'u-web-2', replicas: 0, controllerRef: { ...ref('Deployment', 'web') } },
    'Deployment/web': { uid: 'u-web', replicas: 5 },
    'ReplicaSet/solo': { uid: 'u-solo', replicas: 2 },
    'StatefulSet/db': { uid: 'u-db', replicas: 3 },
    'ReplicationController/old': { uid: 'u-old', replicas: 1 },
  };
  const scales: Record<string, { uid: string; replicas: number } | Error> = {
    'Widget/w': { uid: 'u-w', replicas: 4 },
    'DaemonSet/ds': new Error('daemonsets.apps does not implement the scale subresource'),
  };
  const lookup: WorkloadLookup = {
    get: async (kind, _ns, name) => objects[`${kind}/${name}`],
    scale: async (r) => {
      const s = scales[`${r.kind}/${r.name}`];
      if (s instanceof Error) throw s;
      return s;
    },
  };
  test('a Deployment counts once for the pods of all its ReplicaSets; other kinds add their own', async () => {
    const pods = [
      pod('a', { controllerRef: ref('ReplicaSet', 'web-1') }), pod('b', { controllerRef: ref('ReplicaSet', 'web-2') }),
      pod('c', { controllerRef: ref('ReplicaSet', 'solo') }), pod('d', { controllerRef: ref('StatefulSet', 'db') }),
      pod('e', { controllerRef: ref('ReplicationController', 'old', 'v1') }), pod('f', { controllerRef: ref('Widget', 'w', 'example.com/v1') }),
      pod('g'),
    ];
    expect(await expectedScale('ns', pods, lookup)).toEqual({ expectedCount: 5 + 2 + 3 + 1 + 4 });
  });
  test('a controller with another UID under the name, or none, is upstream\'s error; a kind without scale says so', async () => {
    expect(await expectedScale('ns', [pod('a', { controllerRef: { ...ref('StatefulSet', 'db'), uid: 'other' } })], lookup))
      .toEqual({ error: 'found no controllers for pod "a"' });
    expect(await expectedScale('ns', [pod('a', { controllerRef: ref('DaemonSet', 'ds') })], lookup))
      .toEqual({ error: 'daemonsets.apps does not implement the scale subresource' });
  });
});

describe('merging signals', () => {
  test('pod news folds by name; a later whole set replaces what came before; a deletion wins', () => {
    const b = budget();
    const m1 = mergePdbEvents({ pdb: b, pods: [pod('a')], allPods: true }, { pods: [pod('b')], podsGone: ['a'] });
    expect(m1).toEqual({ pdb: b, allPods: true, pods: [pod('b')], podsGone: ['a'] });
    expect(mergePdbEvents(m1, { pdb: b, pods: [pod('c')], allPods: true })).toEqual({ pdb: b, pods: [pod('c')], allPods: true });
    expect(mergePdbEvents(m1, { pdbGone: true })).toEqual({ pdbGone: true });
    expect(mergePdbEvents({ shared: [{ name: 'a', uid: 'u-a' }] }, { pods: [pod('a')] }).shared).toEqual([{ name: 'a', uid: 'u-a' }]);
  });
});
