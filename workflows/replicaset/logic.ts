/**
 * Pure reconcile decisions of the replicaset / replicationcontroller engine, modelled on the upstream
 * ReplicaSet controller (kube-controller-manager v1.35). Everything here runs inside Temporal workflow code:
 * no I/O, no clocks, no randomness, no Node built-ins. Time always comes in as a `now` argument.
 *
 * A ReplicationController goes through the same functions; its map selector is turned into
 * { matchLabels } first (see selectorFromMap in ../common/selector).
 */
import { NAME_SUFFIX_ALPHABET } from '../common/hash';
import { labelsContain, selectorError, selectorMatches } from '../common/selector';
import { claimDecision, controllerRef } from '../common/controller-ref';
import { utf8Bytes } from '../common/utf8';
import { conditionsEqual } from '../common/conditions';
import type { OwnerRef } from '../common/meta';
import type {
  ManageError,
  PodManifest,
  PodPhase,
  PodSummary,
  ReplicaCondition,
  ReplicaOwner,
  ReplicaStatus,
} from './types';

/** Upstream's fixed BurstReplicas: at most this many creates or deletes per round. */
export const DEFAULT_BURST_REPLICAS = 500;
/** Size of the first create batch; later batches double. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;
export const REPLICA_FAILURE = 'ReplicaFailure';
export const REASON_FAILED_CREATE = 'FailedCreate';
export const REASON_FAILED_DELETE = 'FailedDelete';
/** Alphabet of the API server's generateName suffixes (no vowels, no look-alike characters). */
export { NAME_SUFFIX_ALPHABET };
export const NAME_SUFFIX_LENGTH = 5;
/** Longest object name a generated name may reach (DNS label length). */
export const MAX_NAME_LENGTH = 63;
/** Longest base kept in front of the suffix, as upstream's name generator truncates it. */
export const MAX_GENERATED_BASE_LENGTH = MAX_NAME_LENGTH - NAME_SUFFIX_LENGTH; // 58

export type Instant = Date | number;

// ---------------------------------------------------------------------------------------------
// time helpers

function toMillis(t: Instant): number {
  return typeof t === 'number' ? t : t.getTime();
}

/** RFC 3339 text to epoch millis; undefined for absent or unparsable (upstream's zero time). */
export function parseTime(s: string | undefined | null): number | undefined {
  if (s == null || s === '') return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Epoch millis to RFC 3339 with whole seconds in UTC, the way metav1.Time is serialized. */
export function formatTime(t: Instant): string {
  return new Date(Math.floor(toMillis(t) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// ---------------------------------------------------------------------------------------------
// pod state

/** Neither terminal (Succeeded/Failed) nor being deleted: counts towards replicas. */
export function isPodActive(pod: PodSummary): boolean {
  return pod.phase !== 'Succeeded' && pod.phase !== 'Failed' && !pod.deletionTimestamp;
}

/** Being deleted but not terminal yet: counts towards status.terminatingReplicas. */
export function isPodTerminating(pod: PodSummary): boolean {
  return pod.phase !== 'Succeeded' && pod.phase !== 'Failed' && !!pod.deletionTimestamp;
}

export function isPodReady(pod: PodSummary): boolean {
  return pod.ready === true;
}

/**
 * Ready, and (when minReadySeconds > 0) ready since at least minReadySeconds before `now`.
 * A ready pod whose Ready transition time is unknown is not available when minReadySeconds > 0.
 */
export function isPodAvailable(pod: PodSummary, minReadySeconds: number, now: Instant): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = parseTime(pod.readySince);
  return since !== undefined && since + minReadySeconds * 1000 <= toMillis(now);
}

export function filterActivePods(pods: readonly PodSummary[]): PodSummary[] {
  return pods.filter(isPodActive);
}

export function filterTerminatingPods(pods: readonly PodSummary[]): PodSummary[] {
  return pods.filter(isPodTerminating);
}

// ---------------------------------------------------------------------------------------------
// ownership

/** Controlled by this owner: compared by UID only, so a re-created owner with the same name does not count. */
export function isControlledBy(pod: PodSummary, owner: Pick<ReplicaOwner, 'uid'>): boolean {
  const ref = controllerRef(pod.ownerReferences);
  return ref !== undefined && ref.uid === owner.uid;
}

export interface PodClassification {
  /** Set when the owner's selector is invalid: every list is empty and the round should be skipped, as upstream does. */
  selectorError?: string;
  /** Controlled by the owner and matching its selector, in any state (active, terminating, terminal). */
  owned: PodSummary[];
  /** `owned` restricted to active pods: what the owner currently counts as its replicas. */
  activeOwned: PodSummary[];
  /** Active orphans the selector matches, to adopt (set the owner as controller). Empty while the owner is being deleted. */
  toAdopt: PodSummary[];
  /** Active pods the owner controls that its selector no longer matches, to release. Empty while the owner is being deleted. */
  toRelease: PodSummary[];
}

/**
 * Which pods this owner keeps, adopts and lets go, like upstream's claim step. `pods` may be any pods;
 * those in other namespaces and those controlled by someone else are ignored.
 *
 * Why each rule:
 *  - adoption and release only look at active pods, because upstream claims from the active list only;
 *  - nothing is adopted or released while the owner has a deletionTimestamp (owned+matching pods stay owned);
 *  - an orphan with a deletionTimestamp is never adopted (it is also not active);
 *  - a successfully adopted pod joins activeOwned for this round; a released one leaves it.
 * An invalid selector yields only `selectorError` (upstream does not reconcile such an owner at all).
 */
export function classifyPods(owner: ReplicaOwner, pods: readonly PodSummary[]): PodClassification {
  const result: PodClassification = { owned: [], activeOwned: [], toAdopt: [], toRelease: [] };
  // Without this guard an invalid selector would "match nothing" and every owned pod would be released.
  const invalid = selectorError(owner.selector);
  if (invalid !== undefined) return { ...result, selectorError: invalid };
  for (const pod of pods) {
    const active = isPodActive(pod);
    switch (claimDecision(owner, pod)) {
      case 'owned':
        result.owned.push(pod);
        if (active) result.activeOwned.push(pod);
        break;
      case 'adopt':
        if (active) result.toAdopt.push(pod);
        break;
      case 'release':
        if (active) result.toRelease.push(pod);
        break;
    }
  }
  return result;
}

/** The controller reference this owner puts on pods it creates or adopts. */
export function controllerRefFor(owner: ReplicaOwner): OwnerRef {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

// ---------------------------------------------------------------------------------------------
// scale-down order

const PHASE_ORDINAL: Partial<Record<PodPhase, number>> = { Pending: 0, Unknown: 1, Running: 2 };

function phaseOrdinal(phase: PodPhase): number {
  return PHASE_ORDINAL[phase] ?? 0;
}

/** Go's frexp for positive finite x: x = frac * 2^exp with frac in [0.5, 1). */
function frexp(x: number): [number, number] {
  let exp = Math.floor(Math.log2(x)) + 1;
  let frac = x / Math.pow(2, exp);
  while (frac >= 1) {
    frac /= 2;
    exp++;
  }
  while (frac < 0.5) {
    frac *= 2;
    exp--;
  }
  return [frac, exp];
}

/**
 * log2 evaluated the way Go's portable math.Log2 does (frexp, exact for powers of two, else
 * log(frac)/ln2 + exp), so that bucket boundaries agree with upstream even where plain Math.log2 would
 * round differently for durations a hair below a power of two.
 */
function goLog2(x: number): number {
  const [frac, exp] = frexp(x);
  if (frac === 0.5) return exp - 1;
  return Math.log(frac) * Math.LOG2E + exp;
}

/**
 * Base-2 logarithmic age bucket of `t` relative to `now`, over nanoseconds like upstream;
 * -1 when t is not in the past.
 */
export function logarithmicAgeRank(t: number, now: number): number {
  const d = (now - t) * 1e6;
  if (!(d > 0)) return -1;
  return Math.trunc(goLog2(d));
}

/** afterOrZero: t1 later than t2, where an absent time counts as the latest of all. */
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

interface RankedPod {
  pod: PodSummary;
  rank: number;
  readyTime: number | undefined;
  created: number | undefined;
}

/**
 * Compares two timestamps for "delete first": more recent first, in log2 age buckets when `now` is known;
 * inside one bucket the lower UID goes first (upstream's deliberate pseudo-random spread — it is
 * deterministic because it only depends on the UIDs). Returns undefined when the times are equal.
 */
function newerFirst(ta: number | undefined, tb: number | undefined, a: PodSummary, b: PodSummary, now: number | undefined): boolean | undefined {
  if (ta === tb) return undefined;
  if (now === undefined || ta === undefined || tb === undefined) return afterOrZero(ta, tb);
  const diff = logarithmicAgeRank(ta, now) - logarithmicAgeRank(tb, now);
  if (diff === 0) return a.uid < b.uid;
  return diff < 0;
}

/** Upstream's ActivePodsWithRanks ordering with LogarithmicScaleDown (GA, locked on): true when a goes before b. */
function deleteBefore(a: RankedPod, b: RankedPod, now: number | undefined): boolean {
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.nodeName ?? '';
  const nb = pb.nodeName ?? '';
  // 1. unscheduled before scheduled
  if (na !== nb && (na === '' || nb === '')) return na === '';
  // 2. Pending < Unknown < Running
  if (phaseOrdinal(pa.phase) !== phaseOrdinal(pb.phase)) return phaseOrdinal(pa.phase) < phaseOrdinal(pb.phase);
  // 3. not ready before ready
  if (isPodReady(pa) !== isPodReady(pb)) return !isPodReady(pa);
  // 4. cheaper to delete first (PodDeletionCost is on by default)
  if ((pa.deletionCost ?? 0) !== (pb.deletionCost ?? 0)) return (pa.deletionCost ?? 0) < (pb.deletionCost ?? 0);
  // 5. more related pods on the same node first (spreads what remains)
  if (a.rank !== b.rank) return a.rank > b.rank;
  // 6. both ready: ready for a shorter time first; when ready times fall in one log2 bucket the UID decides
  //    and, as upstream, the remaining rules are not consulted
  if (isPodReady(pa) && isPodReady(pb)) {
    const r = newerFirst(a.readyTime, b.readyTime, pa, pb, now);
    if (r !== undefined) return r;
  }
  // 7. more container restarts first, then more sidecar restarts
  if ((pa.restartCount ?? 0) !== (pb.restartCount ?? 0)) return (pa.restartCount ?? 0) > (pb.restartCount ?? 0);
  if ((pa.sidecarRestartCount ?? 0) !== (pb.sidecarRestartCount ?? 0)) {
    return (pa.sidecarRestartCount ?? 0) > (pb.sidecarRestartCount ?? 0);
  }
  // 8. newer first (absent creation time first)
  const r = newerFirst(a.created, b.created, pa, pb, now);
  return r === true;
}

/** Stable merge sort, so the result never depends on the JS engine's sort implementation. */
function mergeSort<T>(items: T[], cmp: (x: T, y: T) => number): T[] {
  if (items.length <= 1) return items.slice();
  const mid = items.length >> 1;
  const left = mergeSort(items.slice(0, mid), cmp);
  const right = mergeSort(items.slice(mid), cmp);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    if (cmp(right[j], left[i]) < 0) out.push(right[j++]);
    else out.push(left[i++]);
  }
  while (i < left.length) out.push(left[i++]);
  while (j < right.length) out.push(right[j++]);
  return out;
}

/**
 * For each pod, how many active related pods share its node. `relatedPods` are the pods of every
 * ReplicaSet controlled by the same controller as this one (including this one), deduplicated by UID;
 * pass [] when the owner has no controller — upstream then ranks every pod 0.
 */
export function colocationRanks(pods: readonly PodSummary[], relatedPods: readonly PodSummary[]): number[] {
  const seen = new Set<string>();
  const perNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (seen.has(p.uid)) continue;
    seen.add(p.uid);
    if (!isPodActive(p)) continue;
    const node = p.nodeName ?? '';
    perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  return pods.map((p) => perNode.get(p.nodeName ?? '') ?? 0);
}

/**
 * `pods` sorted so the ones to delete first come first (see deleteBefore for the rules). `now` enables
 * upstream's logarithmic time buckets; without it times compare exactly. Pods the upstream order cannot
 * tell apart are kept in UID (then name) order so the result does not depend on the input order — upstream
 * leaves that to its unstable sort.
 */
export function rankPodsForDeletion(pods: readonly PodSummary[], relatedPods: readonly PodSummary[] = [], now?: Instant): PodSummary[] {
  const nowMs = now === undefined ? undefined : toMillis(now);
  const ranks = colocationRanks(pods, relatedPods);
  const ranked: RankedPod[] = pods.map((pod, i) => ({
    pod,
    rank: ranks[i],
    readyTime: isPodReady(pod) ? parseTime(pod.readySince) : undefined,
    created: parseTime(pod.creationTimestamp),
  }));
  const cmp = (a: RankedPod, b: RankedPod): number => {
    if (deleteBefore(a, b, nowMs)) return -1;
    if (deleteBefore(b, a, nowMs)) return 1;
    if (a.pod.uid !== b.pod.uid) return a.pod.uid < b.pod.uid ? -1 : 1;
    if (a.pod.name !== b.pod.name) return a.pod.name < b.pod.name ? -1 : 1;
    return 0;
  };
  return mergeSort(ranked, cmp).map((r) => r.pod);
}

/**
 * The `count` pods to delete on scale-down. When every pod goes, no ranking is needed and the input
 * order is kept, as upstream does.
 */
export function choosePodsToDelete(
  pods: readonly PodSummary[],
  count: number,
  relatedPods: readonly PodSummary[] = [],
  now?: Instant,
): PodSummary[] {
  if (count <= 0) return [];
  if (count >= pods.length) return pods.slice();
  return rankPodsForDeletion(pods, relatedPods, now).slice(0, count);
}

// ---------------------------------------------------------------------------------------------
// scaling

/**
 * Batch sizes for creating `total` pods: initialBatchSize, then doubling, the last one trimmed so they
 * sum to `total` (1, 2, 4, 8, ...). The caller runs the batches in order, every call of a batch in parallel,
 * and stops after the first batch with any failure: the pods of later batches are simply not attempted
 * (the next reconcile tries again). That keeps a quota or admission error from producing a flood of
 * identical failed requests.
 */
export function slowStartBatches(total: number, initialBatchSize: number = SLOW_START_INITIAL_BATCH_SIZE): number[] {
  if (!Number.isInteger(initialBatchSize) || initialBatchSize < 1) {
    throw new RangeError(`initialBatchSize must be a positive integer, got ${initialBatchSize}`);
  }
  const batches: number[] = [];
  let remaining = Math.max(0, Math.floor(total));
  for (let size = Math.min(remaining, initialBatchSize); size > 0; size = Math.min(2 * size, remaining)) {
    batches.push(size);
    remaining -= size;
  }
  return batches;
}

export type ReplicaPlan =
  | { action: 'none' }
  | { action: 'create'; count: number }
  | { action: 'delete'; pods: PodSummary[] };

export interface PlanOptions {
  /** cap on creates or deletes in one round (upstream's burstReplicas), default 500 */
  burstReplicas?: number;
  /** pods of all ReplicaSets sharing this owner's controller; see colocationRanks */
  relatedPods?: readonly PodSummary[];
  /** the reconcile's clock reading, for the deletion order's time buckets */
  now?: Instant;
}

/**
 * What one round must do to bring the active owned pods to spec.replicas: create the shortfall or delete
 * the excess (chosen by rankPodsForDeletion), at most burstReplicas either way. An owner with a
 * deletionTimestamp is left alone, as upstream skips manageReplicas for it.
 * The third argument may be the burst cap alone (number) or the full options.
 */
export function planReplicas(
  owner: ReplicaOwner,
  activeOwnedPods: readonly PodSummary[],
  burstOrOptions: number | PlanOptions = {},
): ReplicaPlan {
  const opts: PlanOptions = typeof burstOrOptions === 'number' ? { burstReplicas: burstOrOptions } : burstOrOptions;
  const burst = opts.burstReplicas ?? DEFAULT_BURST_REPLICAS;
  if (owner.deletionTimestamp) return { action: 'none' };
  const diff = activeOwnedPods.length - owner.replicas;
  if (diff < 0) return { action: 'create', count: Math.min(-diff, burst) };
  if (diff > 0) {
    const count = Math.min(diff, burst);
    return { action: 'delete', pods: choosePodsToDelete(activeOwnedPods, count, opts.relatedPods ?? [], opts.now) };
  }
  return { action: 'none' };
}

// ---------------------------------------------------------------------------------------------
// naming and pod manifests

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;

/** 64-bit FNV-1a of the UTF-8 bytes of `s`. */
export function fnv1a64(s: string): bigint {
  let h = FNV64_OFFSET;
  for (const b of utf8Bytes(s)) {
    h ^= BigInt(b);
    h = (h * FNV64_PRIME) & MASK64;
  }
  return h;
}

const SUFFIX_SPACE = Math.pow(NAME_SUFFIX_ALPHABET.length, NAME_SUFFIX_LENGTH); // 27^5 = 14,348,907
const HALF_BITS = 12; // Feistel network over 24 bits: 2^24 = 16,777,216 >= 27^5
const HALF_MASK = (1 << HALF_BITS) - 1;
const FEISTEL_ROUNDS = 6;

/** murmur3's 32-bit finalizer: a cheap, well-mixing integer hash. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Round keys derived from the owner UID (two FNV-1a 64 hashes, spread by fmix32). */
function suffixKeys(ownerUid: string): number[] {
  const h1 = fnv1a64(ownerUid);
  const h2 = fnv1a64(`\u0000${ownerUid}`);
  const words = [Number(h1 & 0xffffffffn), Number(h1 >> 32n), Number(h2 & 0xffffffffn), Number(h2 >> 32n)];
  const keys: number[] = [];
  for (let i = 0; i < FEISTEL_ROUNDS; i++) keys.push(fmix32((words[i % words.length] + Math.imul(i + 1, 0x9e3779b9)) >>> 0));
  return keys;
}

function feistel24(x: number, keys: readonly number[]): number {
  let left = x >>> HALF_BITS;
  let right = x & HALF_MASK;
  for (const k of keys) {
    const next = left ^ (fmix32((right ^ k) >>> 0) & HALF_MASK);
    left = right;
    right = next;
  }
  return (left << HALF_BITS) | right;
}

function feistel24Inverse(y: number, keys: readonly number[]): number {
  let left = y >>> HALF_BITS;
  let right = y & HALF_MASK;
  for (let i = keys.length - 1; i >= 0; i--) {
    const previous = right ^ (fmix32((left ^ keys[i]) >>> 0) & HALF_MASK);
    right = left;
    left = previous;
  }
  return (left << HALF_BITS) | right;
}

/**
 * Maps seq onto the suffix space with a permutation keyed by the owner UID: a Feistel network over 24 bits,
 * walked until it lands inside 27^5 (cycle walking keeps it a permutation of [0, 27^5)). Being a bijection,
 * one owner's sequence numbers 0 .. 27^5-1 never share a suffix, which a plain hash could not promise
 * (10,000 random 5-character suffixes would collide a few times).
 */
function suffixIndex(ownerUid: string, seq: number): number {
  const keys = suffixKeys(ownerUid);
  let x = seq % SUFFIX_SPACE;
  do {
    x = feistel24(x, keys);
  } while (x >= SUFFIX_SPACE);
  return x;
}

/**
 * Deterministic name for the owner's seq-th created pod: "<ownerName>-<5 chars>" from the generateName
 * alphabet, with the "<ownerName>-" base cut to 58 characters so the name stays within 63, as upstream's
 * generateName does. Deterministic names make a retried create idempotent (AlreadyExists, not a twin pod).
 * seq must be a non-negative integer; it wraps after 27^5.
 */
export function podName(ownerName: string, ownerUid: string, seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`seq must be a non-negative integer, got ${seq}`);
  const base = `${ownerName}-`.slice(0, MAX_GENERATED_BASE_LENGTH);
  let x = suffixIndex(ownerUid, seq);
  const alphabetSize = NAME_SUFFIX_ALPHABET.length;
  let suffix = '';
  for (let i = 0; i < NAME_SUFFIX_LENGTH; i++) {
    suffix = NAME_SUFFIX_ALPHABET[x % alphabetSize] + suffix;
    x = Math.floor(x / alphabetSize);
  }
  return base + suffix;
}

/**
 * The seq a name of podName() was made from (modulo 27^5), or undefined when the name is not one
 * of this owner's generated names: the inverse of the suffix permutation, walking the cycle back.
 */
export function podSeq(ownerName: string, ownerUid: string, name: string): number | undefined {
  return seqOfName(`${ownerName}-`.slice(0, MAX_GENERATED_BASE_LENGTH), suffixKeys(ownerUid), name);
}

function seqOfName(base: string, keys: readonly number[], name: string): number | undefined {
  if (name.length !== base.length + NAME_SUFFIX_LENGTH || !name.startsWith(base)) return undefined;
  let x = 0;
  for (const c of name.slice(base.length)) {
    const digit = NAME_SUFFIX_ALPHABET.indexOf(c);
    if (digit < 0) return undefined;
    x = x * NAME_SUFFIX_ALPHABET.length + digit;
  }
  do {
    x = feistel24Inverse(x, keys);
  } while (x >= SUFFIX_SPACE);
  return x;
}

/** How far ahead of the counter a seen name may lie and still move it (a pod adopted under some other name rarely decodes into it). */
export const SEQ_CATCH_UP_WINDOW = 1 << 16;

/**
 * The next seq once pods with these names are known to exist. A create may have happened without
 * the counter's advance being recorded: a local activity runs inside its workflow task, and a task
 * that fails (a signal came before a continue-as-new, a replica died) is run again from the last
 * recorded state, which may then see those pods instead of creating them. Reusing their seqs would
 * give a later pod the name of one that is gone, or still terminating; this keeps the counter past
 * every one of our names it has seen.
 */
export function seqAfterNames(nextSeq: number, ownerName: string, ownerUid: string, names: Iterable<string>): number {
  // the owner's round keys are hashed once for the whole batch of names
  const base = `${ownerName}-`.slice(0, MAX_GENERATED_BASE_LENGTH);
  const keys = suffixKeys(ownerUid);
  let next = nextSeq;
  for (const name of names) {
    const s = seqOfName(base, keys, name);
    if (s === undefined) continue;
    // the counter wraps after 27^5 as podName does: place s in the counter's current lap
    const lap = next - (next % SUFFIX_SPACE);
    const seq = lap + s >= next ? lap + s : lap + SUFFIX_SPACE + s;
    if (seq - next < SEQ_CATCH_UP_WINDOW) next = seq + 1;
  }
  return next;
}

function cloneJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map((e) => cloneJson(e)) as unknown as T;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v as Record<string, unknown>)) out[k] = cloneJson(e);
    return out as T;
  }
  return v;
}

/**
 * Upstream refuses to create a pod without labels (it could never be matched back to its owner);
 * the caller should treat this as a failed create. Returns the error message, or undefined.
 */
export function podTemplateError(owner: ReplicaOwner): string | undefined {
  const labels = owner.template.metadata?.labels ?? {};
  return Object.keys(labels).length === 0 ? 'unable to create pods, no labels' : undefined;
}

/**
 * The pod to create: template labels, annotations and finalizers (copied), the owner as controller
 * (blockOwnerDeletion so foreground deletion waits for it), and a deep copy of the template spec.
 * Empty label/annotation/finalizer collections are left out, as Go's omitempty would.
 */
export function podFromTemplate(owner: ReplicaOwner, name: string): PodManifest {
  const meta = owner.template.metadata ?? {};
  const manifest: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.namespace,
      ownerReferences: [controllerRefFor(owner)],
    },
    spec: cloneJson(owner.template.spec ?? {}),
  };
  if (meta.labels && Object.keys(meta.labels).length > 0) manifest.metadata.labels = { ...meta.labels };
  if (meta.annotations && Object.keys(meta.annotations).length > 0) manifest.metadata.annotations = { ...meta.annotations };
  if (meta.finalizers && meta.finalizers.length > 0) manifest.metadata.finalizers = [...meta.finalizers];
  return manifest;
}

// ---------------------------------------------------------------------------------------------
// status

function conditionIndex(conditions: readonly ReplicaCondition[], type: string): number {
  return conditions.findIndex((c) => c.type === type);
}

/**
 * The status to write after a round, as upstream computes it:
 *  - replicas / fullyLabeledReplicas / readyReplicas / availableReplicas from `activePods` (the active pods
 *    the owner claimed this round; fully labeled = carries every template label);
 *  - terminatingReplicas (ReplicaSet only; the DeploymentReplicaSetTerminatingReplicas gate is beta and on in
 *    1.35, and the RC controller never sets it): owned pods that match the selector, are being deleted and
 *    are not terminal. `allOwnedPods` may contain any pods; the filter is applied here. Undefined counts 0.
 *  - ReplicaFailure: added (status True, FailedCreate/FailedDelete, the error text) when the round failed
 *    and no such condition exists yet; an existing one is left untouched even if the error changed, so its
 *    lastTransitionTime and message stay; removed once a round succeeds.
 *  - observedGeneration = owner.generation (upstream stamps it when it writes the status).
 */
export function calculateStatus(
  owner: ReplicaOwner,
  activePods: readonly PodSummary[],
  allOwnedPods: readonly PodSummary[] | undefined,
  manageError: ManageError | undefined | null,
  now: Instant,
): ReplicaStatus {
  const templateLabels = owner.template.metadata?.labels ?? {};
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of activePods) {
    if (labelsContain(pod.labels, templateLabels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, owner.minReadySeconds, now)) available++;
    }
  }

  let conditions: ReplicaCondition[] = (owner.status.conditions ?? []).map((c) => ({ ...c }));
  const existing = conditionIndex(conditions, REPLICA_FAILURE);
  if (manageError && existing < 0) {
    conditions.push({
      type: REPLICA_FAILURE,
      status: 'True',
      reason: manageError.kind === 'create' ? REASON_FAILED_CREATE : REASON_FAILED_DELETE,
      message: manageError.message,
      lastTransitionTime: formatTime(now),
    });
  } else if (!manageError && existing >= 0) {
    conditions = conditions.filter((c) => c.type !== REPLICA_FAILURE);
  }

  const status: ReplicaStatus = {
    replicas: activePods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    observedGeneration: owner.generation,
    conditions,
  };
  if (owner.kind === 'ReplicaSet') {
    status.terminatingReplicas = (allOwnedPods ?? []).filter(
      (p) => isPodTerminating(p) && isControlledBy(p, owner) && selectorMatches(owner.selector, p.labels),
    ).length;
  }
  return status;
}

/**
 * True when writing `b` over `a` would change nothing upstream cares about: the four counters,
 * terminatingReplicas (absent differs from 0), observedGeneration and the conditions in order.
 * Use statusEqual(owner.status, calculateStatus(...)) to skip no-op writes.
 */
export function statusEqual(a: ReplicaStatus, b: ReplicaStatus): boolean {
  if (
    a.replicas !== b.replicas ||
    a.fullyLabeledReplicas !== b.fullyLabeledReplicas ||
    a.readyReplicas !== b.readyReplicas ||
    a.availableReplicas !== b.availableReplicas ||
    a.terminatingReplicas !== b.terminatingReplicas ||
    a.observedGeneration !== b.observedGeneration
  ) {
    return false;
  }
  return conditionsEqual(a.conditions, b.conditions);
}

/**
 * Milliseconds until the reconcile should run again because a ready pod will cross minReadySeconds, or
 * undefined when no such wait is needed (minReadySeconds 0, or every ready pod already available).
 * Like upstream: the earliest pod's remaining time; if ready and available differ but no pod has a known
 * future availability time (e.g. a Ready condition without a transition time), fall back to minReadySeconds.
 * Pass the status just computed with the same `now` to use its counters; otherwise they are derived from `pods`.
 */
export function nextAvailabilityCheck(
  owner: ReplicaOwner,
  pods: readonly PodSummary[],
  now: Instant,
  status?: Pick<ReplicaStatus, 'readyReplicas' | 'availableReplicas'>,
): number | undefined {
  const minReady = owner.minReadySeconds;
  if (!(minReady > 0)) return undefined;
  const nowMs = toMillis(now);
  let ready: number;
  let available: number;
  if (status) {
    ready = status.readyReplicas;
    available = status.availableReplicas;
  } else {
    const readyPods = pods.filter(isPodReady);
    ready = readyPods.length;
    available = readyPods.filter((p) => isPodAvailable(p, minReady, nowMs)).length;
  }
  if (ready === available) return undefined;
  let next: number | undefined;
  for (const pod of pods) {
    if (!isPodReady(pod)) continue;
    const since = parseTime(pod.readySince);
    if (since === undefined) continue;
    const wait = since + minReady * 1000 - nowMs;
    if (wait > 0 && (next === undefined || wait < next)) next = wait;
  }
  return next ?? minReady * 1000;
}
