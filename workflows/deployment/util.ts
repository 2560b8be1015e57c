/**
 * Helpers every step of a Deployment sync shares, modelled on upstream's
 * pkg/controller/deployment/util/deployment_util.go (kube-controller-manager v1.35), plus the pod-template
 * hash of pkg/controller: revisions and annotations, template hashing, maxSurge/maxUnavailable arithmetic,
 * completeness predicates and Deployment conditions. Runs inside Temporal workflow code: no I/O, no clocks,
 * no randomness, no Node built-ins. Time comes in as `now` (epoch ms).
 */
import { utf8Bytes } from '../common/utf8';
import { formatTime, parseTime } from '../replicaset/logic';
import { collisionBytes, fnv1a32, fnv1a32Bytes, safeEncodeString } from '../common/hash';
import { SpewUnsupported, computeTemplateHash } from '../common/spew';
import { conditionsEqual } from '../common/conditions';
import type { PodTemplate } from '../common/meta';
import { scaledValue } from '../common/int-or-percent';
import type { DeploymentCondition, DeploymentStatus, DeploymentView, IntOrPercent, ReplicaSetView } from './types';

// ---------------------------------------------------------------------------------------------
// constants

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const DEPRECATED_ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
/** Longest revision-history annotation value kept. */
export const MAX_REVISION_HISTORY_CHARS = 2000;
const MAX_INT32 = 2147483647;

export const CONDITION_AVAILABLE = 'Available';
export const CONDITION_PROGRESSING = 'Progressing';
export const CONDITION_REPLICA_FAILURE = 'ReplicaFailure';

export const REASON_RS_UPDATED = 'ReplicaSetUpdated';
export const REASON_NEW_RS_CREATED = 'NewReplicaSetCreated';
export const REASON_FOUND_NEW_RS = 'FoundNewReplicaSet';
export const REASON_NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
export const REASON_TIMED_OUT = 'ProgressDeadlineExceeded';
export const REASON_PAUSED = 'DeploymentPaused';
export const REASON_RESUMED = 'DeploymentResumed';
export const REASON_MIN_AVAILABLE = 'MinimumReplicasAvailable';
export const REASON_MIN_UNAVAILABLE = 'MinimumReplicasUnavailable';

/** Annotations never copied from a Deployment onto its ReplicaSets. */
export const ANNOTATIONS_NOT_COPIED: ReadonlySet<string> = new Set([
  LAST_APPLIED_CONFIG_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  DEPRECATED_ROLLBACK_TO_ANNOTATION,
]);

// ---------------------------------------------------------------------------------------------
// small helpers

const SIGNED_INT = /^[+-]?[0-9]+$/;
const UNSIGNED_INT = /^[0-9]+$/;

/** strconv.ParseInt / Atoi: optional sign then digits; undefined on anything else. */
function parseSignedInt(s: string): number | undefined {
  return SIGNED_INT.test(s) ? Number(s) : undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * strconv.ParseInt(s, 10, 64), exactly: revisions are int64 upstream and reach 2^63 - 1, where a
 * JavaScript number has long stopped counting by one (above 2^53), so they are BigInts here.
 */
export function parseInt64(s: string): bigint | undefined {
  if (!SIGNED_INT.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** Go's int64 addition, wrapping at the ends as Go's does. */
export function addInt64(a: bigint, b: bigint): bigint {
  return BigInt.asIntN(64, a + b);
}

/** A non-negative int32 annotation value (ParseUint then the int32 bound), as upstream reads replica annotations. */
export function parseNonNegativeInt32(s: string | undefined): number | undefined {
  if (s === undefined || !UNSIGNED_INT.test(s)) return undefined;
  const n = Number(s);
  return n > MAX_INT32 ? undefined : n;
}

/** Go's math.Round: halves away from zero. */
function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

export function sum(rss: readonly (ReplicaSetView | undefined)[], f: (rs: ReplicaSetView) => number): number {
  let total = 0;
  for (const rs of rss) if (rs) total += f(rs);
  return total;
}

function creationMs(rs: ReplicaSetView): number {
  return parseTime(rs.creationTimestamp) ?? -Infinity;
}

/** Upstream's ReplicaSetsByCreationTimestamp: older first, then name. */
export function compareByCreation(a: ReplicaSetView, b: ReplicaSetView): number {
  const ca = creationMs(a);
  const cb = creationMs(b);
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function sortedBy<T>(items: readonly T[], cmp: (a: T, b: T) => number): T[] {
  return items.slice().sort(cmp); // Array.prototype.sort is stable (ES2019)
}

export function isActive(rs: ReplicaSetView | undefined): rs is ReplicaSetView {
  return rs !== undefined && rs.replicas > 0;
}

// ---------------------------------------------------------------------------------------------
// templates and hashing

/**
 * Canonical form of a JSON value for comparison and hashing: keys sorted; null, undefined and empty arrays
 * dropped (Go's semantic equality treats nil and empty slices alike and omitempty hides both); empty
 * label/annotation maps dropped likewise.
 */
function canonicalize(v: unknown, key?: string): unknown {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    return v.map((e) => {
      const c = canonicalize(e);
      return c === undefined ? null : c;
    });
  }
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      const c = canonicalize((v as Record<string, unknown>)[k], k);
      if (c !== undefined) out[k] = c;
    }
    if ((key === 'labels' || key === 'annotations') && Object.keys(out).length === 0) return undefined;
    return out;
  }
  return v;
}

/** Deterministic JSON text of a value with sorted keys (see canonicalize for what counts as absent). */
export function canonicalJson(v: unknown): string {
  const c = canonicalize(v);
  return c === undefined ? 'null' : JSON.stringify(c);
}

function withoutHashLabel(template: PodTemplate): PodTemplate {
  const labels = { ...(template.metadata?.labels ?? {}) };
  delete labels[POD_TEMPLATE_HASH_LABEL];
  return { ...template, metadata: { ...(template.metadata ?? {}), labels } };
}

/** Upstream's EqualIgnoreHash: the templates are equal once the pod-template-hash label is removed from both. */
export function templatesEqualIgnoringHash(a: PodTemplate, b: PodTemplate): boolean {
  return canonicalJson(withoutHashLabel(a)) === canonicalJson(withoutHashLabel(b));
}

/**
 * The pod-template-hash of a template. Upstream's (`upstream`): ComputeHash, FNV-1a over go-spew's
 * dump of the template (../common/spew.ts), so ReplicaSet names are upstream's; a template whose
 * dump cannot be reproduced (a quantity beyond int64, a set timestamp) falls back to our own.
 * Our own, kept for runs recorded before: FNV-1a over the template's canonical JSON. Either way a
 * collisionCount (0 included) is mixed in as 8 more bytes (uint32 little endian, four zero bytes),
 * and the decimal text of the hash is spelled with safeEncodeString.
 */
export function podTemplateHash(template: PodTemplate, collisionCount?: number | null, upstream = false): string {
  if (upstream) {
    try {
      return computeTemplateHash(template, collisionCount);
    } catch (e) {
      if (!(e instanceof SpewUnsupported)) throw e;
    }
  }
  const bytes = utf8Bytes(canonicalJson(template));
  if (collisionCount !== undefined && collisionCount !== null) bytes.push(...collisionBytes(collisionCount));
  return safeEncodeString(String(fnv1a32Bytes(bytes)));
}

// ---------------------------------------------------------------------------------------------
// new and old ReplicaSets

/** The oldest ReplicaSet whose template equals the Deployment's, ignoring the pod-template-hash label. */
export function findNewReplicaSet<T extends ReplicaSetView>(d: DeploymentView, rss: readonly T[]): T | undefined {
  return sortedBy(rss, compareByCreation).find((rs) => templateOfDeployment(d, rs));
}

/** Is the ReplicaSet's template the Deployment's, ignoring the hash label: as observed, or as said for a template left out (templateMatches). */
function templateOfDeployment(d: DeploymentView, rs: ReplicaSetView): boolean {
  return rs.templateMatches ?? templatesEqualIgnoringHash(rs.template, d.template);
}

/** Every ReplicaSet but the new one, oldest first (scaled to zero or not). */
export function findOldReplicaSets<T extends ReplicaSetView>(d: DeploymentView, rss: readonly T[]): T[] {
  const sorted = sortedBy(rss, compareByCreation);
  const newRS = sorted.find((rs) => templateOfDeployment(d, rs));
  return sorted.filter((rs) => newRS === undefined || rs.uid !== newRS.uid);
}

// ---------------------------------------------------------------------------------------------
// revisions and annotations

/** The revision annotation as an int64: 0 when absent, undefined when it is not one. */
export function revisionOf(rs: Pick<ReplicaSetView, 'annotations'>): bigint | undefined {
  const v = rs.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0n;
  return parseInt64(v);
}

/** Highest parseable revision, 0 when none. */
export function maxRevision(rss: readonly (Pick<ReplicaSetView, 'annotations'> | undefined)[]): bigint {
  let max = 0n;
  for (const rs of rss) {
    if (!rs) continue;
    const v = revisionOf(rs);
    if (v !== undefined && v > max) max = v;
  }
  return max;
}

/**
 * Copies the Deployment's annotations onto a ReplicaSet's (skip list aside); existing keys are overwritten
 * when their value differs, keys the Deployment lacks are kept.
 */
export function copyDeploymentAnnotations(
  deploymentAnnotations: Record<string, string>,
  rsAnnotations: Record<string, string>,
): { annotations: Record<string, string>; changed: boolean } {
  const annotations = { ...rsAnnotations };
  let changed = false;
  for (const k of Object.keys(deploymentAnnotations).sort()) {
    if (ANNOTATIONS_NOT_COPIED.has(k)) continue;
    const v = deploymentAnnotations[k];
    if (Object.prototype.hasOwnProperty.call(annotations, k) && annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  return { annotations, changed };
}

/** desired-replicas and max-replicas set to the given numbers; `changed` when either differed. */
export function withReplicasAnnotations(
  annotations: Record<string, string>,
  desired: number,
  max: number,
): { annotations: Record<string, string>; changed: boolean } {
  const out = { ...annotations };
  let changed = false;
  if (out[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    out[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (out[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    out[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return { annotations: out, changed };
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSetView, desired: number, max: number): boolean {
  return withReplicasAnnotations(rs.annotations ?? {}, desired, max).changed;
}

/**
 * The annotations the new ReplicaSet should carry (upstream's SetNewReplicaSetAnnotations):
 *  - the Deployment's annotations copied (see copyDeploymentAnnotations);
 *  - revision raised to newRevision when lower; when an existing revision is replaced, it is appended to
 *    revision-history (comma list, oldest entries dropped to stay within 2000 characters);
 *  - for a ReplicaSet about to be created (exists false) desired-replicas and max-replicas.
 * An unparseable existing revision leaves everything as it was (changed false), as upstream bails out.
 */
export function newRevisionAnnotations(
  d: DeploymentView,
  rsAnnotations: Record<string, string>,
  newRevision: string,
  exists: boolean,
): { annotations: Record<string, string>; changed: boolean } {
  const copied = copyDeploymentAnnotations(d.annotations ?? {}, rsAnnotations ?? {});
  const annotations = copied.annotations;
  let changed = copied.changed;
  const hadRevision = Object.prototype.hasOwnProperty.call(annotations, REVISION_ANNOTATION);
  const oldRevision = annotations[REVISION_ANNOTATION] ?? '';
  let oldInt = parseInt64(oldRevision);
  if (oldInt === undefined) {
    if (oldRevision !== '') return { annotations, changed: false };
    oldInt = 0n;
  }
  const newInt = parseInt64(newRevision);
  if (newInt === undefined) return { annotations, changed: false };
  if (oldInt < newInt) {
    annotations[REVISION_ANNOTATION] = newRevision;
    changed = true;
    if (hadRevision) {
      const history = annotations[REVISION_HISTORY_ANNOTATION] ?? '';
      const entries = history.split(',');
      if (entries[0].length === 0) {
        annotations[REVISION_HISTORY_ANNOTATION] = oldRevision;
      } else {
        let total = history.length + oldRevision.length + 1;
        let start = 0;
        while (total > MAX_REVISION_HISTORY_CHARS && start < entries.length) {
          total -= entries[start].length + 1;
          start++;
        }
        if (total <= MAX_REVISION_HISTORY_CHARS) {
          annotations[REVISION_HISTORY_ANNOTATION] = [...entries.slice(start), oldRevision].join(',');
        }
      }
    }
  }
  if (!exists) {
    const r = withReplicasAnnotations(annotations, d.replicas, d.replicas + maxSurge(d));
    if (r.changed) changed = true;
    return { annotations: r.annotations, changed };
  }
  return { annotations, changed };
}

/** Upstream's SetDeploymentRevision: sets the Deployment's revision annotation; true when it changed. */
export function setDeploymentRevision(d: DeploymentView, revision: string): boolean {
  if (d.annotations[REVISION_ANNOTATION] === revision) return false;
  d.annotations[REVISION_ANNOTATION] = revision;
  return true;
}

// ---------------------------------------------------------------------------------------------
// fenceposts

export { fnv1a32, safeEncodeString, scaledValue };

/**
 * Upstream's ResolveFenceposts: surge rounds up, unavailable rounds down, and both 0 makes unavailable 1
 * (a rollout must be able to move). An invalid value yields 0/0 with the error, as the callers that
 * ignore the error see it.
 */
export function resolveFenceposts(
  maxSurgeValue: IntOrPercent | undefined | null,
  maxUnavailableValue: IntOrPercent | undefined | null,
  desired: number,
): { maxSurge: number; maxUnavailable: number; error?: string } {
  const surge = scaledValue(maxSurgeValue ?? 0, desired, true);
  if (surge.error) return { maxSurge: 0, maxUnavailable: 0, error: surge.error };
  const unavailable = scaledValue(maxUnavailableValue ?? 0, desired, false);
  if (unavailable.error) return { maxSurge: 0, maxUnavailable: 0, error: unavailable.error };
  if (surge.value === 0 && unavailable.value === 0) return { maxSurge: 0, maxUnavailable: 1 };
  return { maxSurge: surge.value, maxUnavailable: unavailable.value };
}

/** Pods that may be unavailable during a rolling update; 0 for Recreate or replicas 0; at most replicas. */
export function maxUnavailable(d: DeploymentView): number {
  if (d.strategy.type !== 'RollingUpdate' || d.replicas === 0) return 0;
  const { maxUnavailable: u } = resolveFenceposts(d.strategy.maxSurge, d.strategy.maxUnavailable, d.replicas);
  return Math.min(u, d.replicas);
}

/** Pods allowed above replicas during a rolling update; 0 for Recreate. */
export function maxSurge(d: DeploymentView): number {
  if (d.strategy.type !== 'RollingUpdate') return 0;
  return resolveFenceposts(d.strategy.maxSurge, d.strategy.maxUnavailable, d.replicas).maxSurge;
}

// ---------------------------------------------------------------------------------------------
// predicates

export function hasProgressDeadline(d: DeploymentView): boolean {
  return d.progressDeadlineSeconds !== undefined && d.progressDeadlineSeconds !== null && d.progressDeadlineSeconds !== MAX_INT32;
}

export function hasRevisionHistoryLimit(d: DeploymentView): boolean {
  return d.revisionHistoryLimit !== undefined && d.revisionHistoryLimit !== null && d.revisionHistoryLimit !== MAX_INT32;
}

/** Every replica updated, nothing else left, all available, and the status is of the current generation. */
export function deploymentComplete(d: DeploymentView, s: DeploymentStatus): boolean {
  return (
    s.updatedReplicas === d.replicas &&
    s.replicas === d.replicas &&
    s.availableReplicas === d.replicas &&
    s.observedGeneration >= d.generation
  );
}

/** Did the new status move forward from the Deployment's current one (more updated/ready/available, fewer old)? */
export function deploymentProgressing(d: DeploymentView, s: DeploymentStatus): boolean {
  const old = d.status;
  return (
    s.updatedReplicas > old.updatedReplicas ||
    s.replicas - s.updatedReplicas < old.replicas - old.updatedReplicas ||
    s.readyReplicas > old.readyReplicas ||
    s.availableReplicas > old.availableReplicas
  );
}

/** Has the Progressing condition in `s` gone without an update for longer than the deadline? */
export function deploymentTimedOut(d: DeploymentView, s: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = getCondition(s, CONDITION_PROGRESSING);
  if (!cond) return false;
  if (cond.reason === REASON_NEW_RS_AVAILABLE) return false;
  if (cond.reason === REASON_TIMED_OUT) return true;
  const from = parseTime(cond.lastUpdateTime) ?? -Infinity;
  return from + (d.progressDeadlineSeconds as number) * 1000 < now;
}

/** The new ReplicaSet has all replicas, its desired-replicas annotation agrees, and all are available. */
export function isSaturated(d: DeploymentView, rs: ReplicaSetView | undefined): boolean {
  if (!rs) return false;
  const desired = parseSignedInt(rs.annotations?.[DESIRED_REPLICAS_ANNOTATION] ?? '');
  if (desired === undefined) return false;
  return rs.replicas === d.replicas && desired === d.replicas && rs.status.availableReplicas === d.replicas;
}

// ---------------------------------------------------------------------------------------------
// conditions

export function getCondition(s: Pick<DeploymentStatus, 'conditions'>, type: string): DeploymentCondition | undefined {
  return (s.conditions ?? []).find((c) => c.type === type);
}

export function newCondition(
  type: string,
  status: DeploymentCondition['status'],
  reason: string,
  message: string,
  now: number,
): DeploymentCondition {
  const t = formatTime(now);
  return { type, status, reason, message, lastUpdateTime: t, lastTransitionTime: t };
}

/**
 * Upstream's SetDeploymentCondition: same status and reason leaves the existing condition untouched
 * (message and times too); same status keeps its lastTransitionTime; the condition moves to the end.
 */
export function setCondition(s: DeploymentStatus, cond: DeploymentCondition): void {
  const current = getCondition(s, cond.type);
  if (current && current.status === cond.status && current.reason === cond.reason) return;
  const next = { ...cond };
  if (current && current.status === cond.status) next.lastTransitionTime = current.lastTransitionTime;
  s.conditions = [...(s.conditions ?? []).filter((c) => c.type !== cond.type), next];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  s.conditions = (s.conditions ?? []).filter((c) => c.type !== type);
}

export function cloneStatus(s: DeploymentStatus): DeploymentStatus {
  return { ...s, conditions: (s.conditions ?? []).map((c) => ({ ...c })) };
}

/** Would writing b over a change anything (counters, collisionCount, terminatingReplicas, conditions in order)? */
export function deploymentStatusEqual(a: DeploymentStatus, b: DeploymentStatus): boolean {
  if (
    a.observedGeneration !== b.observedGeneration ||
    a.replicas !== b.replicas ||
    a.updatedReplicas !== b.updatedReplicas ||
    a.readyReplicas !== b.readyReplicas ||
    a.availableReplicas !== b.availableReplicas ||
    a.unavailableReplicas !== b.unavailableReplicas ||
    (a.terminatingReplicas ?? undefined) !== (b.terminatingReplicas ?? undefined) ||
    (a.collisionCount ?? undefined) !== (b.collisionCount ?? undefined)
  ) {
    return false;
  }
  return conditionsEqual(a.conditions, b.conditions);
}

// ---------------------------------------------------------------------------------------------
// replica arithmetic

/**
 * Sum of the ReplicaSets' terminatingReplicas. Upstream leaves the Deployment's field unset when a
 * ReplicaSet that has been observed (observedGeneration > 0) does not report it.
 */
export function terminatingReplicasOf(rss: readonly (ReplicaSetView | undefined)[]): number | undefined {
  let total = 0;
  for (const rs of rss) {
    if (!rs) continue;
    if (rs.status.terminatingReplicas === undefined || rs.status.terminatingReplicas === null) {
      if (rs.status.observedGeneration === 0) continue;
      return undefined;
    }
    total += rs.status.terminatingReplicas;
  }
  return total;
}

/**
 * Replicas for the new ReplicaSet (upstream's NewRSNewReplicas). RollingUpdate: grow by what maxSurge
 * leaves room for above replicas (counting every ReplicaSet's spec), never past replicas. Recreate: replicas.
 */
export function newRSNewReplicas(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView,
): { replicas: number; error?: string } {
  if (d.strategy.type === 'Recreate') return { replicas: d.replicas };
  const surge = scaledValue(d.strategy.maxSurge, d.replicas, true);
  if (surge.error) return { replicas: newRS.replicas, error: surge.error };
  const current = sum(allRSs, (rs) => rs.replicas);
  const maxTotal = d.replicas + surge.value;
  if (current >= maxTotal) return { replicas: newRS.replicas };
  const up = Math.min(maxTotal - current, d.replicas - newRS.replicas);
  return { replicas: newRS.replicas + up };
}

/** The rolling-update name for newRSNewReplicas. */
export function newRSReplicasForRolling(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView,
): number {
  return newRSNewReplicas(d, allRSs, newRS).replicas;
}

/**
 * Upstream's getReplicaSetFraction: how many replicas this RS gains (or loses) when the Deployment's
 * allowed size goes from the RS's max-replicas annotation (or status.replicas) to replicas + maxSurge,
 * rounded half away from zero.
 */
export function getReplicaSetFraction(rs: ReplicaSetView, d: DeploymentView): number {
  if (d.replicas === 0) return -rs.replicas;
  const maxNow = d.replicas + maxSurge(d);
  let before = parseNonNegativeInt32(rs.annotations?.[MAX_REPLICAS_ANNOTATION]);
  if (before === undefined || before === 0) {
    before = d.status.replicas;
    if (before === 0) return 0;
  }
  return goRound((rs.replicas * maxNow) / before) - rs.replicas;
}

/** The RS's share of toAdd given `added` handed out so far, clamped so the total never overshoots. */
export function getReplicaSetProportion(rs: ReplicaSetView | undefined, d: DeploymentView, toAdd: number, added: number): number {
  if (!rs || rs.replicas === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = getReplicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * The single RS to resize when at most one is active (upstream's FindActiveOrLatest): the active one; with
 * none active, the new RS or else the newest old one; undefined when several are active.
 */
export function findActiveOrLatest<T extends ReplicaSetView>(newRS: T | undefined, oldRSs: readonly T[]): T | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const oldNewestFirst = sortedBy(oldRSs, (a, b) => compareByCreation(b, a));
  const active = [...oldNewestFirst, newRS].filter((rs): rs is T => isActive(rs));
  if (active.length === 0) return newRS ?? oldNewestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** Upstream's ReplicaSetsByRevision: lower revision first; unparseable or equal revisions by creation. */
export function compareByRevision(a: ReplicaSetView, b: ReplicaSetView): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  if (ra === undefined || rb === undefined || ra === rb) return compareByCreation(a, b);
  return ra < rb ? -1 : 1;
}
