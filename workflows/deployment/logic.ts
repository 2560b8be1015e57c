/**
 * Pure reconcile decisions of the deployment engine, modelled on the upstream Deployment controller
 * (kube-controller-manager v1.35). Runs inside Temporal workflow code: no I/O, no clocks, no randomness,
 * no Node built-ins. Time comes in as `now` (epoch ms).
 *
 * planDeployment replays one upstream sync against an in-memory copy of the Deployment and its
 * ReplicaSets and returns the writes that sync would get through. Upstream writes with the resourceVersion
 * it read at the start of the sync, so a second write to the same object in one sync fails with a conflict
 * and ends the sync early; the plan reproduces that (see Round), which keeps the sequence of rounds the same
 * as upstream's.
 */
import { isEverythingSelector, selectorError } from '../common/selector';
import { utf8Bytes } from '../common/utf8';
import { NAME_SUFFIX_ALPHABET, formatTime, parseTime } from '../replicaset/logic';
import { conditionsEqual } from '../common/conditions';
import type { LabelSelector, OwnerRef, PodTemplate } from '../replicaset/types';
import type {
  DeploymentAction,
  DeploymentCondition,
  DeploymentPlan,
  DeploymentStatus,
  DeploymentView,
  IntOrPercent,
  PlanDeploymentInput,
  ReplicaSetView,
} from './types';

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
/** Longest object name (DNS-1123 subdomain). */
const MAX_RS_NAME_LENGTH = 253;

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

/** A non-negative int32 annotation value (ParseUint then the int32 bound), as upstream reads replica annotations. */
function parseNonNegativeInt32(s: string | undefined): number | undefined {
  if (s === undefined || !UNSIGNED_INT.test(s)) return undefined;
  const n = Number(s);
  return n > MAX_INT32 ? undefined : n;
}

/** Go's math.Round: halves away from zero. */
function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

function sum(rss: readonly (ReplicaSetView | undefined)[], f: (rs: ReplicaSetView) => number): number {
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

function sortedBy<T>(items: readonly T[], cmp: (a: T, b: T) => number): T[] {
  return items.slice().sort(cmp); // Array.prototype.sort is stable (ES2019)
}

function isActive(rs: ReplicaSetView | undefined): rs is ReplicaSetView {
  return rs !== undefined && rs.replicas > 0;
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
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

function fnv1a32Bytes(bytes: readonly number[], seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (const b of bytes) {
    h ^= b & 0xff;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** 32-bit FNV-1a of the UTF-8 bytes of `s`. */
export function fnv1a32(s: string): number {
  return fnv1a32Bytes(utf8Bytes(s));
}

/** Each character's code modulo 27 picked from the generateName alphabet (no vowels, no look-alikes). */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += NAME_SUFFIX_ALPHABET[(ch.codePointAt(0) as number) % NAME_SUFFIX_ALPHABET.length];
  return out;
}

/**
 * The pod-template-hash of a template: FNV-1a 32 of its canonical JSON; when collisionCount is given
 * (0 included) its value is mixed in as 8 more bytes (uint32 little endian, then four zero bytes), as
 * upstream does; the decimal text of the hash is then encoded with safeEncodeString.
 */
export function podTemplateHash(template: PodTemplate, collisionCount?: number | null): string {
  const bytes = utf8Bytes(canonicalJson(template));
  if (collisionCount !== undefined && collisionCount !== null) {
    const c = collisionCount >>> 0;
    bytes.push(c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, (c >>> 24) & 0xff, 0, 0, 0, 0);
  }
  return safeEncodeString(String(fnv1a32Bytes(bytes)));
}

/** `<deployment>-<hash>`, the deployment name cut so the whole stays within 253 characters. */
export function replicaSetName(deploymentName: string, hash: string): string {
  const maxBase = MAX_RS_NAME_LENGTH - 1 - hash.length;
  const base = deploymentName.length > maxBase && maxBase > 0 ? deploymentName.slice(0, maxBase) : deploymentName;
  return `${base}-${hash}`;
}

// ---------------------------------------------------------------------------------------------
// new and old ReplicaSets

/** The oldest ReplicaSet whose template equals the Deployment's, ignoring the pod-template-hash label. */
export function findNewReplicaSet<T extends ReplicaSetView>(d: DeploymentView, rss: readonly T[]): T | undefined {
  return sortedBy(rss, compareByCreation).find((rs) => templatesEqualIgnoringHash(rs.template, d.template));
}

/** Every ReplicaSet but the new one, oldest first (scaled to zero or not). */
export function findOldReplicaSets<T extends ReplicaSetView>(d: DeploymentView, rss: readonly T[]): T[] {
  const sorted = sortedBy(rss, compareByCreation);
  const newRS = sorted.find((rs) => templatesEqualIgnoringHash(rs.template, d.template));
  return sorted.filter((rs) => newRS === undefined || rs.uid !== newRS.uid);
}

// ---------------------------------------------------------------------------------------------
// revisions and annotations

/** The revision annotation as a number: 0 when absent, undefined when it is not an integer. */
export function revisionOf(rs: Pick<ReplicaSetView, 'annotations'>): number | undefined {
  const v = rs.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0;
  return parseSignedInt(v);
}

/** Highest parseable revision, 0 when none. */
export function maxRevision(rss: readonly (Pick<ReplicaSetView, 'annotations'> | undefined)[]): number {
  let max = 0;
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

function replicasAnnotationsNeedUpdate(rs: ReplicaSetView, desired: number, max: number): boolean {
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
  let oldInt = parseSignedInt(oldRevision);
  if (oldInt === undefined) {
    if (oldRevision !== '') return { annotations, changed: false };
    oldInt = 0;
  }
  const newInt = parseSignedInt(newRevision);
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

// ---------------------------------------------------------------------------------------------
// fenceposts

/**
 * intstr's GetScaledValueFromIntOrPercent: an integer as is; 'N%' of total rounded up or down.
 * A string without '%' or with a non-integer number is an error.
 */
export function scaledValue(v: IntOrPercent | undefined | null, total: number, roundUp: boolean): { value: number; error?: string } {
  if (v === undefined || v === null) return { value: 0 };
  if (typeof v === 'number') return { value: Math.trunc(v) };
  if (!v.endsWith('%')) return { value: 0, error: `invalid value for IntOrString: invalid type: string is not a percentage` };
  const n = parseSignedInt(v.slice(0, -1));
  if (n === undefined) return { value: 0, error: `invalid value for IntOrString: invalid value ${JSON.stringify(v)}` };
  const raw = (n * total) / 100;
  return { value: roundUp ? Math.ceil(raw) : Math.floor(raw) };
}

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

/** An active ReplicaSet's desired-replicas annotation disagrees with spec.replicas (someone scaled the Deployment). */
export function isScalingEvent(d: DeploymentView, rss: readonly ReplicaSetView[]): boolean {
  for (const rs of rss) {
    if (!isActive(rs)) continue;
    const desired = parseNonNegativeInt32(rs.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
    if (desired === undefined) continue;
    if (desired !== d.replicas) return true;
  }
  return false;
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

function cloneStatus(s: DeploymentStatus): DeploymentStatus {
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
// status

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
 * Upstream's calculateStatus: counters summed over the ReplicaSets (unavailable = spec replicas summed
 * minus available, at least 0), observedGeneration = generation, collisionCount kept, the existing
 * conditions kept, and Available set from availableReplicas >= replicas - maxUnavailable.
 */
export function calculateDeploymentStatus(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView | undefined,
  now: number,
): DeploymentStatus {
  const available = sum(allRSs, (rs) => rs.status.availableReplicas);
  const total = sum(allRSs, (rs) => rs.replicas);
  const status: DeploymentStatus = {
    observedGeneration: d.generation,
    replicas: sum(allRSs, (rs) => rs.status.replicas),
    updatedReplicas: newRS ? newRS.status.replicas : 0,
    readyReplicas: sum(allRSs, (rs) => rs.status.readyReplicas),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: (d.status.conditions ?? []).map((c) => ({ ...c })),
  };
  const terminating = terminatingReplicasOf(allRSs);
  if (terminating !== undefined) status.terminatingReplicas = terminating;
  if (d.status.collisionCount !== undefined && d.status.collisionCount !== null) status.collisionCount = d.status.collisionCount;
  if (available >= d.replicas - maxUnavailable(d)) {
    setCondition(status, newCondition(CONDITION_AVAILABLE, 'True', REASON_MIN_AVAILABLE, 'Deployment has minimum availability.', now));
  } else {
    setCondition(status, newCondition(CONDITION_AVAILABLE, 'False', REASON_MIN_UNAVAILABLE, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** ReplicaFailure conditions of the new ReplicaSet, else of any ReplicaSet, as Deployment conditions. */
function replicaFailures(allRSs: readonly (ReplicaSetView | undefined)[], newRS: ReplicaSetView | undefined): DeploymentCondition[] {
  const convert = (rs: ReplicaSetView): DeploymentCondition[] =>
    (rs.status.conditions ?? [])
      .filter((c) => c.type === CONDITION_REPLICA_FAILURE)
      .map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
        lastUpdateTime: c.lastTransitionTime,
        lastTransitionTime: c.lastTransitionTime,
      }));
  if (newRS) {
    const own = convert(newRS);
    if (own.length > 0) return own;
  }
  const out: DeploymentCondition[] = [];
  for (const rs of allRSs) if (rs) out.push(...convert(rs));
  return out;
}

/**
 * Upstream's syncRolloutStatus computation: calculateDeploymentStatus plus the Progressing condition
 * (NewReplicaSetAvailable when complete, ReplicaSetUpdated when the status moved forward — refreshing
 * lastUpdateTime and keeping a True condition's lastTransitionTime — ProgressDeadlineExceeded when the
 * condition went stale past the deadline; left alone once complete with nothing old left; removed when
 * there is no deadline), and ReplicaFailure mirrored from the ReplicaSets.
 */
export function calculateRolloutStatus(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView | undefined,
  now: number,
): DeploymentStatus {
  const s = calculateDeploymentStatus(d, allRSs, newRS, now);
  const deadline = hasProgressDeadline(d);
  if (!deadline) removeCondition(s, CONDITION_PROGRESSING);
  const current = getCondition(d.status, CONDITION_PROGRESSING);
  const complete = s.replicas === s.updatedReplicas && current !== undefined && current.reason === REASON_NEW_RS_AVAILABLE;
  if (deadline && !complete) {
    if (deploymentComplete(d, s)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" has successfully progressed.` : `Deployment "${d.name}" has successfully progressed.`;
      setCondition(s, newCondition(CONDITION_PROGRESSING, 'True', REASON_NEW_RS_AVAILABLE, msg, now));
    } else if (deploymentProgressing(d, s)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" is progressing.` : `Deployment "${d.name}" is progressing.`;
      const cond = newCondition(CONDITION_PROGRESSING, 'True', REASON_RS_UPDATED, msg, now);
      if (current) {
        if (current.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
        removeCondition(s, CONDITION_PROGRESSING);
      }
      setCondition(s, cond);
    } else if (deploymentTimedOut(d, s, now)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" has timed out progressing.` : `Deployment "${d.name}" has timed out progressing.`;
      setCondition(s, newCondition(CONDITION_PROGRESSING, 'False', REASON_TIMED_OUT, msg, now));
    }
  }
  const failures = replicaFailures(allRSs, newRS);
  if (failures.length > 0) setCondition(s, failures[0]);
  else removeCondition(s, CONDITION_REPLICA_FAILURE);
  return s;
}

/**
 * Upstream's requeueStuckDeployment: when a rollout with a deadline is neither complete nor timed out,
 * how long until its Progressing condition should be checked for the deadline (deadline + 1 s, as upstream
 * waits one second past it; at least 1 s). Undefined when no check is needed. `newStatus` defaults to the
 * Deployment's status.
 */
export function requeueForProgress(d: DeploymentView, now: number, newStatus: DeploymentStatus = d.status): number | undefined {
  const cond = getCondition(d.status, CONDITION_PROGRESSING);
  if (!hasProgressDeadline(d) || !cond) return undefined;
  if (deploymentComplete(d, newStatus) || cond.reason === REASON_TIMED_OUT) return undefined;
  const from = parseTime(cond.lastUpdateTime);
  if (from === undefined) return 1000;
  const after = from + (d.progressDeadlineSeconds as number) * 1000 - now;
  return Math.max(after, 0) + 1000;
}

// ---------------------------------------------------------------------------------------------
// replica arithmetic

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

/** One ReplicaSet size change, in the order to apply them. */
export interface ScaleStep {
  name: string;
  from: number;
  to: number;
  why: string;
}

/**
 * The old ReplicaSets' scale-down of one rolling-update round (upstream's reconcileOldReplicaSets), given
 * every ReplicaSet, the active old ones and the new one:
 *  1. maxScaledDown = all pods (spec) - (replicas - maxUnavailable) - unavailable pods of the new RS; stop if <= 0;
 *  2. unhealthy replicas (spec - available) of old RSs go first, oldest RS first, at most maxScaledDown;
 *  3. then old RSs shrink oldest first by however many available pods exceed replicas - maxUnavailable.
 * `error` is set when step 2 meets an RS with more available than spec replicas: upstream then stops
 * (steps already taken stand) and reports nothing scaled down.
 */
export function oldReplicaSetsScaleDown(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  activeOldRSs: readonly ReplicaSetView[],
  newRS: ReplicaSetView,
): { steps: ScaleStep[]; scaledDown: number; error?: string } {
  const steps: ScaleStep[] = [];
  const oldCount = sum(activeOldRSs, (rs) => rs.replicas);
  if (oldCount === 0) return { steps, scaledDown: 0 };
  const allCount = sum(allRSs, (rs) => rs.replicas);
  const mu = maxUnavailable(d);
  const minAvailable = d.replicas - mu;
  const newUnavailable = newRS.replicas - newRS.status.availableReplicas;
  const maxScaledDown = allCount - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return { steps, scaledDown: 0 };

  // working sizes, by name
  const size = new Map<string, number>();
  for (const rs of activeOldRSs) size.set(rs.name, rs.replicas);
  const olds = sortedBy(activeOldRSs, compareByCreation);

  let cleaned = 0;
  for (const rs of olds) {
    if (cleaned >= maxScaledDown) break;
    const spec = size.get(rs.name) as number;
    if (spec === 0) continue;
    if (spec === rs.status.availableReplicas) continue;
    const count = Math.min(maxScaledDown - cleaned, spec - rs.status.availableReplicas);
    const to = spec - count;
    if (to > spec) {
      return {
        steps,
        scaledDown: 0,
        error: `when cleaning up unhealthy replicas, got invalid request to scale down ${rs.namespace}/${rs.name} ${spec} -> ${to}`,
      };
    }
    steps.push({ name: rs.name, from: spec, to, why: `remove ${count} unavailable replica(s) of old ReplicaSet` });
    size.set(rs.name, to);
    cleaned += count;
  }

  // upstream counts availability over the active old RSs and the new one only
  const available = sum(activeOldRSs, (rs) => rs.status.availableReplicas) + newRS.status.availableReplicas;
  let scaled = 0;
  if (available > minAvailable) {
    const target = available - minAvailable;
    for (const rs of olds) {
      if (scaled >= target) break;
      const spec = size.get(rs.name) as number;
      if (spec === 0) continue;
      const count = Math.min(spec, target - scaled);
      const to = spec - count;
      steps.push({
        name: rs.name,
        from: spec,
        to,
        why: `scale down old ReplicaSet (rolling update: ${available} available, at least ${minAvailable} must stay, maxUnavailable ${mu})`,
      });
      size.set(rs.name, to);
      scaled += count;
    }
  }
  return { steps, scaledDown: cleaned + scaled };
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

function bySizeNewer(a: ReplicaSetView, b: ReplicaSetView): number {
  if (a.replicas !== b.replicas) return b.replicas - a.replicas;
  return compareByCreation(b, a);
}

function bySizeOlder(a: ReplicaSetView, b: ReplicaSetView): number {
  if (a.replicas !== b.replicas) return b.replicas - a.replicas;
  return compareByCreation(a, b);
}

/**
 * Proportional scaling of a rolling Deployment resized mid-rollout (upstream's scale(), RollingUpdate part):
 * the difference between replicas + maxSurge (0 when replicas is 0) and the active RSs' total is spread by
 * each RS's fraction, larger RSs first (ties: newer first when growing, older first when shrinking), and
 * what rounding leaves over goes to the first RS (never below 0). Returns every active RS with its new size,
 * in the order to write them (unchanged sizes included: their replica annotations may still need a write).
 */
export function proportionalSizes(
  d: DeploymentView,
  newRS: ReplicaSetView | undefined,
  oldRSs: readonly ReplicaSetView[],
): Array<{ rs: ReplicaSetView; size: number }> {
  const oldNewestFirst = sortedBy(oldRSs, (a, b) => compareByCreation(b, a));
  let all = [...oldNewestFirst, newRS].filter(isActive);
  const allowed = d.replicas > 0 ? d.replicas + maxSurge(d) : 0;
  const toAdd = allowed - sum(all, (rs) => rs.replicas);
  if (toAdd > 0) all = sortedBy(all, bySizeNewer);
  else if (toAdd < 0) all = sortedBy(all, bySizeOlder);
  let added = 0;
  const sizes = all.map((rs) => {
    if (toAdd === 0) return rs.replicas;
    const p = getReplicaSetProportion(rs, d, toAdd, added);
    added += p;
    return rs.replicas + p;
  });
  if (toAdd !== 0 && sizes.length > 0) sizes[0] = Math.max(0, sizes[0] + toAdd - added);
  return all.map((rs, i) => ({ rs, size: sizes[i] }));
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
function compareByRevision(a: ReplicaSetView, b: ReplicaSetView): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  if (ra === undefined || rb === undefined || ra === rb) return compareByCreation(a, b);
  return ra - rb;
}

/**
 * Old ReplicaSets to delete per revisionHistoryLimit (upstream's cleanupDeployment): of the old RSs not
 * being deleted, the (count - limit) lowest revisions are candidates, and of those only RSs with spec and
 * status replicas 0 whose status is up to date go. None when there is no limit.
 */
export function replicaSetsToCleanUp<T extends ReplicaSetView>(d: DeploymentView, oldRSs: readonly T[]): T[] {
  if (!hasRevisionHistoryLimit(d)) return [];
  const cleanable = oldRSs.filter((rs) => !rs.deletionTimestamp);
  const diff = cleanable.length - (d.revisionHistoryLimit as number);
  if (diff <= 0) return [];
  return sortedBy(cleanable, compareByRevision)
    .slice(0, diff)
    .filter((rs) => rs.status.replicas === 0 && rs.replicas === 0 && !(rs.generation > rs.status.observedGeneration) && !rs.deletionTimestamp);
}

// ---------------------------------------------------------------------------------------------
// one round

/** Upstream returned an error: the sync ends here, the writes so far stand. */
class EndOfSync {
  constructor(readonly why: string) {}
}

/** A ReplicaSet as one sync holds it: `version` counts the writes behind this copy, to spot stale ones. */
interface RS extends ReplicaSetView {
  version: number;
  created?: { hash: string; template: PodTemplate; selector: LabelSelector; ownerReferences: OwnerRef[] };
}

interface RSWrite {
  orig: RS;
  latest: RS;
  reasons: string[];
}

type Step = { kind: 'rs'; name: string } | { kind: 'action'; action: DeploymentAction };

/**
 * One upstream sync. `d` is the in-memory Deployment (annotations and status change as upstream's copy
 * does). Writes follow upstream's resourceVersion rules: a ReplicaSet can be written again only through
 * the copy the previous write returned, and the Deployment only once (its later writes would carry the
 * stale resourceVersion and conflict), otherwise the sync ends.
 */
class Round {
  readonly d: DeploymentView;
  readonly steps: Step[] = [];
  readonly rsWrites = new Map<string, RSWrite>();
  deploymentWritten = false;
  requeueAfterMs?: number;
  collisionCount?: number;

  constructor(
    readonly orig: DeploymentView,
    readonly rsList: readonly RS[],
    readonly oldPodsRunning: number,
    readonly now: number,
  ) {
    this.d = { ...orig, annotations: { ...(orig.annotations ?? {}) }, status: cloneStatus(orig.status) };
  }

  writeRS(base: RS, change: Partial<Pick<RS, 'replicas' | 'annotations' | 'minReadySeconds'>>, reason: string): RS {
    const w = this.rsWrites.get(base.name);
    const current = w ? w.latest.version : 0;
    if (base.version !== current) throw new EndOfSync(`conflict: ReplicaSet ${base.name} was already written in this sync`);
    const next: RS = { ...base, ...change, version: base.version + 1 };
    if (w) {
      w.latest = next;
      w.reasons.push(reason);
    } else {
      this.rsWrites.set(base.name, { orig: base, latest: next, reasons: [reason] });
      this.steps.push({ kind: 'rs', name: base.name });
    }
    return next;
  }

  recordCreate(rs: RS, reason: string): void {
    this.rsWrites.set(rs.name, { orig: rs, latest: rs, reasons: [reason] });
    this.steps.push({ kind: 'rs', name: rs.name });
  }

  deleteRS(rs: RS, reason: string): void {
    this.steps.push({ kind: 'action', action: { type: 'deleteReplicaSet', name: rs.name, uid: rs.uid, reason } });
  }

  /** Upstream's UpdateStatus of its Deployment copy (annotations ride along). */
  writeDeployment(reason: string): void {
    if (this.deploymentWritten) throw new EndOfSync('conflict: the Deployment was already written in this sync');
    this.deploymentWritten = true;
    if (!sameMap(this.orig.annotations ?? {}, this.d.annotations)) {
      this.steps.push({ kind: 'action', action: { type: 'updateDeploymentAnnotations', annotations: { ...this.d.annotations }, reason } });
    }
    if (!deploymentStatusEqual(this.orig.status, this.d.status)) {
      this.steps.push({
        kind: 'action',
        action: { type: 'updateDeploymentStatus', status: cloneStatus(this.d.status), reason: `${reason}${describeStatusChange(this.orig.status, this.d.status)}` },
      });
    }
  }

  plan(): DeploymentPlan {
    const actions: DeploymentAction[] = [];
    for (const step of this.steps) {
      if (step.kind === 'action') {
        actions.push(step.action);
        continue;
      }
      const w = this.rsWrites.get(step.name) as RSWrite;
      const rs = w.latest;
      const reason = w.reasons.join('; ');
      if (w.orig.created) {
        const c = w.orig.created;
        actions.push({
          type: 'createReplicaSet',
          namespace: rs.namespace,
          name: rs.name,
          hash: c.hash,
          replicas: rs.replicas,
          minReadySeconds: rs.minReadySeconds,
          annotations: { ...rs.annotations },
          labels: { ...rs.labels },
          ownerReferences: c.ownerReferences,
          template: c.template,
          selector: c.selector,
          reason,
        });
        continue;
      }
      const minReady = rs.minReadySeconds !== w.orig.minReadySeconds ? { minReadySeconds: rs.minReadySeconds } : {};
      if (rs.replicas !== w.orig.replicas) {
        actions.push({
          type: 'scaleReplicaSet',
          name: rs.name,
          uid: rs.uid,
          resourceVersion: w.orig.resourceVersion,
          replicas: rs.replicas,
          annotations: { ...rs.annotations },
          ...minReady,
          reason,
        });
      } else {
        actions.push({
          type: 'updateReplicaSetAnnotations',
          name: rs.name,
          uid: rs.uid,
          resourceVersion: w.orig.resourceVersion,
          annotations: { ...rs.annotations },
          ...minReady,
          reason,
        });
      }
    }
    const plan: DeploymentPlan = { actions };
    if (this.requeueAfterMs !== undefined) plan.requeueAfterMs = this.requeueAfterMs;
    if (this.collisionCount !== undefined) plan.collisionCount = this.collisionCount;
    return plan;
  }
}

function describeStatusChange(a: DeploymentStatus, b: DeploymentStatus): string {
  const parts: string[] = [];
  const fields: Array<keyof DeploymentStatus> = [
    'observedGeneration',
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
    'terminatingReplicas',
    'collisionCount',
  ];
  for (const f of fields) if (a[f] !== b[f]) parts.push(`${f} ${String(a[f] ?? '-')}->${String(b[f] ?? '-')}`);
  for (const c of b.conditions ?? []) {
    const old = getCondition(a, c.type);
    if (!old || old.status !== c.status || old.reason !== c.reason) parts.push(`${c.type}=${c.status} (${c.reason ?? ''})`);
  }
  for (const c of a.conditions ?? []) if (!getCondition(b, c.type)) parts.push(`${c.type} removed`);
  return parts.length > 0 ? `: ${parts.join(', ')}` : '';
}

function replicasAnnotationsFor(d: DeploymentView): [number, number] {
  return [d.replicas, d.replicas + maxSurge(d)];
}

/** scaleReplicaSet: writes when the size or the replica annotations differ. */
function scaleRS(r: Round, rs: RS, to: number, why: string): { scaled: boolean; rs: RS } {
  const [desired, max] = replicasAnnotationsFor(r.d);
  const sizeChange = rs.replicas !== to;
  if (!sizeChange && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
  const annotations = withReplicasAnnotations(rs.annotations ?? {}, desired, max).annotations;
  const what = sizeChange
    ? `scale ${to > rs.replicas ? 'up' : 'down'} ${rs.name} ${rs.replicas}->${to} (${why})`
    : `set replica annotations of ${rs.name} to desired ${desired}, max ${max} (${why})`;
  const next = r.writeRS(rs, { replicas: to, annotations }, what);
  return { scaled: sizeChange, rs: next };
}

/** scaleReplicaSetAndRecordEvent: nothing at all when the size is already right. */
function scaleRSIfNeeded(r: Round, rs: RS, to: number, why: string): { scaled: boolean; rs: RS } {
  if (rs.replicas === to) return { scaled: false, rs };
  return scaleRS(r, rs, to, why);
}

/** getAllReplicaSetsAndSyncRevision: the new RS (revision synced, or created) and all old ones, oldest first. */
function getAllAndSyncRevision(r: Round, create: boolean): { newRS: RS | undefined; oldRSs: RS[] } {
  const oldRSs = findOldReplicaSets(r.d, r.rsList);
  const newRS = getNewReplicaSet(r, oldRSs, create);
  return { newRS, oldRSs };
}

function getNewReplicaSet(r: Round, oldRSs: RS[], create: boolean): RS | undefined {
  const d = r.d;
  const existing = findNewReplicaSet(d, r.rsList);
  const newRevision = String(maxRevision(oldRSs) + 1);
  if (existing) {
    const ann = newRevisionAnnotations(d, existing.annotations ?? {}, newRevision, true);
    const minReadyChange = existing.minReadySeconds !== d.minReadySeconds;
    if (ann.changed || minReadyChange) {
      const what: string[] = [];
      if (ann.changed) {
        const oldRev = existing.annotations?.[REVISION_ANNOTATION];
        const newRev = ann.annotations[REVISION_ANNOTATION];
        what.push(oldRev !== newRev ? `revision ${oldRev ?? '-'}->${newRev ?? '-'}` : 'copy Deployment annotations');
      }
      if (minReadyChange) what.push(`minReadySeconds ${existing.minReadySeconds}->${d.minReadySeconds}`);
      return r.writeRS(existing, { annotations: ann.annotations, minReadySeconds: d.minReadySeconds }, `sync new ReplicaSet ${existing.name}: ${what.join(', ')}`);
    }
    let needsUpdate = setDeploymentRevision(d, ann.annotations[REVISION_ANNOTATION] ?? '');
    if (hasProgressDeadline(d) && !getCondition(d.status, CONDITION_PROGRESSING)) {
      setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'True', REASON_FOUND_NEW_RS, `Found new replica set "${existing.name}"`, r.now));
      needsUpdate = true;
    }
    if (needsUpdate) r.writeDeployment(`record revision ${d.annotations[REVISION_ANNOTATION]} of new ReplicaSet ${existing.name}`);
    return existing;
  }
  if (!create) return undefined;

  const hash = podTemplateHash(d.template, d.status.collisionCount);
  const name = replicaSetName(d.name, hash);
  if (r.rsList.some((rs) => rs.name === name)) {
    // AlreadyExists with a different template: a hash collision. Bump collisionCount so the next hash differs.
    const before = d.status.collisionCount ?? 0;
    d.status.collisionCount = before + 1;
    r.collisionCount = d.status.collisionCount;
    r.writeDeployment(`hash collision on ReplicaSet ${name}: collisionCount ${before}->${d.status.collisionCount}`);
    throw new EndOfSync('hash collision');
  }
  const meta = d.template.metadata ?? {};
  const labels = { ...(meta.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const template: PodTemplate = { ...d.template, metadata: { ...meta, labels } };
  const selector: LabelSelector = {
    ...d.selector,
    matchLabels: { ...(d.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
  };
  if (d.selector.matchExpressions) selector.matchExpressions = d.selector.matchExpressions.map((e) => ({ ...e, values: e.values ? [...e.values] : e.values }));
  const ownerReferences: OwnerRef[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment', name: d.name, uid: d.uid, controller: true, blockOwnerDeletion: true },
  ];
  const draft: RS = {
    namespace: d.namespace,
    name,
    uid: '',
    resourceVersion: '',
    creationTimestamp: formatTime(r.now),
    generation: 1,
    labels,
    annotations: {},
    ownerReferences,
    replicas: 0,
    minReadySeconds: d.minReadySeconds,
    template,
    selector,
    status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, fullyLabeledReplicas: 0, observedGeneration: 0 },
    version: 0,
    created: { hash, template, selector, ownerReferences },
  };
  const count = newRSNewReplicas(d, [...oldRSs, draft], draft);
  if (count.error) throw new EndOfSync(count.error);
  const created: RS = { ...draft, replicas: count.replicas, annotations: newRevisionAnnotations(d, {}, newRevision, false).annotations };
  r.recordCreate(created, `create new ReplicaSet ${name} (revision ${newRevision}) with ${count.replicas} replica(s)`);

  let needsUpdate = setDeploymentRevision(d, newRevision);
  if (hasProgressDeadline(d)) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'True', REASON_NEW_RS_CREATED, `Created new replica set "${name}"`, r.now));
    needsUpdate = true;
  }
  if (needsUpdate) r.writeDeployment(`record revision ${newRevision} for new ReplicaSet ${name}`);
  return created;
}

function setDeploymentRevision(d: DeploymentView, revision: string): boolean {
  if (d.annotations[REVISION_ANNOTATION] === revision) return false;
  d.annotations[REVISION_ANNOTATION] = revision;
  return true;
}

/** checkPausedConditions: Progressing Unknown DeploymentPaused / DeploymentResumed when pausing / resuming. */
function checkPausedConditions(r: Round): void {
  const d = r.d;
  if (!hasProgressDeadline(d)) return;
  const cond = getCondition(d.status, CONDITION_PROGRESSING);
  if (cond && cond.reason === REASON_TIMED_OUT) return;
  const pausedCond = cond !== undefined && cond.reason === REASON_PAUSED;
  if (d.paused && !pausedCond) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'Unknown', REASON_PAUSED, 'Deployment is paused', r.now));
    r.writeDeployment('Deployment paused');
  } else if (!d.paused && pausedCond) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'Unknown', REASON_RESUMED, 'Deployment is resumed', r.now));
    r.writeDeployment('Deployment resumed');
  }
}

/** syncDeploymentStatus: plain calculateStatus, written when it differs from the in-memory status. */
function syncDeploymentStatus(r: Round, allRSs: readonly (RS | undefined)[], newRS: RS | undefined, why: string): void {
  const s = calculateDeploymentStatus(r.d, allRSs, newRS, r.now);
  if (deploymentStatusEqual(r.d.status, s)) return;
  r.d.status = s;
  r.writeDeployment(`status (${why})`);
}

/** syncRolloutStatus: status with Progressing and ReplicaFailure; when unchanged, maybe a deadline requeue. */
function syncRolloutStatus(r: Round, allRSs: readonly (RS | undefined)[], newRS: RS | undefined, why: string): void {
  const s = calculateRolloutStatus(r.d, allRSs, newRS, r.now);
  if (deploymentStatusEqual(r.d.status, s)) {
    r.requeueAfterMs = requeueForProgress(r.d, r.now, s);
    return;
  }
  r.d.status = s;
  r.writeDeployment(`rollout status (${why})`);
}

function cleanupDeployment(r: Round, oldRSs: readonly RS[]): void {
  // An RS written earlier in this sync is left for a later round (upstream would judge it by its stale copy).
  const candidates = replicaSetsToCleanUp(r.d, oldRSs).filter((rs) => !r.rsWrites.has(rs.name));
  for (const rs of candidates) {
    r.deleteRS(rs, `delete old ReplicaSet ${rs.name} (revision ${rs.annotations?.[REVISION_ANNOTATION] ?? '-'}): more than revisionHistoryLimit ${r.d.revisionHistoryLimit} old ReplicaSets`);
  }
}

/** upstream's scale(): resize on a replicas change outside a rollout step. */
function scale(r: Round, newRS: RS | undefined, oldRSs: RS[]): void {
  const d = r.d;
  const single = findActiveOrLatest(newRS, oldRSs);
  if (single) {
    if (single.replicas === d.replicas) return;
    scaleRSIfNeeded(r, single, d.replicas, `Deployment replicas is ${d.replicas}`);
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of oldRSs.filter(isActive)) scaleRSIfNeeded(r, old, 0, 'new ReplicaSet is saturated');
    return;
  }
  if (d.strategy.type === 'RollingUpdate') {
    for (const { rs, size } of proportionalSizes(d, newRS, oldRSs)) {
      scaleRS(r, rs as RS, size, `proportional scaling to ${d.replicas} replicas (+ maxSurge ${maxSurge(d)})`);
    }
  }
}

/** upstream's sync(): used when paused and on a scaling event. */
function sync(r: Round): void {
  const { newRS, oldRSs } = getAllAndSyncRevision(r, false);
  scale(r, newRS, oldRSs);
  if (r.d.paused) cleanupDeployment(r, oldRSs);
  syncDeploymentStatus(r, [...oldRSs, newRS], newRS, r.d.paused ? 'paused' : 'scaled');
}

function rolloutRolling(r: Round): void {
  const d = r.d;
  const { newRS: maybeNew, oldRSs } = getAllAndSyncRevision(r, true);
  const newRS = maybeNew as RS;
  const allRSs = [...oldRSs, newRS];

  // reconcileNewReplicaSet
  let scaledUp = false;
  if (newRS.replicas > d.replicas) {
    scaledUp = scaleRSIfNeeded(r, newRS, d.replicas, 'new ReplicaSet above replicas').scaled;
  } else if (newRS.replicas < d.replicas) {
    const count = newRSNewReplicas(d, allRSs, newRS);
    if (count.error) throw new EndOfSync(count.error);
    scaledUp = scaleRSIfNeeded(r, newRS, count.replicas, `rolling update, maxSurge ${maxSurge(d)}`).scaled;
  }
  if (scaledUp) return syncRolloutStatus(r, allRSs, newRS, 'scaled up new ReplicaSet');

  // reconcileOldReplicaSets
  const activeOld = oldRSs.filter(isActive);
  const down = oldReplicaSetsScaleDown(d, allRSs, activeOld, newRS);
  const current = new Map<string, RS>(activeOld.map((rs) => [rs.name, rs]));
  for (const step of down.steps) {
    const rs = current.get(step.name) as RS;
    current.set(step.name, scaleRSIfNeeded(r, rs, step.to, step.why).rs);
  }
  if (!down.error && down.scaledDown > 0) return syncRolloutStatus(r, allRSs, newRS, 'scaled down old ReplicaSets');

  if (deploymentComplete(d, d.status)) cleanupDeployment(r, oldRSs);
  syncRolloutStatus(r, allRSs, newRS, 'rolling update');
}

function rolloutRecreate(r: Round): void {
  const d = r.d;
  let { newRS, oldRSs } = getAllAndSyncRevision(r, false);
  let allRSs: (RS | undefined)[] = [...oldRSs, newRS];
  let scaledDown = false;
  for (const rs of oldRSs.filter(isActive)) {
    if (scaleRSIfNeeded(r, rs, 0, 'Recreate: old ReplicaSets go to 0 first').scaled) scaledDown = true;
  }
  if (scaledDown) return syncRolloutStatus(r, allRSs, newRS, 'scaled down old ReplicaSets');
  const oldRunning = sum(oldRSs, (rs) => rs.status.replicas) > 0 || r.oldPodsRunning > 0;
  if (oldRunning) return syncRolloutStatus(r, allRSs, newRS, 'waiting for old pods to stop');
  if (!newRS) {
    ({ newRS, oldRSs } = getAllAndSyncRevision(r, true));
    allRSs = [...oldRSs, newRS];
  }
  scaleRSIfNeeded(r, newRS as RS, d.replicas, 'Recreate: old pods are gone');
  if (deploymentComplete(d, d.status)) cleanupDeployment(r, oldRSs);
  syncRolloutStatus(r, allRSs, newRS, 'recreate');
}

/**
 * One reconcile of a Deployment (upstream's syncDeployment), in upstream's order:
 *  - an invalid selector: nothing; an empty selector: only observedGeneration (upstream refuses to select all);
 *  - being deleted: revision sync and status only;
 *  - Progressing Unknown DeploymentPaused / DeploymentResumed on pause / resume (with a progress deadline);
 *  - paused: scaling, history cleanup and status, no rollout;
 *  - a scaling event (desired-replicas annotation of an active RS differs from replicas): scaling and status;
 *  - otherwise a Recreate or RollingUpdate rollout step, then status with Progressing, and history cleanup
 *    once complete.
 * The plan holds the writes that sync gets through, in order; the caller runs them, re-observes and plans again.
 */
export function planDeployment(input: PlanDeploymentInput): DeploymentPlan {
  const d0 = input.deployment;
  if (selectorError(d0.selector) !== undefined) return { actions: [] };
  const rsList: RS[] = input.replicaSets.map((rs) => ({ ...rs, annotations: { ...(rs.annotations ?? {}) }, version: 0 }));
  const r = new Round(d0, rsList, input.oldPodsRunning, input.now);
  if (isEverythingSelector(d0.selector)) {
    if (d0.status.observedGeneration < d0.generation) {
      r.d.status.observedGeneration = d0.generation;
      r.writeDeployment('Deployment selects all pods (a non-empty selector is required)');
    }
    return r.plan();
  }
  try {
    if (r.d.deletionTimestamp) {
      const { newRS, oldRSs } = getAllAndSyncRevision(r, false);
      syncDeploymentStatus(r, [...oldRSs, newRS], newRS, 'Deployment is being deleted');
      return r.plan();
    }
    checkPausedConditions(r);
    if (r.d.paused) {
      sync(r);
      return r.plan();
    }
    const first = getAllAndSyncRevision(r, false);
    if (isScalingEvent(r.d, [...first.oldRSs, ...(first.newRS ? [first.newRS] : [])])) {
      sync(r);
      return r.plan();
    }
    if (r.d.strategy.type === 'Recreate') rolloutRecreate(r);
    else rolloutRolling(r);
  } catch (e) {
    if (!(e instanceof EndOfSync)) throw e;
  }
  return r.plan();
}

/**
 * What to do when creating the new ReplicaSet met AlreadyExists on an RS the plan did not know about
 * (`existing`, read back from the API): if this Deployment controls it and its template matches, it is the
 * new RS (plan again once it is observed); otherwise it is a hash collision and status.collisionCount goes
 * up by one so the next plan computes another name.
 */
export function resolveCreateConflict(d: DeploymentView, existing: ReplicaSetView): DeploymentPlan {
  const ref = (existing.ownerReferences ?? []).find((o) => o.controller === true);
  if (ref && ref.uid === d.uid && templatesEqualIgnoringHash(d.template, existing.template)) return { actions: [] };
  const before = d.status.collisionCount ?? 0;
  const status = cloneStatus(d.status);
  status.collisionCount = before + 1;
  return {
    actions: [
      {
        type: 'updateDeploymentStatus',
        status,
        reason: `hash collision on ReplicaSet ${existing.name}: collisionCount ${before}->${status.collisionCount}`,
      },
    ],
    collisionCount: status.collisionCount,
  };
}
