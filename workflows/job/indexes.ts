/**
 * Completion indexes of Indexed Jobs, modelled on upstream's indexed_job_utils.go (v1.35): the
 * compressed interval lists in .status.completedIndexes/.failedIndexes and spec.successPolicy, the
 * per-pod index and failure-count annotations, and which indexes still need a pod.
 * Pure and workflow-safe: no I/O, no clocks.
 */
import {
  JOB_COMPLETION_INDEX,
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  type ConditionLike,
  type JobPodStatus,
  type PodFailurePolicy,
  type PodPhase,
  type PodReplacementPolicy,
} from './api';
import { matchPodFailurePolicy } from './pod-failure-policy';

/** An inclusive run of indexes. Lists of them are kept sorted, disjoint and non-adjacent. */
export interface Interval {
  first: number;
  last: number;
}

/** Same limits as the API server's name generator: 63-character names, 5 random characters. */
export const MAX_GENERATED_NAME_LENGTH = 63 - 5;

const INT32_MAX = 2147483647;
const INT64_LIMIT = 9223372036854775807;

/**
 * Go's strconv.Atoi on a 64-bit platform: optional sign, decimal digits only, no spaces.
 * Returns undefined where Atoi errors.
 */
export function goAtoi(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || Math.abs(n) > INT64_LIMIT) return undefined;
  return n;
}

/**
 * Parses "1,3-5" into intervals, the way upstream reads status and success-policy strings: a part that
 * does not parse is skipped, the first part starting at or past `completions` ends the scan, and a
 * range reaching past it is clipped. Adjacent parts are joined.
 */
export function parseIndexes(s: string | undefined, completions: number): Interval[] {
  const result: Interval[] = [];
  if (!s) return result;
  for (const part of s.split(',')) {
    const limits = part.split('-');
    const first = goAtoi(limits[0]);
    if (first === undefined) continue;
    if (first >= completions) break;
    let last = first;
    if (limits.length > 1) {
      const parsed = goAtoi(limits[1]);
      if (parsed === undefined) continue;
      last = parsed >= completions ? completions - 1 : parsed;
    }
    const prev = result[result.length - 1];
    if (prev && prev.last === first - 1) prev.last = last;
    else result.push({ first, last });
  }
  return result;
}

/** The compressed form: runs of two are written "a,b", longer runs "a-b"; "" for none. */
export function formatIndexes(iv: readonly Interval[]): string {
  const parts: string[] = [];
  for (const v of iv) {
    if (v.last === v.first) parts.push(String(v.first));
    else if (v.last === v.first + 1) parts.push(`${v.first},${v.last}`);
    else if (v.last > v.first) parts.push(`${v.first}-${v.last}`);
    else parts.push(String(v.first));
  }
  return parts.join(',');
}

/** Adds single indexes, given in increasing order, to an interval list. */
export function withIndexes(iv: readonly Interval[], newIndexes: readonly number[]): Interval[] {
  return mergeIntervals(
    iv,
    newIndexes.map((i) => ({ first: i, last: i })),
  );
}

/** Union of two sorted interval lists; overlapping or adjacent runs are joined. Inputs are not modified. */
export function mergeIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const result: Interval[] = [];
  const push = (v: Interval): void => {
    const prev = result[result.length - 1];
    if (!prev || v.first > prev.last + 1) result.push({ first: v.first, last: v.last });
    else if (prev.last < v.last) prev.last = v.last;
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i].first < b[j].first) push(a[i++]);
    else push(b[j++]);
  }
  while (i < a.length) push(a[i++]);
  while (j < b.length) push(b[j++]);
  return result;
}

export function totalIndexes(iv: readonly Interval[]): number {
  let n = 0;
  for (const v of iv) n += v.last - v.first + 1;
  return n;
}

/** Binary search over a sorted interval list. */
export function hasIndex(iv: readonly Interval[], ix: number): boolean {
  let lo = 0;
  let hi = iv.length;
  while (hi > lo) {
    const mid = lo + ((hi - lo) >> 1);
    if (iv[mid].last >= ix) hi = mid;
    else lo = mid + 1;
  }
  return hi < iv.length && iv[hi].first <= ix;
}

/**
 * The pod's completion index, from the annotation only: v1.35 writes the index both as annotation
 * and as label but reads back just the annotation. Undefined for a missing, unparsable or negative
 * value (upstream's unknownCompletionIndex). `labels` is accepted so callers can pass a whole pod.
 */
export function completionIndexOf(pod: {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}): number | undefined {
  const v = pod.annotations?.[JOB_COMPLETION_INDEX];
  if (v === undefined) return undefined;
  const i = goAtoi(v);
  if (i === undefined || i < 0) return undefined;
  return i;
}

/** A count annotation as upstream reads it: anything unparsable, negative or beyond int32 is 0. */
function parseCount(v: string | undefined): number {
  if (v === undefined) return 0;
  const n = goAtoi(v);
  if (n === undefined || n < 0 || n > INT32_MAX) return 0;
  return n;
}

/** Counted failures of earlier pods of the same index (batch.kubernetes.io/job-index-failure-count). */
export function indexFailureCount(pod: { annotations?: Record<string, string> }): number {
  return parseCount(pod.annotations?.[JOB_INDEX_FAILURE_COUNT]);
}

/** Failures of earlier pods of the same index that an Ignore rule excluded from the count. */
export function indexIgnoredFailureCount(pod: { annotations?: Record<string, string> }): number {
  return parseCount(pod.annotations?.[JOB_INDEX_IGNORED_FAILURE_COUNT]);
}

/** Both counts together: what the per-index backoff delay grows with. */
export function indexAbsoluteFailureCount(pod: { annotations?: Record<string, string> }): number {
  return indexFailureCount(pod) + indexIgnoredFailureCount(pod);
}

/**
 * The counts a replacement pod carries in its annotations: the replaced failed pod's counts plus its
 * own failure, counted as ignored when the failure policy's matching rule is Ignore. The controller
 * writes the ignored count only when it is above zero. A fresh index (no pod replaced) starts at 0/0.
 */
export function newIndexFailureCounts(
  podBeingReplaced: JobPodStatus | undefined,
  policy: PodFailurePolicy | undefined,
): { failureCount: number; ignoredFailureCount: number } {
  if (!podBeingReplaced) return { failureCount: 0, ignoredFailureCount: 0 };
  let failureCount = indexFailureCount(podBeingReplaced);
  let ignoredFailureCount = indexIgnoredFailureCount(podBeingReplaced);
  if (policy && !matchPodFailurePolicy(policy, podBeingReplaced, '').countFailed) ignoredFailureCount++;
  else failureCount++;
  return { failureCount, ignoredFailureCount };
}

/** The Job spec fields that decide whether a pod counts as failed and whether its index is lost. */
export interface IndexFailureSpec {
  podFailurePolicy?: PodFailurePolicy;
  podReplacementPolicy?: PodReplacementPolicy;
  backoffLimitPerIndex: number;
}

/**
 * Upstream's onlyReplaceFailedPods: with podReplacementPolicy Failed, or any podFailurePolicy, a pod is
 * replaced only once it is Failed (not while it terminates).
 */
export function onlyReplaceFailedPods(spec: { podFailurePolicy?: PodFailurePolicy; podReplacementPolicy?: PodReplacementPolicy }): boolean {
  return spec.podReplacementPolicy === 'Failed' || spec.podFailurePolicy !== undefined;
}

/**
 * Upstream's isPodFailed: phase Failed, or, unless only failed pods are replaced, a pod being deleted
 * before it succeeded (orphans may never reach Failed).
 */
export function isPodFailed(
  pod: Pick<JobPodStatus, 'phase' | 'deletionTimestamp'>,
  spec: { podFailurePolicy?: PodFailurePolicy; podReplacementPolicy?: PodReplacementPolicy },
): boolean {
  if (pod.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(spec)) return false;
  return pod.deletionTimestamp !== undefined && pod.phase !== 'Succeeded';
}

/**
 * Whether this pod's failure marks its index failed (backoffLimitPerIndex jobs only): a FailIndex rule
 * matched, or a counted failure with the index's earlier counted failures already at the limit.
 */
export function isIndexFailed(pod: JobPodStatus, spec: IndexFailureSpec): boolean {
  if (!isPodFailed(pod, spec)) return false;
  let counted = true;
  if (spec.podFailurePolicy) {
    const m = matchPodFailurePolicy(spec.podFailurePolicy, pod, '');
    if (m.action === 'FailIndex') return true;
    counted = m.countFailed;
  }
  return counted && indexFailureCount(pod) >= spec.backoffLimitPerIndex;
}

/**
 * Up to `count` lowest indexes below `completions` that are neither succeeded nor failed, have no
 * active pod and are not in `delayedIndexes`. To match upstream, `delayedIndexes` holds the indexes of
 * terminating pods when only failed pods are replaced (see onlyReplaceFailedPods) and nothing else:
 * upstream picks the pending indexes first and only then drops those still in per-index backoff
 * (remainingBackoffPerIndexMs > 0), without picking others in their place.
 */
export function firstPendingIndexes(
  count: number,
  completions: number,
  taken: {
    succeeded: readonly Interval[];
    failed?: readonly Interval[];
    activeIndexes: ReadonlySet<number>;
    delayedIndexes?: ReadonlySet<number>;
  },
): number[] {
  if (count <= 0) return [];
  const sorted = (s: ReadonlySet<number> | undefined): number[] => [...(s ?? [])].sort((x, y) => x - y);
  let nonPending = withIndexes(taken.succeeded, sorted(taken.activeIndexes));
  nonPending = withIndexes(nonPending, sorted(taken.delayedIndexes));
  if (taken.failed) nonPending = mergeIntervals(nonPending, taken.failed);
  const result: number[] = [];
  let candidate = 0;
  for (const v of nonPending) {
    for (; candidate < completions && result.length < count && candidate < v.first; candidate++) result.push(candidate);
    if (candidate < v.last + 1) candidate = v.last + 1;
  }
  for (; candidate < completions && result.length < count; candidate++) result.push(candidate);
  return result;
}

/** generateName for an indexed pod, "<job>-<index>-", shortening the job name so the index survives. */
export function indexedPodGenerateName(jobName: string, index: number): string {
  const suffix = `-${index}-`;
  const prefix = jobName + suffix;
  if (prefix.length <= MAX_GENERATED_NAME_LENGTH) return prefix;
  return prefix.slice(0, MAX_GENERATED_NAME_LENGTH - suffix.length) + suffix;
}

/**
 * What duplicatedIndexPodsForRemoval needs of an active pod: its completion index (undefined when
 * unknown) and the fields upstream's ActivePods ordering compares.
 */
export interface IndexedActivePod {
  index?: number;
  /** empty or absent while unscheduled */
  nodeName?: string;
  phase: PodPhase;
  /** the pod's conditions; Ready=True makes it ready, its lastTransitionTime is its ready time */
  conditions: readonly ConditionLike[];
  /** highest restart count over regular containers */
  restartCount?: number;
  /** highest restart count over sidecar (restartable init) containers */
  sidecarRestartCount?: number;
  /** RFC 3339 */
  creationTimestamp?: string;
}

/**
 * Upstream's appendDuplicatedIndexPodsForRemoval over active pods: every pod with an unknown index or
 * one at/after `completions` is removed; of several pods sharing an index, the one upstream's
 * ActivePods order ranks last (the one it would least like to delete: scheduled, running, ready
 * longest, fewest restarts, oldest) is kept and the rest removed. Ties keep the input order (upstream's
 * sort is unstable there). Returns the pods to remove (unknown indexes, then duplicates by index, then
 * out-of-range indexes, as upstream lists them) and the pods kept, by index.
 */
export function duplicatedIndexPodsForRemoval<P extends IndexedActivePod>(
  pods: readonly P[],
  completions: number,
): { remove: P[]; keep: P[] } {
  const remove: P[] = [];
  const keep: P[] = [];
  const byIndex = new Map<number, P[]>();
  const outOfRange: P[] = [];
  for (const p of pods) {
    const ix = p.index;
    if (ix === undefined || ix < 0) {
      remove.push(p);
      continue;
    }
    if (ix >= completions) {
      outOfRange.push(p);
      continue;
    }
    const group = byIndex.get(ix);
    if (group) group.push(p);
    else byIndex.set(ix, [p]);
  }
  for (const ix of [...byIndex.keys()].sort((x, y) => x - y)) {
    const group = byIndex.get(ix) as P[];
    if (group.length === 1) {
      keep.push(group[0]);
      continue;
    }
    const ordered = stableSort(group, (a, b) => (activePodBefore(a, b) ? -1 : activePodBefore(b, a) ? 1 : 0));
    remove.push(...ordered.slice(0, -1));
    keep.push(ordered[ordered.length - 1]);
  }
  remove.push(...stableSort(outOfRange, (a, b) => (a.index as number) - (b.index as number)));
  return { remove, keep };
}

const PHASE_ORDINAL: Partial<Record<PodPhase, number>> = { Pending: 0, Unknown: 1, Running: 2 };

function phaseOrdinal(p: PodPhase): number {
  // phases outside the map read as 0 in Go's map lookup
  return PHASE_ORDINAL[p] ?? 0;
}

function readyCondition(p: IndexedActivePod): ConditionLike | undefined {
  return p.conditions.find((c) => c.type === 'Ready');
}

function isReady(p: IndexedActivePod): boolean {
  return readyCondition(p)?.status === 'True';
}

function timeMs(t: string | undefined): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Upstream's afterOrZero: a missing time sorts first, otherwise the later time does. */
function afterOrZero(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === undefined;
  return a > b;
}

/** Upstream's controller.ActivePods Less: true when `a` is the better candidate for deletion. */
function activePodBefore(a: IndexedActivePod, b: IndexedActivePod): boolean {
  const na = a.nodeName ?? '';
  const nb = b.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  if (phaseOrdinal(a.phase) !== phaseOrdinal(b.phase)) return phaseOrdinal(a.phase) < phaseOrdinal(b.phase);
  if (isReady(a) !== isReady(b)) return !isReady(a);
  if (isReady(a) && isReady(b)) {
    const ra = timeMs(readyCondition(a)?.lastTransitionTime);
    const rb = timeMs(readyCondition(b)?.lastTransitionTime);
    if (ra !== rb) return afterOrZero(ra, rb);
  }
  if ((a.restartCount ?? 0) !== (b.restartCount ?? 0)) return (a.restartCount ?? 0) > (b.restartCount ?? 0);
  if ((a.sidecarRestartCount ?? 0) !== (b.sidecarRestartCount ?? 0)) {
    return (a.sidecarRestartCount ?? 0) > (b.sidecarRestartCount ?? 0);
  }
  const ca = timeMs(a.creationTimestamp);
  const cb = timeMs(b.creationTimestamp);
  if (ca !== cb) return afterOrZero(ca, cb);
  return false;
}

/** Stable, so equal pods keep the caller's order whatever the JS engine's sort does. */
function stableSort<T>(items: readonly T[], cmp: (x: T, y: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i }))
    .sort((x, y) => cmp(x.item, y.item) || x.i - y.i)
    .map((x) => x.item);
}
