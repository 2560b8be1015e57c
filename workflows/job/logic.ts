/**
 * Pure decisions of one Job sync, modelled on upstream's job controller (v1.35, syncJob, manageJob,
 * trackJobStatusAndRemoveFinalizers) with its feature gates at their defaults. Workflow-safe: no
 * I/O, no clock (time comes in as nowMs).
 *
 * A sync runs in phases because each write's outcome shapes the next decision:
 *   assessSync        -> what to delete or create (or how long to wait)
 *   (the workflow deletes / creates)
 *   planTracking      -> the status to flush (new uncounted pods, interim conditions) and the
 *                        pods whose tracking finalizer may go
 *   (the workflow writes that status, then removes the finalizers)
 *   finishTracking    -> counters for pods no longer holding the finalizer, the terminal
 *                        condition once nothing is left uncounted or terminating
 * A finished pod is therefore first listed in status.uncountedTerminatedPods, then loses its
 * finalizer, then moves into succeeded/failed: a crash between any two steps neither loses nor
 * double-counts it.
 */
import { formatTime, parseTime } from '../replicaset/logic';
import type {
  JobCondition,
  JobConditionType,
  JobStatus,
} from './api';
import { remainingBackoffMs, remainingBackoffPerIndexMs, finishedTimeMs, nextBackoffRecord, type BackoffRecord } from './backoff';
import {
  completionIndexOf,
  duplicatedIndexPodsForRemoval,
  firstPendingIndexes,
  formatIndexes,
  hasIndex,
  indexAbsoluteFailureCount,
  isIndexFailed,
  isPodFailed,
  newIndexFailureCounts,
  onlyReplaceFailedPods,
  parseIndexes,
  totalIndexes,
  withIndexes,
  type Interval,
} from './indexes';
import { matchPodFailurePolicy } from './pod-failure-policy';
import { matchSuccessPolicy } from './success-policy';
import { JOB_CONTROLLER_NAME, type JobPod, type JobView } from './types';

/** Upstream MaxUncountedPods: a sync adds at most this many pods to uncountedTerminatedPods. */
export const MAX_UNCOUNTED_PODS = 500;
/** Upstream MaxPodCreateDeletePerSync. */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

export const REASON_BACKOFF_LIMIT_EXCEEDED = 'BackoffLimitExceeded';
export const REASON_DEADLINE_EXCEEDED = 'DeadlineExceeded';
export const REASON_POD_FAILURE_POLICY = 'PodFailurePolicy';
export const REASON_MAX_FAILED_INDEXES_EXCEEDED = 'MaxFailedIndexesExceeded';
export const REASON_FAILED_INDEXES = 'FailedIndexes';
export const REASON_COMPLETIONS_REACHED = 'CompletionsReached';
export const REASON_SUCCESS_POLICY = 'SuccessPolicy';

export interface JobEventRecord {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Tunable pod-failure backoff (tests shorten it); upstream's 10 s / 10 min by default. */
export interface BackoffTuning {
  baseMs?: number;
  maxMs?: number;
}

// ---------------------------------------------------------------------------------------------
// small predicates

export function isIndexed(job: JobView): boolean {
  return job.completionMode === 'Indexed';
}

export function hasBackoffLimitPerIndex(job: JobView): boolean {
  return job.backoffLimitPerIndex !== undefined;
}

/** Complete or Failed: upstream never touches such a Job again. */
export function isJobFinished(job: JobView): boolean {
  return (job.status.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** The controller named in spec.managedBy when it is not this one (JobManagedBy is on in v1.35). */
export function managedByOther(job: JobView): string | undefined {
  return job.managedBy !== undefined && job.managedBy !== JOB_CONTROLLER_NAME ? job.managedBy : undefined;
}

export function isPodActive(p: JobPod): boolean {
  return p.phase !== 'Succeeded' && p.phase !== 'Failed' && !p.deletionTimestamp;
}

export function isPodTerminating(p: JobPod): boolean {
  return p.phase !== 'Succeeded' && p.phase !== 'Failed' && !!p.deletionTimestamp;
}

function podKey(p: JobPod): string {
  return `${p.namespace}/${p.name}`;
}

function validIndex(job: JobView, p: JobPod): number | undefined {
  const ix = completionIndexOf(p);
  return ix !== undefined && ix < (job.completions ?? 0) ? ix : undefined;
}

function newCondition(type: JobConditionType, status: 'True' | 'False', reason: string, message: string, nowMs: number): JobCondition {
  const t = formatTime(nowMs);
  return { type, status, reason, message, lastProbeTime: t, lastTransitionTime: t };
}

/**
 * Upstream's ensureJobConditionStatus: update the condition of that type when status, reason or
 * message differ, append it when absent (but never append a False one). True when changed.
 */
export function ensureCondition(
  conditions: JobCondition[],
  type: JobConditionType,
  status: 'True' | 'False',
  reason: string,
  message: string,
  nowMs: number,
): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = conditions[i];
    if (c.status === status && (c.reason ?? '') === reason && (c.message ?? '') === message) return false;
    conditions[i] = newCondition(type, status, reason, message, nowMs);
    return true;
  }
  if (status === 'False') return false;
  conditions.push(newCondition(type, status, reason, message, nowMs));
  return true;
}

function trueCondition(job: JobView, type: JobConditionType): JobCondition | undefined {
  return (job.status.conditions ?? []).find((c) => c.type === type && c.status === 'True');
}

function cloneStatus(s: JobStatus): JobStatus {
  return {
    ...s,
    conditions: (s.conditions ?? []).map((c) => ({ ...c })),
    uncountedTerminatedPods: {
      succeeded: [...(s.uncountedTerminatedPods?.succeeded ?? [])],
      failed: [...(s.uncountedTerminatedPods?.failed ?? [])],
    },
  };
}

/** Stable sort, so equal pods keep their order whatever the engine's sort does. */
function stableSort<T>(items: readonly T[], cmp: (a: T, b: T) => number): T[] {
  return items.map((item, i) => ({ item, i })).sort((a, b) => cmp(a.item, b.item) || a.i - b.i).map((x) => x.item);
}

/**
 * Upstream's ActivePods order (first = best to delete). duplicatedIndexPodsForRemoval sorts one
 * index's pods by exactly that order and keeps the last, so handing it all pods under one index
 * yields the whole order without a second copy of the comparator.
 */
function activePodsOrder(pods: readonly JobPod[]): JobPod[] {
  if (pods.length < 2) return [...pods];
  const { remove, keep } = duplicatedIndexPodsForRemoval(pods.map((p) => ({ ...p, index: 0 })), 1);
  const byUid = new Map(pods.map((p) => [p.uid, p] as [string, JobPod]));
  return [...remove, ...keep].map((p) => byUid.get(p.uid) as JobPod);
}

/**
 * Upstream's activePodsForRemoval: for Indexed Jobs every pod with a duplicated, unknown or
 * out-of-range index, then (for any Job) the first pods in ActivePods order until at least
 * rmAtLeast are chosen.
 */
export function activePodsForRemoval(job: JobView, pods: readonly JobPod[], rmAtLeast: number): JobPod[] {
  let rm: JobPod[] = [];
  let left: JobPod[] = [...pods];
  if (isIndexed(job)) {
    const byUid = new Map(pods.map((p) => [p.uid, p] as [string, JobPod]));
    const r = duplicatedIndexPodsForRemoval(pods.map((p) => ({ ...p, index: completionIndexOf(p) })), job.completions ?? 0);
    rm = r.remove.map((p) => byUid.get(p.uid) as JobPod);
    left = r.keep.map((p) => byUid.get(p.uid) as JobPod);
  }
  if (rm.length < rmAtLeast) rm = [...rm, ...activePodsOrder(left).slice(0, rmAtLeast - rm.length)];
  return rm;
}

/** restartPolicy OnFailure: container restarts of running or pending pods count against backoffLimit. */
export function pastBackoffLimitOnFailure(job: JobView, pods: readonly JobPod[]): boolean {
  if (job.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) if (p.phase === 'Running' || p.phase === 'Pending') restarts += p.totalRestarts;
  return job.backoffLimit === 0 ? restarts > 0 : restarts >= job.backoffLimit;
}

export function pastActiveDeadline(job: JobView, nowMs: number): boolean {
  const start = parseTime(job.status.startTime);
  if (job.activeDeadlineSeconds === undefined || start === undefined || job.suspend) return false;
  return nowMs - start >= job.activeDeadlineSeconds * 1000;
}

function failJobMessage(job: JobView, pods: readonly JobPod[]): string | undefined {
  if (!job.podFailurePolicy) return undefined;
  for (const p of pods) {
    if (!isPodFailed(p, job)) continue;
    const m = matchPodFailurePolicy(job.podFailurePolicy, p, podKey(p)).message;
    if (m !== undefined) return m;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// phase 1: assess

export interface SyncInput {
  job: JobView;
  /** the pods the Job controls (after adoption and release) */
  pods: readonly JobPod[];
  /** the workflow's pod failure backoff record */
  backoff: BackoffRecord;
  nowMs: number;
  backoffTuning?: BackoffTuning;
}

/** One pod to create for an Indexed Job. */
export interface IndexedCreate {
  index: number;
  /** batch.kubernetes.io/job-index-failure-count (backoffLimitPerIndex only) */
  failureCount?: number;
  /** batch.kubernetes.io/job-index-ignored-failure-count, only when above zero */
  ignoredFailureCount?: number;
}

export type DeleteReason = 'JobFinished' | 'Suspended' | 'ExcessPods';

export type ManageAction =
  | { kind: 'none' }
  /** delete pods; 'JobFinished' keeps the tracking finalizer (counted below), the others strip it first */
  | { kind: 'delete'; reason: DeleteReason; pods: JobPod[]; message: string }
  | { kind: 'create'; count: number; indexes?: IndexedCreate[]; message: string };

export interface Assessment {
  job: JobView;
  nowMs: number;
  /** the status being built (startTime already set when the Job starts now) */
  status: JobStatus;
  pods: JobPod[];
  activePods: JobPod[];
  ready: number;
  terminating: number;
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  succeeded: number;
  failed: number;
  /** to keep once the first status write of this sync lands */
  newBackoffRecord: BackoffRecord;
  finishedCondition?: JobCondition;
  prevSucceededIndexes: Interval[];
  succeededIndexes: Interval[];
  /** set only with backoffLimitPerIndex */
  failedIndexes?: Interval[];
  /** backoffLimitPerIndex: the failed pod per index whose finalizer waits for its replacement */
  podsWithDelayedDeletion: Map<number, JobPod>;
  manage: ManageAction;
  /** manageJob ran (not finished, not being deleted): the Suspended condition may be updated */
  manageCalled: boolean;
  /** reconcile again after this long: active deadline or pod failure backoff */
  requeueAfterMs?: number;
}

function minWait(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** Newly finished pods: still holding the finalizer, not yet in uncountedTerminatedPods, valid index. */
function newFinishedPods(a: Pick<Assessment, 'job' | 'pods' | 'uncountedSucceeded' | 'uncountedFailed'>): { succeeded: JobPod[]; failed: JobPod[] } {
  const valid = (p: JobPod, uncounted: Set<string>) =>
    p.hasTrackingFinalizer && !uncounted.has(p.uid) && (!isIndexed(a.job) || validIndex(a.job, p) !== undefined);
  return {
    succeeded: a.pods.filter((p) => valid(p, a.uncountedSucceeded) && p.phase === 'Succeeded'),
    failed: a.pods.filter((p) => valid(p, a.uncountedFailed) && isPodFailed(p, a.job)),
  };
}

function countedFailures(job: JobView, failed: readonly JobPod[]): number {
  if (!job.podFailurePolicy) return failed.length;
  return failed.filter((p) => matchPodFailurePolicy(job.podFailurePolicy, p, podKey(p)).countFailed).length;
}

/** Upstream's getPodsWithDelayedDeletionPerIndex. */
function podsWithDelayedDeletionPerIndex(a: Assessment): Map<number, JobPod> {
  const activeIndexes = new Set<number>();
  for (const p of a.activePods) {
    const ix = completionIndexOf(p);
    if (ix !== undefined) activeIndexes.add(ix);
  }
  const out = new Map<number, JobPod>();
  for (const p of a.pods) {
    if (!p.hasTrackingFinalizer || !isPodFailed(p, a.job)) continue;
    const ix = validIndex(a.job, p);
    if (ix === undefined) continue;
    if (hasIndex(a.succeededIndexes, ix) || hasIndex(a.failedIndexes ?? [], ix) || activeIndexes.has(ix)) continue;
    const last = out.get(ix);
    if (
      !last ||
      (indexAbsoluteFailureCount(last) <= indexAbsoluteFailureCount(p) && finishedTimeMs(p, a.nowMs) >= finishedTimeMs(last, a.nowMs))
    ) {
      out.set(ix, p);
    }
  }
  return out;
}

/**
 * The first half of upstream's syncJob: counts, the terminal condition if one is reached, and what
 * manageJob would do. The Job must not be finished nor managed by another controller (the caller
 * checks isJobFinished and managedByOther first).
 */
export function assessSync(input: SyncInput): Assessment {
  const { nowMs } = input;
  const status = cloneStatus(input.job.status);
  const job: JobView = { ...input.job, status };
  const pods = [...input.pods];
  const activePods = pods.filter(isPodActive);
  const a: Assessment = {
    job,
    nowMs,
    status,
    pods,
    activePods,
    ready: activePods.filter((p) => p.ready).length,
    terminating: pods.filter(isPodTerminating).length,
    uncountedSucceeded: new Set(status.uncountedTerminatedPods?.succeeded ?? []),
    uncountedFailed: new Set(status.uncountedTerminatedPods?.failed ?? []),
    succeeded: 0,
    failed: 0,
    newBackoffRecord: input.backoff,
    prevSucceededIndexes: [],
    succeededIndexes: [],
    podsWithDelayedDeletion: new Map(),
    manage: { kind: 'none' },
    manageCalled: false,
  };
  const fresh = newFinishedPods(a);
  a.succeeded = (status.succeeded ?? 0) + fresh.succeeded.length + a.uncountedSucceeded.size;
  a.failed = (status.failed ?? 0) + countedFailures(job, fresh.failed) + a.uncountedFailed.size;

  if (!status.startTime && !job.suspend) status.startTime = formatTime(nowMs);
  a.newBackoffRecord = nextBackoffRecord(input.backoff, fresh.succeeded, fresh.failed, nowMs);

  // Terminal conditions, in upstream's order: an earlier sync's verdict first, then failures, then success.
  a.finishedCondition = trueCondition(job, 'SuccessCriteriaMet');
  if (!a.finishedCondition) {
    const target = trueCondition(job, 'FailureTarget');
    if (target) {
      a.finishedCondition = newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', nowMs);
    } else {
      const msg = failJobMessage(job, pods);
      if (msg !== undefined) a.finishedCondition = newCondition('FailureTarget', 'True', REASON_POD_FAILURE_POLICY, msg, nowMs);
    }
  }
  if (!a.finishedCondition) {
    if (a.failed > job.backoffLimit || pastBackoffLimitOnFailure(job, pods)) {
      a.finishedCondition = newCondition('FailureTarget', 'True', REASON_BACKOFF_LIMIT_EXCEEDED, 'Job has reached the specified backoff limit', nowMs);
    } else if (pastActiveDeadline(job, nowMs)) {
      a.finishedCondition = newCondition('FailureTarget', 'True', REASON_DEADLINE_EXCEEDED, 'Job was active longer than specified deadline', nowMs);
    } else if (job.activeDeadlineSeconds !== undefined && !job.suspend) {
      const start = parseTime(status.startTime) ?? nowMs;
      a.requeueAfterMs = Math.max(0, job.activeDeadlineSeconds * 1000 - (nowMs - start));
    }
  }

  if (isIndexed(job)) {
    const completions = job.completions ?? 0;
    a.prevSucceededIndexes = parseIndexes(status.completedIndexes, completions);
    const fresh = new Set<number>();
    for (const p of pods) {
      const ix = validIndex(job, p);
      if (p.phase === 'Succeeded' && ix !== undefined && p.hasTrackingFinalizer) fresh.add(ix);
    }
    a.succeededIndexes = withIndexes(a.prevSucceededIndexes, [...fresh].sort((x, y) => x - y));
    a.succeeded = totalIndexes(a.succeededIndexes);
    if (hasBackoffLimitPerIndex(job)) {
      const spec = { podFailurePolicy: job.podFailurePolicy, podReplacementPolicy: job.podReplacementPolicy, backoffLimitPerIndex: job.backoffLimitPerIndex ?? 0 };
      const newFailed = new Set<number>();
      for (const p of pods) {
        const ix = validIndex(job, p);
        if (ix !== undefined && p.hasTrackingFinalizer && isIndexFailed(p, spec)) newFailed.add(ix);
      }
      const prev = status.failedIndexes !== undefined ? parseIndexes(status.failedIndexes, completions) : [];
      a.failedIndexes = withIndexes(prev, [...newFailed].sort((x, y) => x - y));
      const failedTotal = totalIndexes(a.failedIndexes);
      if (!a.finishedCondition) {
        if (job.maxFailedIndexes !== undefined && failedTotal > job.maxFailedIndexes) {
          a.finishedCondition = newCondition('FailureTarget', 'True', REASON_MAX_FAILED_INDEXES_EXCEEDED, 'Job has exceeded the specified maximal number of failed indexes', nowMs);
        } else if (failedTotal > 0 && failedTotal + totalIndexes(a.succeededIndexes) >= completions) {
          a.finishedCondition = newCondition('FailureTarget', 'True', REASON_FAILED_INDEXES, 'Job has failed indexes', nowMs);
        }
      }
      a.podsWithDelayedDeletion = podsWithDelayedDeletionPerIndex(a);
    }
    if (!a.finishedCondition) {
      const m = matchSuccessPolicy(job.successPolicy, completions, a.succeededIndexes);
      if (m.matched) a.finishedCondition = newCondition('SuccessCriteriaMet', 'True', REASON_SUCCESS_POLICY, m.message, nowMs);
    }
  }

  if (a.finishedCondition) {
    if (activePods.length) {
      a.manage = { kind: 'delete', reason: 'JobFinished', pods: activePods, message: `the Job is finishing (${a.finishedCondition.reason}): delete its ${activePods.length} active pods` };
    }
  } else if (!job.deletionTimestamp) {
    a.manageCalled = true;
    const planned = planManage(a, input.backoffTuning ?? {});
    a.manage = planned.action;
    a.requeueAfterMs = minWait(a.requeueAfterMs, planned.waitMs);
  }
  return a;
}

/** Upstream's manageJob, minus the I/O: delete, create, or wait out the pod failure backoff. */
function planManage(a: Assessment, tuning: BackoffTuning): { action: ManageAction; waitMs?: number } {
  const { job, activePods } = a;
  const active = activePods.length;
  if (job.suspend) {
    const pods = activePodsForRemoval(job, activePods, active);
    return pods.length ? { action: { kind: 'delete', reason: 'Suspended', pods, message: `the Job is suspended: delete its ${pods.length} active pods` } } : { action: { kind: 'none' } };
  }
  let wantActive: number;
  if (job.completions === undefined) {
    wantActive = a.succeeded > 0 ? active : job.parallelism;
  } else {
    wantActive = Math.max(0, Math.min(job.completions - a.succeeded, job.parallelism));
  }
  const rmAtLeast = Math.max(0, active - wantActive);
  const toDelete = activePodsForRemoval(job, activePods, rmAtLeast).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
  if (toDelete.length) {
    return { action: { kind: 'delete', reason: 'ExcessPods', pods: toDelete, message: `${active} active pods, ${wantActive} wanted (duplicated or out-of-range indexes count as excess)` } };
  }

  const terminating = onlyReplaceFailedPods(job) ? a.terminating : 0;
  let diff = wantActive - terminating - active;
  if (diff <= 0) return { action: { kind: 'none' } };
  if (!hasBackoffLimitPerIndex(job)) {
    const wait = remainingBackoffMs(a.newBackoffRecord, a.nowMs, tuning.baseMs, tuning.maxMs);
    if (wait > 0) return { action: { kind: 'none' }, waitMs: wait };
  }
  diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
  const message = `${active} active pods, ${wantActive} wanted`;
  if (!isIndexed(job)) return { action: { kind: 'create', count: diff, message } };

  const indexesOf = (pods: readonly JobPod[]) => {
    const s = new Set<number>();
    for (const p of pods) {
      const ix = completionIndexOf(p);
      if (ix !== undefined) s.add(ix);
    }
    return s;
  };
  let indexes = firstPendingIndexes(diff, job.completions ?? 0, {
    succeeded: a.succeededIndexes,
    failed: a.failedIndexes,
    activeIndexes: indexesOf(activePods),
    delayedIndexes: onlyReplaceFailedPods(job) ? indexesOf(a.pods.filter(isPodTerminating)) : undefined,
  });
  if (hasBackoffLimitPerIndex(job)) {
    const now: number[] = [];
    let soonest: number | undefined;
    for (const ix of indexes) {
      const wait = remainingBackoffPerIndexMs(a.podsWithDelayedDeletion.get(ix), a.nowMs, tuning.baseMs, tuning.maxMs);
      if (wait === 0) now.push(ix);
      else soonest = minWait(soonest, wait);
    }
    if (!now.length && soonest !== undefined) return { action: { kind: 'none' }, waitMs: soonest };
    indexes = now;
  }
  if (!indexes.length) return { action: { kind: 'none' } };
  const creates: IndexedCreate[] = indexes.map((index) => {
    if (!hasBackoffLimitPerIndex(job)) return { index };
    const counts = newIndexFailureCounts(a.podsWithDelayedDeletion.get(index), job.podFailurePolicy);
    return { index, failureCount: counts.failureCount, ...(counts.ignoredFailureCount > 0 ? { ignoredFailureCount: counts.ignoredFailureCount } : {}) };
  });
  return { action: { kind: 'create', count: creates.length, indexes: creates, message } };
}

// ---------------------------------------------------------------------------------------------
// phase 2: after the deletes / creates, plan the tracking writes

export interface ManageOutcome {
  /** pods deleted (NotFound counts as deleted) */
  deleted: number;
  /** of those, how many were ready */
  deletedReady: number;
  /** pods created */
  created: number;
  /** some write failed: the sync ends in a backed-off retry after its status is written */
  failed: boolean;
}

export const NO_OUTCOME: ManageOutcome = { deleted: 0, deletedReady: 0, created: 0, failed: false };

export interface TrackingPlan {
  assessment: Assessment;
  /** the status to write before any finalizer is removed (only when needsFlush) */
  status: JobStatus;
  needsFlush: boolean;
  /** pods whose tracking finalizer goes, after the status above is written */
  finalizerRemovals: JobPod[];
  /** UIDs of pods that still hold the finalizer as far as this sync knows */
  uidsWithFinalizer: Set<string>;
  /** the terminal condition to set once nothing is uncounted or terminating (Complete / Failed) */
  finishedCondition?: JobCondition;
  reachedMaxUncounted: boolean;
  terminating: number;
  /** events to record with the first status write (Suspended / Resumed) */
  events: JobEventRecord[];
}

/** Move UIDs that no longer hold the finalizer out of uncountedTerminatedPods into the counters. */
export function cleanUncounted(status: JobStatus, uidsWithFinalizer: ReadonlySet<string>): boolean {
  const u = status.uncountedTerminatedPods ?? {};
  let changed = false;
  const succ = (u.succeeded ?? []).filter((x) => uidsWithFinalizer.has(x));
  if (succ.length !== (u.succeeded ?? []).length) {
    status.succeeded = (status.succeeded ?? 0) + (u.succeeded ?? []).length - succ.length;
    changed = true;
  }
  const fail = (u.failed ?? []).filter((x) => uidsWithFinalizer.has(x));
  if (fail.length !== (u.failed ?? []).length) {
    status.failed = (status.failed ?? 0) + (u.failed ?? []).length - fail.length;
    changed = true;
  }
  status.uncountedTerminatedPods = { succeeded: succ, failed: fail };
  return changed;
}

function canRemoveFinalizer(a: Assessment, finished: JobCondition | undefined, p: JobPod, considerFailed: boolean): boolean {
  if (a.job.deletionTimestamp || finished || p.phase === 'Succeeded') return true;
  if (!considerFailed) return false;
  if (hasBackoffLimitPerIndex(a.job)) {
    const ix = completionIndexOf(p);
    if (ix !== undefined && a.podsWithDelayedDeletion.get(ix)?.uid === p.uid) return false;
  }
  return true;
}

/**
 * The second half of syncJob and the first of trackJobStatusAndRemoveFinalizers: active / ready /
 * terminating after the writes, completion, the Suspended condition, new uncounted pods, the
 * interim FailureTarget / SuccessCriteriaMet condition, and the finalizers that may go.
 */
export function planTracking(a: Assessment, outcome: ManageOutcome): TrackingPlan {
  const { job, status, nowMs } = a;
  let finished = a.finishedCondition;
  let active = a.activePods.length;
  let ready = a.ready;
  let terminating = a.terminating;
  const events: JobEventRecord[] = [];
  let suspendChanged = false;

  if (finished) {
    if (a.manage.kind === 'delete' && outcome.deleted !== active) finished = undefined;
    active -= outcome.deleted;
    terminating += outcome.deleted;
    ready -= outcome.deletedReady;
  } else {
    if (a.manage.kind === 'delete') {
      active -= outcome.deleted;
      terminating += outcome.deleted;
      ready -= outcome.deletedReady;
    } else if (a.manage.kind === 'create') {
      active += outcome.created;
    }
    const complete = job.completions === undefined ? a.succeeded > 0 && active === 0 : a.succeeded >= job.completions && active === 0;
    if (complete) {
      finished = newCondition('SuccessCriteriaMet', 'True', REASON_COMPLETIONS_REACHED, 'Reached expected number of succeeded pods', nowMs);
    } else if (a.manageCalled) {
      const conditions = status.conditions ?? [];
      if (job.suspend) {
        if (ensureCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', nowMs)) {
          suspendChanged = true;
          events.push({ type: 'Normal', reason: 'Suspended', message: 'Job suspended' });
        }
      } else if (ensureCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', nowMs)) {
        suspendChanged = true;
        events.push({ type: 'Normal', reason: 'Resumed', message: 'Job resumed' });
        // activeDeadlineSeconds counts continuous activity, so a resume restarts the clock
        status.startTime = formatTime(nowMs);
      }
      status.conditions = conditions;
    }
  }

  let needsFlush = suspendChanged || active !== (status.active ?? 0) || ready !== status.ready || terminating !== status.terminating;
  status.active = active;
  status.ready = ready;
  status.terminating = terminating;

  // trackJobStatusAndRemoveFinalizers
  const indexed = isIndexed(job);
  const pods = indexed ? stableSort(a.pods, (x, y) => (completionIndexOf(x) ?? -1) - (completionIndexOf(y) ?? -1)) : a.pods;
  const uidsWithFinalizer = new Set(pods.filter((p) => p.hasTrackingFinalizer).map((p) => p.uid));
  if (cleanUncounted(status, uidsWithFinalizer)) needsFlush = true;
  const uncounted = status.uncountedTerminatedPods as { succeeded: string[]; failed: string[] };
  const removals: JobPod[] = [];
  const newSucceededIndexes: number[] = [];
  let reachedMaxUncounted = false;
  for (const p of pods) {
    if (!p.hasTrackingFinalizer) continue;
    const considerFailed = isPodFailed(p, job);
    if (!canRemoveFinalizer(a, finished, p, considerFailed)) continue;
    removals.push(p);
    if (p.phase === 'Succeeded' && !a.uncountedFailed.has(p.uid)) {
      if (indexed) {
        const ix = validIndex(job, p);
        if (ix !== undefined && !hasIndex(a.prevSucceededIndexes, ix)) {
          newSucceededIndexes.push(ix);
          needsFlush = true;
        }
      } else if (!a.uncountedSucceeded.has(p.uid)) {
        uncounted.succeeded.push(p.uid);
        needsFlush = true;
      }
    } else if (considerFailed || (finished && finished.type !== 'SuccessCriteriaMet')) {
      // once the Job is finishing, every pod that did not succeed counts as failed
      const validForIndexed = !indexed || validIndex(job, p) !== undefined;
      if (!a.uncountedFailed.has(p.uid) && validForIndexed) {
        if (!job.podFailurePolicy || matchPodFailurePolicy(job.podFailurePolicy, p, podKey(p)).countFailed) {
          uncounted.failed.push(p.uid);
          needsFlush = true;
        }
      }
    }
    if (newSucceededIndexes.length + uncounted.succeeded.length + uncounted.failed.length >= MAX_UNCOUNTED_PODS) {
      reachedMaxUncounted = true;
      break;
    }
  }
  if (indexed) {
    const succeededIndexes = withIndexes(a.succeededIndexes, newSucceededIndexes);
    const text = formatIndexes(succeededIndexes);
    if (text !== (status.completedIndexes ?? '')) needsFlush = true;
    status.succeeded = totalIndexes(succeededIndexes);
    status.completedIndexes = text;
    const failedText = a.failedIndexes !== undefined ? formatIndexes(a.failedIndexes) : undefined;
    if (failedText !== status.failedIndexes) {
      status.failedIndexes = failedText;
      needsFlush = true;
    }
  }
  if (finished && finished.type === 'FailureTarget') {
    // the reason is on record before any pod can disappear; Failed follows once all is counted
    status.conditions = [...(status.conditions ?? []), finished];
    needsFlush = true;
    finished = newCondition('Failed', 'True', finished.reason ?? '', finished.message ?? '', nowMs);
  }
  if (finished && finished.type === 'SuccessCriteriaMet') {
    if (!trueCondition(job, 'SuccessCriteriaMet')) {
      status.conditions = [...(status.conditions ?? []), finished];
      needsFlush = true;
    }
    finished = newCondition('Complete', 'True', finished.reason ?? '', finished.message ?? '', nowMs);
  }
  return {
    assessment: a,
    status,
    needsFlush,
    finalizerRemovals: removals,
    uidsWithFinalizer,
    finishedCondition: finished,
    reachedMaxUncounted,
    terminating,
    events,
  };
}

// ---------------------------------------------------------------------------------------------
// phase 3: after the finalizer removals

export interface TrackingResult {
  status: JobStatus;
  needsFlush: boolean;
  /** the Job reached Complete / Failed in this status */
  finished: boolean;
  events: JobEventRecord[];
}

/**
 * Counts the pods whose finalizer is gone and, when nothing is left uncounted or terminating (and
 * the sync did not stop at MAX_UNCOUNTED_PODS), sets the terminal condition. `status` is the status
 * as written by the first flush (or plan.status when no flush was needed); `removed` the UIDs whose
 * finalizer removal succeeded (gone pods included).
 */
export function finishTracking(plan: TrackingPlan, status: JobStatus, removed: ReadonlySet<string>, removalFailed: boolean, nowMs: number): TrackingResult {
  const next = cloneStatus(status);
  const withFinalizer = new Set([...plan.uidsWithFinalizer].filter((u) => !removed.has(u)));
  const needsFlush = cleanUncounted(next, withFinalizer);
  if (removalFailed) return { status: next, needsFlush, finished: false, events: [] };
  const events: JobEventRecord[] = [];
  let finished = false;
  const cond = plan.finishedCondition;
  const uncounted = (next.uncountedTerminatedPods?.succeeded?.length ?? 0) + (next.uncountedTerminatedPods?.failed?.length ?? 0);
  if (cond && !plan.reachedMaxUncounted && uncounted === 0 && plan.terminating === 0) {
    const conditions = next.conditions ?? [];
    ensureCondition(conditions, cond.type, 'True', cond.reason ?? '', cond.message ?? '', nowMs);
    next.conditions = conditions;
    if (cond.type === 'Complete') next.completionTime = cond.lastTransitionTime;
    finished = true;
    const job = plan.assessment.job;
    if (cond.type === 'Complete') {
      if (job.completions !== undefined && (next.succeeded ?? 0) > job.completions) {
        events.push({ type: 'Warning', reason: 'TooManySucceededPods', message: 'Too many succeeded pods running after completion count reached' });
      }
      events.push({ type: 'Normal', reason: 'Completed', message: 'Job completed' });
    } else {
      events.push({ type: 'Warning', reason: cond.reason ?? '', message: cond.message ?? '' });
    }
  }
  return { status: next, needsFlush: needsFlush || finished, finished, events };
}

/** Whether two statuses differ in anything this controller writes. */
export function statusChanged(a: JobStatus, b: JobStatus): boolean {
  return JSON.stringify(normalize(a)) !== JSON.stringify(normalize(b));
}

function normalize(s: JobStatus): JobStatus {
  return {
    ...s,
    conditions: s.conditions ?? [],
    uncountedTerminatedPods: { succeeded: s.uncountedTerminatedPods?.succeeded ?? [], failed: s.uncountedTerminatedPods?.failed ?? [] },
  };
}
