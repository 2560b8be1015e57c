/*
 * The disruption controller's decisions (upstream pkg/controller/disruption), as pure functions:
 * how many pods a budget expects and wants healthy, which evictions the API server recorded are
 * still pending, the status and its DisruptionAllowed condition, and when a pod's DisruptionTarget
 * condition has gone stale.
 */
import { scaledValue } from '../common/int-or-percent';
import type { LabelSelector } from '../common/meta';
import { formatTime, parseTime } from '../replicaset/logic';
import type { PdbCondition, PdbPodView, PdbStatus, PdbView } from './types';

export const CONTROLLER = 'disruption';
/** upstream's recorder names itself so, not after the controller */
export const EVENT_COMPONENT = 'controllermanager';
/** how long a pod the eviction API let go may take to show its deletion before it counts again */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
/** how long a DisruptionTarget condition may stand on a pod that is not being deleted */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';
export const SYNC_FAILED = 'SyncFailed';
export const DISRUPTION_TARGET = 'DisruptionTarget';
/** the kubelet's reason: such a condition is never stale, the kubelet is working towards it */
export const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** The budget counts pods against its controllers' scale: a maxUnavailable or a percentage minAvailable. */
export function needsControllerScale(pdb: Pick<PdbView, 'minAvailable' | 'maxUnavailable'>): boolean {
  return pdb.maxUnavailable != null || typeof pdb.minAvailable === 'string';
}

/** Pods without a controller: a percentage or maxUnavailable cannot count them (upstream warns). */
export function unmanagedPods(pods: readonly PdbPodView[]): string[] {
  return pods.filter((p) => !p.controllerRef).map((p) => p.name);
}

export interface BudgetCounts {
  expectedCount: number;
  desiredHealthy: number;
  error?: string;
}

/**
 * Upstream's getExpectedPodCount: with maxUnavailable, or a percentage minAvailable, the expected
 * count is the summed scale of the pods' controllers (`controllerScale`); with an integer
 * minAvailable it is the number of pods the selector matches.
 */
export function budgetCounts(pdb: Pick<PdbView, 'minAvailable' | 'maxUnavailable'>, podCount: number, controllerScale: number): BudgetCounts {
  if (pdb.maxUnavailable != null) {
    const m = scaledValue(pdb.maxUnavailable, controllerScale, true);
    if (m.error) return { expectedCount: controllerScale, desiredHealthy: 0, error: m.error };
    return { expectedCount: controllerScale, desiredHealthy: Math.max(0, controllerScale - m.value) };
  }
  if (pdb.minAvailable != null) {
    if (typeof pdb.minAvailable === 'number') return { expectedCount: podCount, desiredHealthy: pdb.minAvailable };
    const m = scaledValue(pdb.minAvailable, controllerScale, true);
    if (m.error) return { expectedCount: controllerScale, desiredHealthy: 0, error: m.error };
    return { expectedCount: controllerScale, desiredHealthy: m.value };
  }
  return { expectedCount: 0, desiredHealthy: 0 };
}

export interface DisruptedPods {
  /** the entries that still hold back their pods */
  disrupted: Record<string, string>;
  /** the earliest moment one of them expires (ms), when the budget must be looked at again */
  recheckAtMs?: number;
  /** pods whose eviction was recorded but which were never deleted: upstream warns on each */
  notDeleted: string[];
}

/**
 * Upstream's buildDisruptedPodMap: an entry stays while its pod exists, is not yet being deleted,
 * and its deletion is not overdue; an overdue one is dropped with a warning.
 */
export function disruptedPodMap(status: Pick<PdbStatus, 'disruptedPods'>, pods: readonly PdbPodView[], nowMs: number): DisruptedPods {
  const out: DisruptedPods = { disrupted: {}, notDeleted: [] };
  const recorded = status.disruptedPods;
  if (!recorded) return out;
  for (const p of pods) {
    if (p.deleting) continue;
    const at = recorded[p.name];
    if (at === undefined) continue;
    const due = (parseTime(at) ?? 0) + DELETION_TIMEOUT_MS;
    if (due < nowMs) {
      out.notDeleted.push(p.name);
      continue;
    }
    if (out.recheckAtMs === undefined || due < out.recheckAtMs) out.recheckAtMs = due;
    out.disrupted[p.name] = at;
  }
  return out;
}

/** Upstream's countHealthyPods: Ready pods, less those being deleted or whose eviction is still pending. */
export function countHealthy(pods: readonly PdbPodView[], disrupted: Readonly<Record<string, string>>, nowMs: number): number {
  let n = 0;
  for (const p of pods) {
    if (p.deleting) continue;
    const at = disrupted[p.name];
    if (at !== undefined && (parseTime(at) ?? 0) + DELETION_TIMEOUT_MS > nowMs) continue;
    if (p.ready) n++;
  }
  return n;
}

/**
 * metav1's SetStatusCondition on a copy: a new condition is appended (stamped now); an existing one
 * takes the new status (re-stamped only when the status changes), reason, message and generation.
 */
export function setStatusCondition(conditions: readonly PdbCondition[] | undefined, c: Omit<PdbCondition, 'lastTransitionTime'>, nowMs: number): PdbCondition[] {
  const out = (conditions ?? []).map((x) => ({ ...x }));
  const i = out.findIndex((x) => x.type === c.type);
  const stamp = formatTime(nowMs);
  if (i < 0) {
    out.push(withGeneration({ type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: stamp }, c.observedGeneration));
    return out;
  }
  const old = out[i];
  out[i] = withGeneration({
    type: old.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    lastTransitionTime: old.status !== c.status ? stamp : old.lastTransitionTime,
  }, c.observedGeneration);
  return out;
}

/** observedGeneration is omitted when zero, as the API serializes it */
function withGeneration(c: PdbCondition, generation: number | undefined): PdbCondition {
  return generation ? { ...c, observedGeneration: generation } : c;
}

const sameMap = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined) => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => b?.[k] !== undefined && parseTime(b[k]) === parseTime(a![k]));
};

/** pdbhelper.ConditionsAreUpToDate: the DisruptionAllowed condition says what disruptionsAllowed says. */
export function conditionsUpToDate(pdb: Pick<PdbView, 'generation' | 'status'>): boolean {
  const c = pdb.status.conditions?.find((x) => x.type === DISRUPTION_ALLOWED);
  if (!c || (pdb.status.observedGeneration ?? 0) !== pdb.generation) return false;
  return pdb.status.disruptionsAllowed > 0 ? c.status === 'True' && c.reason === SUFFICIENT_PODS : c.status === 'False' && c.reason === INSUFFICIENT_PODS;
}

/**
 * Upstream's updatePdbStatus: the status to write, or undefined when the stored one already says
 * it. No disruption is allowed while the budget expects no pod, so that a budget whose first pods
 * appear before its status is written is safe.
 */
export function nextStatus(pdb: PdbView, currentHealthy: number, counts: BudgetCounts, disrupted: Readonly<Record<string, string>>, nowMs: number): PdbStatus | undefined {
  let allowed = currentHealthy - counts.desiredHealthy;
  if (counts.expectedCount <= 0 || allowed <= 0) allowed = 0;
  const s = pdb.status;
  if (s.currentHealthy === currentHealthy && s.desiredHealthy === counts.desiredHealthy && s.expectedPods === counts.expectedCount &&
    s.disruptionsAllowed === allowed && sameMap(s.disruptedPods, disrupted) && (s.observedGeneration ?? 0) === pdb.generation &&
    conditionsUpToDate(pdb)) {
    return undefined;
  }
  const sufficient = allowed > 0;
  return {
    currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedCount,
    disruptionsAllowed: allowed,
    ...(Object.keys(disrupted).length ? { disruptedPods: { ...disrupted } } : {}),
    ...(pdb.generation ? { observedGeneration: pdb.generation } : {}),
    conditions: setStatusCondition(s.conditions, {
      type: DISRUPTION_ALLOWED,
      status: sufficient ? 'True' : 'False',
      reason: sufficient ? SUFFICIENT_PODS : INSUFFICIENT_PODS,
      message: '',
      observedGeneration: pdb.generation,
    }, nowMs),
  };
}

/**
 * Upstream's failSafe: when the budget cannot be computed, at least no eviction is allowed. The
 * rest of the status stays as it was; the condition says why.
 */
export function failSafeStatus(pdb: PdbView, message: string, nowMs: number): PdbStatus {
  return {
    ...pdb.status,
    disruptionsAllowed: 0,
    conditions: setStatusCondition(pdb.status.conditions, {
      type: DISRUPTION_ALLOWED, status: 'False', reason: SYNC_FAILED, message, observedGeneration: pdb.status.observedGeneration,
    }, nowMs),
  };
}

/**
 * metav1.LabelSelector's generated String(), which upstream prints into the UnmanagedPods warning:
 * the text must be Go's, so it is spelled out here.
 */
export function selectorString(s: LabelSelector | null | undefined): string {
  if (!s) return 'nil';
  const labels = Object.keys(s.matchLabels ?? {}).sort().map((k) => `${k}: ${s.matchLabels![k]},`).join('');
  const exprs = (s.matchExpressions ?? []).map((r) => `LabelSelectorRequirement{Key:${r.key},Operator:${r.operator},Values:[${(r.values ?? []).join(' ')}],},`).join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

export const unmanagedPodsMessage = (s: LabelSelector | null | undefined) =>
  `Pods selected by this PodDisruptionBudget (selector: ${selectorString(s)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`;

/** Upstream's text names the budget's namespace twice; kept, as users' alerts may match it. */
export const notDeletedMessage = (pdb: Pick<PdbView, 'namespace'>) => `Pod was expected by PDB ${pdb.namespace}/${pdb.namespace} to be deleted but it wasn't`;

export const sharedPodMessage = (namespace: string, pod: string, chosen: string) =>
  `Pod ${JSON.stringify(namespace)}/${JSON.stringify(pod)} matches multiple PodDisruptionBudgets.  Chose ${JSON.stringify(chosen)} arbitrarily.`;

/** What the stale-condition check reads of a pod. */
export interface DisruptionTargetView {
  deleting: boolean;
  phase?: string;
  condition?: { status: string; reason?: string; lastTransitionTime?: string };
}

/**
 * Upstream's nonTerminatingPodHasStaleDisruptionCondition: a True DisruptionTarget condition on a
 * pod that is neither being deleted nor finished, and not the kubelet's, is stale once it is two
 * minutes old. Undefined when there is no such condition; otherwise how long until it is stale.
 */
export function staleConditionWaitMs(pod: DisruptionTargetView, nowMs: number): number | undefined {
  const c = pod.condition;
  if (pod.deleting || !c || c.status !== 'True' || c.reason === TERMINATION_BY_KUBELET) return undefined;
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return undefined;
  return Math.max(0, (parseTime(c.lastTransitionTime) ?? 0) + STALE_POD_DISRUPTION_TIMEOUT_MS - nowMs);
}
