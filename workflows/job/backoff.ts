/**
 * Pod-failure backoff of the job controller, modelled on upstream's backoff_utils.go (v1.35): the
 * per-Job record of consecutive failures since the last success, the per-index delay of
 * backoffLimitPerIndex jobs, and the time at which a pod is taken to have finished.
 * Pure and workflow-safe: the current time always comes in as `nowMs`.
 */
import type { ContainerStatusLike, JobPodStatus, PodFailurePolicy, PodReplacementPolicy } from './api';
import { completionIndexOf, hasIndex, indexAbsoluteFailureCount, isPodFailed, type Interval } from './indexes';

/** Upstream DefaultJobPodFailureBackOff: the delay after the first failure. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
/** Upstream MaxJobPodFailureBackOff: the doubling stops here. */
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;

/** Kept by the Job's workflow between reconciles; upstream keeps it in an in-memory store. */
export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  /** epoch ms of the latest counted failure; absent when there is none */
  lastFailureTimeMs?: number;
}

/**
 * Optional pod facts that sharpen finishedTimeMs; a plain JobPodStatus works without them.
 * `sidecarContainerNames` are the spec's init containers with restartPolicy Always (SidecarContainers
 * is GA in v1.35, so their statuses count too).
 */
export interface FinishedTimeExtras {
  deletionGracePeriodSeconds?: number;
  /** RFC 3339 */
  creationTimestamp?: string;
  sidecarContainerNames?: readonly string[];
}

function timeMs(t: string | undefined): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Latest finishedAt over the given statuses; undefined as soon as one of them has not terminated (or
 * has no finish time), which discards what earlier lists contributed, as upstream does.
 */
function latestFinish(
  prev: number | undefined,
  statuses: readonly ContainerStatusLike[],
  include?: (name: string) => boolean,
): { ok: boolean; ms: number | undefined } {
  let latest = prev;
  for (const cs of statuses) {
    if (include && !include(cs.name)) continue;
    const t = timeMs(cs.terminated?.finishedAt);
    if (t === undefined) return { ok: false, ms: undefined };
    if (latest === undefined || latest < t) latest = t;
  }
  return { ok: true, ms: latest };
}

function finishFromContainers(pod: JobPodStatus & FinishedTimeExtras): number | undefined {
  const regular = latestFinish(undefined, pod.containerStatuses ?? []);
  if (!regular.ok) return undefined;
  const sidecars = new Set(pod.sidecarContainerNames ?? []);
  const all = latestFinish(regular.ms, pod.initContainerStatuses ?? [], (n) => sidecars.has(n));
  return all.ok ? all.ms : undefined;
}

/**
 * When the pod is taken to have finished: the latest container finish time once every container
 * terminated; else the Ready=False transition time (kubelet sets it on the way to a terminal phase);
 * else the deletion time minus the grace period (orphans removed by PodGC); else its creation time;
 * else `nowMs`, for a pod whose status carries none of these.
 */
export function finishedTimeMs(pod: JobPodStatus & FinishedTimeExtras, nowMs: number): number {
  const fromContainers = finishFromContainers(pod);
  if (fromContainers !== undefined) return fromContainers;
  const ready = (pod.conditions ?? []).find((c) => c.type === 'Ready');
  if (ready && ready.status === 'False') {
    const t = timeMs(ready.lastTransitionTime);
    if (t !== undefined) return t;
  }
  const deleted = timeMs(pod.deletionTimestamp);
  if (deleted !== undefined) return deleted - (pod.deletionGracePeriodSeconds ?? 0) * 1000;
  return timeMs(pod.creationTimestamp) ?? nowMs;
}

/**
 * The record after a sync that saw these newly finished pods. Only failures: they add up and the
 * latest becomes the last failure. Any success resets the count, then failures that finished
 * strictly after the latest success count again, the latest of them becoming the last failure.
 */
export function nextBackoffRecord(
  prev: BackoffRecord,
  newSucceeded: readonly JobPodStatus[],
  newFailed: readonly JobPodStatus[],
  nowMs: number,
): BackoffRecord {
  const failedTimes = newFailed.map((p) => finishedTimeMs(p, nowMs)).sort((a, b) => a - b);
  if (newSucceeded.length === 0) {
    if (failedTimes.length === 0) return { ...prev };
    return {
      failuresAfterLastSuccess: prev.failuresAfterLastSuccess + failedTimes.length,
      lastFailureTimeMs: failedTimes[failedTimes.length - 1],
    };
  }
  const lastSuccess = Math.max(...newSucceeded.map((p) => finishedTimeMs(p, nowMs)));
  const next: BackoffRecord = { failuresAfterLastSuccess: 0 };
  for (let i = failedTimes.length - 1; i >= 0 && failedTimes[i] > lastSuccess; i--) {
    if (next.lastFailureTimeMs === undefined) next.lastFailureTimeMs = failedTimes[i];
    next.failuresAfterLastSuccess++;
  }
  return next;
}

/**
 * Delay before the next pod may be created: `baseMs` after one failure, doubling per further
 * failure up to `maxMs`, less the time already passed since the last failure; never negative.
 */
export function remainingForFailures(
  failures: number,
  lastFailureTimeMs: number | undefined,
  nowMs: number,
  baseMs = DEFAULT_POD_FAILURE_BACKOFF_MS,
  maxMs = MAX_POD_FAILURE_BACKOFF_MS,
): number {
  if (failures <= 0) return 0;
  let delay = baseMs;
  for (let i = 1; i < failures; i++) {
    delay *= 2;
    if (delay >= maxMs) {
      delay = maxMs;
      break;
    }
  }
  // upstream dereferences the time unconditionally; a record with failures always carries one
  const elapsed = nowMs - (lastFailureTimeMs ?? nowMs);
  return delay < elapsed ? 0 : delay - elapsed;
}

/** The Job-wide delay (jobs without backoffLimitPerIndex). */
export function remainingBackoffMs(
  record: BackoffRecord,
  nowMs: number,
  baseMs = DEFAULT_POD_FAILURE_BACKOFF_MS,
  maxMs = MAX_POD_FAILURE_BACKOFF_MS,
): number {
  return remainingForFailures(record.failuresAfterLastSuccess, record.lastFailureTimeMs, nowMs, baseMs, maxMs);
}

/**
 * The delay for one index of a backoffLimitPerIndex job, from its last failed pod: that pod's failure
 * and ignored-failure annotations plus its own failure give the count, its finish time the start.
 * No failed pod means no delay.
 */
export function remainingBackoffPerIndexMs(
  lastFailedPod: (JobPodStatus & FinishedTimeExtras) | undefined,
  nowMs: number,
  baseMs = DEFAULT_POD_FAILURE_BACKOFF_MS,
  maxMs = MAX_POD_FAILURE_BACKOFF_MS,
): number {
  if (!lastFailedPod) return 0;
  const failures = indexAbsoluteFailureCount(lastFailedPod) + 1;
  return remainingForFailures(failures, finishedTimeMs(lastFailedPod, nowMs), nowMs, baseMs, maxMs);
}

/**
 * Upstream's getPodsWithDelayedDeletionPerIndex, for backoffLimitPerIndex jobs: per index that is not
 * succeeded, not failed and has no active pod, its latest failed pod (highest absolute failure count,
 * then latest finish). The controller keeps that pod's tracking finalizer until a replacement exists,
 * so the replacement can inherit its failure counts, and times the index's backoff from it.
 * `pods` must already be limited to what upstream calls valid pods: still carrying the tracking
 * finalizer and not waiting for its removal. Indexes outside [0, completions) are skipped.
 */
export function lastFailedPodPerIndex<P extends JobPodStatus & FinishedTimeExtras>(
  pods: readonly P[],
  ctx: {
    completions: number;
    succeeded: readonly Interval[];
    failed?: readonly Interval[];
    activeIndexes: ReadonlySet<number>;
    podFailurePolicy?: PodFailurePolicy;
    podReplacementPolicy?: PodReplacementPolicy;
  },
  nowMs: number,
): Map<number, P> {
  const result = new Map<number, P>();
  for (const p of pods) {
    if (!isPodFailed(p, ctx)) continue;
    const ix = completionIndexOf(p);
    if (ix === undefined || ix >= ctx.completions) continue;
    if (hasIndex(ctx.succeeded, ix) || hasIndex(ctx.failed ?? [], ix) || ctx.activeIndexes.has(ix)) continue;
    const prev = result.get(ix);
    if (
      !prev ||
      (indexAbsoluteFailureCount(prev) <= indexAbsoluteFailureCount(p) && finishedTimeMs(p, nowMs) >= finishedTimeMs(prev, nowMs))
    ) {
      result.set(ix, p);
    }
  }
  return result;
}
