/**
 * Upstream's resource claim controller (pkg/controller/resourceclaim), its decisions as pure
 * functions: which ResourceClaim a pod's claim entry names, whether a pod still needs its claims,
 * the claim generated from a ResourceClaimTemplate, and what a claim's sync writes (stale
 * `status.reservedFor` entries dropped, the allocation and finalizer released, a generated claim
 * of a finished pod deleted).
 */
import type { OwnerRef } from '../common/meta';

export const CONTROLLER = 'resourceclaim';
/** the source component of upstream's Events */
export const EVENT_COMPONENT = 'resource_claim';
export const FAILED_CREATION = 'FailedResourceClaimCreation';
/** what ties a generated claim to the pod's claim entry it was generated for */
export const POD_CLAIM_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';
/** the field manager of the pod status apply, as upstream's */
export const FIELD_MANAGER = 'ResourceClaimController';
/** the finalizer the scheduler puts on a claim it allocates (resourceapi.Finalizer) */
export const CLAIM_FINALIZER = 'resource.kubernetes.io/delete-protection';
/** room kept for the hyphen and the five random characters of a generated 63-character name */
const MAX_GENERATE_BASE = 57;

/** One entry of pod.spec.resourceClaims. */
export interface PodClaimEntry {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

/** A pod as this controller reads it. */
export interface ClaimPodView {
  namespace: string;
  name: string;
  uid: string;
  deleting: boolean;
  nodeName: string;
  phase: string;
  claims: PodClaimEntry[];
  /** status.resourceClaimStatuses: entry name → the generated claim's name, null when none is needed */
  statuses: Record<string, string | null>;
}

/** A pod consumer in a claim's status.reservedFor (other consumers keep all their fields). */
export interface ConsumerRef {
  apiGroup?: string;
  resource: string;
  name: string;
  uid: string;
}

/** A ResourceClaim as this controller reads it. */
export interface ClaimView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  deleting: boolean;
  /** the UID of each Pod (v1) that is its controller owner (there should be one at most) */
  controllerPods: Array<{ name: string; uid: string }>;
  /** the POD_CLAIM_ANNOTATION, when it has it */
  podClaimName?: string;
  reservedFor: ConsumerRef[];
  allocated: boolean;
  /** it carries CLAIM_FINALIZER */
  finalizer: boolean;
}

/** resourceclaim.Name: what the pod's claim entry names. */
export type ClaimNameResult =
  | { kind: 'name'; name: string; checkOwner: boolean }
  /** a status entry without a name: the claim is not needed */
  | { kind: 'notNeeded' }
  /** a template whose claim is not recorded in the pod status yet */
  | { kind: 'notCreated' }
  /** neither a claim nor a template named */
  | { kind: 'unsupported'; message: string };

export function claimNameOf(pod: Pick<ClaimPodView, 'namespace' | 'name' | 'statuses'>, entry: PodClaimEntry): ClaimNameResult {
  if (entry.resourceClaimName !== undefined) return { kind: 'name', name: entry.resourceClaimName, checkOwner: false };
  if (entry.resourceClaimTemplateName !== undefined) {
    if (Object.prototype.hasOwnProperty.call(pod.statuses, entry.name)) {
      const n = pod.statuses[entry.name];
      return n === null || n === undefined ? { kind: 'notNeeded' } : { kind: 'name', name: n, checkOwner: true };
    }
    return { kind: 'notCreated' };
  }
  return { kind: 'unsupported', message: `pod "${pod.namespace}/${pod.name}", spec.resourceClaim "${entry.name}": none of the supported fields are set` };
}

/** resourceclaim.IsForPod: the pod is the claim's controller owner (empty when it is). */
export function notForPodMessage(pod: Pick<ClaimPodView, 'namespace' | 'name' | 'uid'>, claim: Pick<ClaimView, 'namespace' | 'name' | 'controllerPods'>): string {
  if (claim.namespace === pod.namespace && claim.controllerPods.some((p) => p.uid === pod.uid)) return '';
  return `ResourceClaim ${claim.namespace}/${claim.name} was not created for pod ${pod.namespace}/${pod.name} (pod is not owner)`;
}

export const isReservedForPod = (pod: Pick<ClaimPodView, 'uid'>, claim: Pick<ClaimView, 'reservedFor'>): boolean =>
  claim.reservedFor.some((r) => r.uid === pod.uid);

const terminal = (phase: string) => phase === 'Succeeded' || phase === 'Failed';

/** podNeedsClaims: false (with upstream's reason) once the pod's claims may be released. */
export function podNeedsClaims(pod: Pick<ClaimPodView, 'phase' | 'deleting' | 'nodeName'>, deleted: boolean): { needs: boolean; reason: string } {
  if (deleted) return { needs: false, reason: 'pod got removed' };
  if (terminal(pod.phase)) return { needs: false, reason: 'pod has terminated' };
  if (pod.deleting && pod.nodeName === '') return { needs: false, reason: 'pod got deleted before scheduling' };
  return { needs: true, reason: 'pod might run' };
}

/** isPodDone: certain that none of its containers runs or ever will. */
export function isPodDone(pod: Pick<ClaimPodView, 'phase' | 'deleting' | 'nodeName'>): boolean {
  return terminal(pod.phase) || (pod.deleting && pod.nodeName === '');
}

/** The claims a pod's entries name (the pod-resource-claim index and the claims to look at when it is done). */
export function namedClaims(pod: Pick<ClaimPodView, 'namespace' | 'name' | 'statuses' | 'claims'>): string[] {
  const out: string[] = [];
  for (const e of pod.claims) {
    const r = claimNameOf(pod, e);
    if (r.kind === 'name') out.push(r.name);
  }
  return out;
}

/** Looks a claim up by name in what the caller knows (undefined: there is none). */
export type ClaimLookup = (name: string) => ClaimView | undefined;

/** podNeedsWork: whether the pod has a claim to generate or an allocated claim to reserve. */
export function podNeedsWork(pod: ClaimPodView, lookup: ClaimLookup): { needs: boolean; reason: string } {
  if (pod.deleting) return { needs: false, reason: 'pod is deleted' };
  // upstream would generate a deleted claim of a finished pod again, but its mutation cache still
  // holds the claim it created and hides the deletion; a pod that no longer needs claims gets none
  const keep = podNeedsClaims(pod, false);
  if (!keep.needs) return keep;
  for (const e of pod.claims) {
    const r = claimNameOf(pod, e);
    if (r.kind === 'unsupported') return { needs: true, reason: r.message };
    if (r.kind === 'notCreated') return { needs: true, reason: 'must create ResourceClaim from template' };
    if (r.kind === 'notNeeded') return { needs: false, reason: 'claim is not needed' };
    const claim = lookup(r.name);
    if (!claim) {
      if (e.resourceClaimTemplateName !== undefined) return { needs: true, reason: 'must create ResourceClaim from template' };
      return { needs: false, reason: 'claim is missing and must be created by user' };
    }
    if (r.checkOwner) {
      const msg = notForPodMessage(pod, claim);
      if (msg) return { needs: false, reason: msg };
    }
    if (pod.nodeName === '') continue;
    if (claim.allocated && !isReservedForPod(pod, claim)) return { needs: true, reason: `need to reserve claim ${claim.namespace}/${claim.name} for pod` };
  }
  return { needs: false, reason: 'nothing to do' };
}

/** What syncPod does for one claim entry before it looks at reservations. */
export type EntryStep =
  | { kind: 'skip' }
  /** find the claim generated for the entry, or create it from the template */
  | { kind: 'generate'; entry: PodClaimEntry; template: string }
  | { kind: 'error'; entry: PodClaimEntry; message: string };

/**
 * handleClaim's decision for one entry, given the claim its status names (if any): nothing when the
 * entry names no claim to generate or its generated claim is there and the pod's; otherwise the
 * generated claim must be found or created (a claim recorded in the status that was deleted, or
 * that the pod no longer controls, is generated again).
 */
export function entryStep(pod: ClaimPodView, entry: PodClaimEntry, lookup: ClaimLookup): EntryStep {
  const r = claimNameOf(pod, entry);
  if (r.kind === 'unsupported') return { kind: 'error', entry, message: `checking for claim before creating it: ${r.message}` };
  if (r.kind === 'notNeeded') return { kind: 'skip' };
  if (r.kind === 'name' && r.name !== '') {
    const claim = lookup(r.name);
    if (claim && (!r.checkOwner || !notForPodMessage(pod, claim))) return { kind: 'skip' };
  }
  if (entry.resourceClaimTemplateName === undefined) return { kind: 'skip' };
  return { kind: 'generate', entry, template: entry.resourceClaimTemplateName };
}

/** findPodResourceClaim: among claims the pod controls, the first annotated for the entry. */
export function findGenerated(podUid: string, entry: string, claims: readonly ClaimView[]): ClaimView | undefined {
  return claims.find((c) => c.controllerPods.some((p) => p.uid === podUid) && c.podClaimName === entry);
}

/** The claims of a scheduled pod that are allocated and not reserved for it yet (syncPod's tail). */
export function claimsToReserve(pod: ClaimPodView, lookup: ClaimLookup): { reserve: string[]; error?: string } {
  const reserve: string[] = [];
  if (pod.nodeName === '') return { reserve };
  for (const e of pod.claims) {
    const r = claimNameOf(pod, e);
    if (r.kind === 'unsupported') return { reserve, error: r.message };
    if (r.kind !== 'name') continue;
    const claim = lookup(r.name);
    if (!claim) return { reserve };
    if (r.checkOwner) {
      const msg = notForPodMessage(pod, claim);
      if (msg) return { reserve, error: msg };
    }
    if (claim.allocated && !isReservedForPod(pod, claim)) reserve.push(claim.name);
  }
  return { reserve };
}

/** The template's parts a generated claim copies. */
export interface ClaimTemplateView {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  spec: Record<string, unknown>;
}

/** generateName `<pod>-<entry>-`, both parts cut in proportion when it would pass 57 characters. */
export function generateNameFor(podName: string, entry: string): string {
  const full = `${podName}-${entry}-`;
  if (full.length <= MAX_GENERATE_BASE) return full;
  const cut = (s: string) => s.slice(0, Math.floor((s.length * MAX_GENERATE_BASE) / full.length));
  return `${cut(podName)}-${cut(entry)}`;
}

/** The ResourceClaim upstream creates for an entry: the template's labels, annotations and spec, controlled by the pod. */
export function generatedClaim(pod: Pick<ClaimPodView, 'name' | 'uid'>, entry: string, template: ClaimTemplateView) {
  const owner: OwnerRef = { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true };
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: {
      generateName: generateNameFor(pod.name, entry),
      ownerReferences: [owner],
      annotations: { ...(template.annotations ?? {}), [POD_CLAIM_ANNOTATION]: entry },
      ...(template.labels ? { labels: template.labels } : {}),
    },
    spec: template.spec,
  };
}

interface DeviceRequestShape {
  exactly?: { adminAccess?: boolean } | null;
  firstAvailable?: unknown[] | null;
}

function requestsOf(spec: Record<string, unknown>): DeviceRequestShape[] {
  const devices = spec.devices as { requests?: DeviceRequestShape[] | null } | undefined;
  return devices?.requests ?? [];
}

/** Why a template cannot be used with the gates as set (DRAAdminAccess, DRAPrioritizedList), or ''. */
export function templateRefusal(spec: Record<string, unknown>, gates: { adminAccess: boolean; prioritizedList: boolean }): string {
  const reqs = requestsOf(spec);
  if (!gates.adminAccess && reqs.some((r) => r.exactly?.adminAccess === true)) return 'admin access is requested, but the feature is disabled';
  if (!gates.prioritizedList && reqs.some((r) => (r.firstAvailable ?? []).length > 0)) {
    return 'template includes a prioritized list of subrequests, but the feature is disabled';
  }
  return '';
}

/** The Event upstream records on the pod when an entry fails. */
export const failureEventMessage = (entry: string, error: string): string => `PodResourceClaim ${entry}: ${error}`;

/** What a reservedFor pod is, as the API server has it under the entry's name. */
export type ConsumerFate = 'active' | 'done' | 'replaced' | 'gone';

export function consumerFate(entry: ConsumerRef, pod: Pick<ClaimPodView, 'uid' | 'phase' | 'deleting' | 'nodeName'> | undefined): ConsumerFate {
  if (!pod) return 'gone';
  if (pod.uid !== entry.uid) return 'replaced';
  return isPodDone(pod) ? 'done' : 'active';
}

export const isPodConsumer = (r: ConsumerRef): boolean => (r.apiGroup ?? '') === '' && r.resource === 'pods';

/** The writes of one claim sync, in order. */
export interface ClaimPlan {
  /** a reservedFor entry that is not a pod: upstream's sync fails on it and writes nothing */
  unsupported?: string;
  /** status write: the reservations left, and whether the allocation is cleared with them */
  status?: { reservedFor: ConsumerRef[]; clearAllocation: boolean };
  /** a status write clearing only the allocation (a deleted claim no one uses) */
  clearAllocationOnly?: boolean;
  /** drop CLAIM_FINALIZER afterwards */
  removeFinalizer: boolean;
  /** delete the claim: generated for a pod that is done or was replaced */
  delete: boolean;
}

/**
 * syncClaim: reservations of pods that are gone, replaced or done are dropped (the last one
 * leaving releases the allocation and then the finalizer); a deleted claim no one uses loses its
 * allocation and finalizer; an unreserved claim generated for a pod that will not run (or was
 * replaced) is deleted. `fates` gives each pod entry's fate by UID; `owner` is the owning pod as
 * it is now (undefined: not known, left to the garbage collector as upstream leaves it).
 */
export function planClaim(claim: ClaimView, fates: Record<string, ConsumerFate>, owner: Pick<ClaimPodView, 'uid' | 'phase' | 'deleting' | 'nodeName'> | undefined): ClaimPlan {
  const valid: ConsumerRef[] = [];
  for (const r of claim.reservedFor) {
    if (!isPodConsumer(r)) {
      return { unsupported: `unsupported ReservedFor entry: ${JSON.stringify(r)}`, removeFinalizer: false, delete: false };
    }
    const fate = fates[r.uid] ?? 'active';
    if (fate === 'active') valid.push(r);
  }
  const plan: ClaimPlan = { removeFinalizer: false, delete: false };
  if (valid.length < claim.reservedFor.length) {
    const clearAllocation = valid.length === 0 && claim.finalizer;
    plan.status = { reservedFor: valid, clearAllocation };
    const allocatedAfter = claim.allocated && !clearAllocation;
    plan.removeFinalizer = claim.finalizer && !allocatedAfter;
  } else if (claim.finalizer && claim.deleting && valid.length === 0) {
    plan.clearAllocationOnly = claim.allocated;
    plan.removeFinalizer = true;
  }
  if (valid.length === 0 && claim.controllerPods.length > 0 && owner) {
    const want = claim.controllerPods[0];
    if (owner.uid !== want.uid || isPodDone(owner)) plan.delete = true;
  }
  return plan;
}

/** Whether a claim sync would write anything (what the watch starts a workflow for). */
export function planWrites(plan: ClaimPlan): boolean {
  return !!plan.status || !!plan.clearAllocationOnly || plan.removeFinalizer || plan.delete;
}
