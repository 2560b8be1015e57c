/*
 * The taint eviction controller's decisions (upstream pkg/controller/tainteviction), as pure
 * functions over one node's NoExecute taints and the pods bound to it.
 */
import { tolerates, type TaintView, type TolerationView } from '../common/tolerations';

export { tolerates };

export const CONTROLLER = 'taint-eviction';
/** the Event source upstream's recorder names */
export const EVENT_COMPONENT = 'taint-eviction-controller';
export const EVENT_REASON = 'TaintManagerEviction';
export const DISRUPTION_REASON = 'DeletionByTaintManager';
export const DISRUPTION_MESSAGE = 'Taint manager: deleting due to NoExecute taint';

export type { TaintView, TolerationView };

/** What the controller reads of a pod bound to the node. */
export interface EvictionPodView {
  namespace: string;
  name: string;
  uid: string;
  tolerations: TolerationView[];
}

/** An eviction counting down: when it was first scheduled and when it fires (ms since the epoch). */
export interface ScheduledEviction {
  createdAtMs: number;
  fireAtMs: number;
}

export const podKey = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/** Only NoExecute taints evict; the others are the scheduler's business. */
export function noExecuteTaints(taints: readonly TaintView[] | undefined): TaintView[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute').map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
}

/** Every taint needs a toleration; the first that covers it is the one used (upstream's GetMatchingTolerations). */
export function matchingTolerations(taints: readonly TaintView[], tolerations: readonly TolerationView[]): { allTolerated: boolean; used: TolerationView[] } {
  const used: TolerationView[] = [];
  for (const taint of taints) {
    const t = tolerations.find((x) => tolerates(x, taint));
    if (!t) return { allTolerated: false, used: [] };
    used.push(t);
  }
  return { allTolerated: true, used };
}

/**
 * How long the pod may stay: the shortest tolerationSeconds among the tolerations used (zero or
 * less: none), or undefined when none sets one, which means forever.
 */
export function minToleration(used: readonly TolerationView[]): number | undefined {
  if (used.length === 0) return 0;
  let min: number | undefined;
  for (const t of used) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    if (min === undefined || t.tolerationSeconds < min) min = t.tolerationSeconds;
  }
  return min === undefined ? undefined : min * 1000;
}

/** What one look at a pod decides. `cancel` cancels a countdown (with its Event); `schedule` starts one. */
export interface PodPlan {
  cancel: boolean;
  schedule?: ScheduledEviction;
}

/**
 * Upstream's processPodOnNode: a pod that does not tolerate every taint goes now; one that
 * tolerates them all forever has its countdown cancelled; otherwise a countdown from now runs for
 * the shortest toleration, and one already running is kept as it is.
 */
export function planPod(taints: readonly TaintView[], pod: EvictionPodView, current: ScheduledEviction | undefined, nowMs: number): PodPlan {
  if (taints.length === 0) return { cancel: current !== undefined };
  const { allTolerated, used } = matchingTolerations(taints, pod.tolerations);
  if (!allTolerated) return { cancel: current !== undefined, schedule: { createdAtMs: nowMs, fireAtMs: nowMs } };
  const min = minToleration(used);
  if (min === undefined) return { cancel: current !== undefined };
  // a countdown already running started earlier, so it ends no later than a new one would. One
  // started at this very instant is the same countdown: workflow time stands still within a task,
  // and a pod planned twice in one task must not get a cancel Event for it (upstream's clock moves
  // between two looks, so its strict comparison never meets this case)
  if (current && current.createdAtMs + min <= nowMs + min) return { cancel: false };
  return { cancel: current !== undefined, schedule: { createdAtMs: current?.createdAtMs ?? nowMs, fireAtMs: nowMs + min } };
}

/** The countdowns due at `nowMs`, soonest first. */
export function dueEvictions(scheduled: ReadonlyMap<string, ScheduledEviction>, nowMs: number): string[] {
  return [...scheduled].filter(([, s]) => s.fireAtMs <= nowMs).sort((a, b) => a[1].fireAtMs - b[1].fireAtMs || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
}

/** When the next countdown ends, if any runs. */
export function nextFireAt(scheduled: ReadonlyMap<string, ScheduledEviction>): number | undefined {
  let next: number | undefined;
  for (const s of scheduled.values()) if (next === undefined || s.fireAtMs < next) next = s.fireAtMs;
  return next;
}

export function sameTaints(a: readonly TaintView[], b: readonly TaintView[]): boolean {
  return a.length === b.length && a.every((t, i) => t.key === b[i].key && (t.value ?? '') === (b[i].value ?? '') && t.effect === b[i].effect);
}

export function sameTolerations(a: readonly TolerationView[], b: readonly TolerationView[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
