import { log, proxyActivities } from '@temporalio/workflow';
import type { ResourceClaimActivities } from '../../activities/resourceclaim/activities';
import { apiBatches } from '../runtime/activity-options';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER,
  claimsToReserve,
  entryStep,
  failureEventMessage,
  planClaim,
  podNeedsClaims,
  type ClaimPlan,
  type ClaimPodView,
  type ClaimView,
} from './logic';

/** What the watch sends: why it looked again. Each reconcile reads the pod or claim afresh. */
export interface ResourceClaimNudge {
  reason: string;
}

export interface ResourceClaimWorkflowInput {
  namespace: string;
  name: string;
  tuning?: Partial<LoopTuning>;
}

export function resourceClaimPodWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/pods/${name}`;
}

export function resourceClaimWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/resourceclaims/${name}`;
}

export const mergeNudges = (earlier: ResourceClaimNudge, later: ResourceClaimNudge): ResourceClaimNudge =>
  earlier.reason === later.reason ? later : { reason: `${earlier.reason}; ${later.reason}` };

// a replica killed mid-create is noticed in 5 s; each call is a few quick requests
const io = proxyActivities<ResourceClaimActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this pod's claims need work" (upstream's syncPod): started by the watch when an
 * entry's claim is to be generated from its template, or a scheduled pod's allocated claim is not
 * reserved for it. Entries are handled in spec order; a generated claim is looked for (by the
 * pod's ownership and the entry's annotation) before one is created, so a retry after a replica
 * died never makes a second. The claims found or created are recorded in
 * status.resourceClaimStatuses in one apply. A failure is upstream's Warning Event on the pod and a
 * retry with backoff. The run ends when nothing is left to do, or the pod is gone or being deleted.
 */
export async function resourceClaimPodWorkflow(input: ResourceClaimWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let pod: ClaimPodView | undefined;
  let claims: Record<string, ClaimView | null> = {};
  let generated = 0;
  let failing = '';
  let lastReason = '';

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await io.observeClaimPod({ namespace: input.namespace, name: input.name });
    pod = seen.pod;
    claims = seen.claims;
    if (!pod || pod.deleting || !podNeedsClaims(pod, false).needs) return { finished: true };
    const p = pod;
    const lookup = (n: string) => claims[n] ?? undefined;

    const statuses: Array<{ name: string; resourceClaimName: string }> = [];
    for (const entry of p.claims) {
      const step = entryStep(p, entry, lookup);
      if (step.kind === 'skip') continue;
      let error: string;
      if (step.kind === 'error') {
        error = step.message;
      } else {
        const r = await io.ensureGeneratedClaim({
          reason: `claim ${entry.name} of the pod is to be generated from template ${step.template}`,
          namespace: p.namespace, pod: p.name, podUid: p.uid, entry: entry.name, template: step.template,
        });
        if (r.outcome !== 'failed') {
          if (r.outcome === 'created') generated++;
          claims = { ...claims, [r.claim.name]: r.claim };
          statuses.push({ name: entry.name, resourceClaimName: r.claim.name });
          continue;
        }
        error = r.message;
      }
      failing = failureEventMessage(entry.name, error);
      await io.recordClaimFailure({ namespace: p.namespace, pod: p.name, podUid: p.uid, message: failing });
      log.warn('resource claim sync failed', { entry: entry.name, error });
      return { failed: true, error: `pod ${p.namespace}/${p.name}, ${failing}` };
    }
    if (statuses.length) {
      const r = await io.applyPodClaimStatuses({ reason: 'generated claims are not recorded in the pod status', namespace: p.namespace, pod: p.name, statuses });
      if (r.outcome === 'gone') return { finished: true };
      for (const s of statuses) p.statuses[s.name] = s.resourceClaimName;
    }

    const due = claimsToReserve(p, lookup);
    for (const claim of due.reserve) {
      const r = await io.reserveClaimForPod({ reason: 'the pod is scheduled and its allocated claim is not reserved for it', namespace: p.namespace, claim, pod: p.name, podUid: p.uid });
      if (r.outcome === 'conflict') return { failed: true, error: `reserve claim ${p.namespace}/${claim} for pod: conflict` };
    }
    failing = due.error ?? '';
    if (due.error) return { failed: true, error: due.error };
    return { finished: true };
  }

  await runObjectLoop<ResourceClaimNudge>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      lastReason = e.reason;
    },
    reconcile,
    describe: () => ({
      pod: `${input.namespace}/${input.name}`,
      entries: pod?.claims.map((c) => c.name),
      recorded: pod ? Object.entries(pod.statuses).map(([k, v]) => `${k}=${v ?? ''}`) : undefined,
      generated,
      failing: failing || undefined,
      lastReason: lastReason || undefined,
    }),
    continueAsNewArgs: () => [input],
  });
}

/**
 * One episode of "this claim's sync has writes to make" (upstream's syncClaim): started by the
 * watch when a reservation names a pod that is gone, replaced or done, when a deleted claim no one
 * uses still holds its finalizer, or when an unreserved claim was generated for a pod that will
 * not run. Each reconcile reads the claim and those pods from the API server (the pods' fates are
 * never taken from a cache that may lag), plans, and writes with the claim's version, so a claim
 * changed meanwhile (the scheduler reserving it for another pod) is read again, not overwritten.
 */
export async function resourceClaimWorkflow(input: ResourceClaimWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let claim: ClaimView | undefined;
  let plan: ClaimPlan | undefined;
  let released = 0;
  let deleted = false;
  let lastReason = '';

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await io.observeClaim({ namespace: input.namespace, name: input.name });
    claim = seen.claim;
    if (!claim) return { finished: true };
    const c = claim;
    plan = planClaim(c, seen.fates, seen.owner);
    if (plan.unsupported) {
      log.warn('claim sync failed', { error: plan.unsupported });
      return { finished: true };
    }
    let rv = c.resourceVersion;
    const key = { namespace: c.namespace, name: c.name };
    if (plan.status || plan.clearAllocationOnly) {
      const clearAllocation = plan.status ? plan.status.clearAllocation : true;
      const r = await io.writeClaimStatus({
        reason: plan.status ? 'reservations of pods that are gone or done are dropped' : 'a deleted claim no one uses keeps its allocation',
        ...key, resourceVersion: rv, ...(plan.status ? { reservedFor: plan.status.reservedFor } : {}), clearAllocation,
      });
      if (r.outcome !== 'written') return r.outcome === 'gone' ? { finished: true } : { failed: true, error: 'the claim changed while its status was written' };
      rv = r.resourceVersion;
      if (plan.status) released += c.reservedFor.length - plan.status.reservedFor.length;
    }
    if (plan.removeFinalizer) {
      const r = await io.removeClaimFinalizer({ reason: 'the claim is no longer allocated', ...key, resourceVersion: rv });
      if (r.outcome === 'gone') return { finished: true };
      if (r.outcome === 'conflict') return { failed: true, error: 'the claim changed while its finalizer was removed' };
    }
    if (plan.delete) {
      await io.deleteGeneratedClaim({ reason: 'generated for a pod that will not run and not reserved', ...key, uid: c.uid });
      deleted = true;
    }
    return { finished: true };
  }

  await runObjectLoop<ResourceClaimNudge>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      lastReason = e.reason;
    },
    reconcile,
    describe: () => ({
      claim: `${input.namespace}/${input.name}`,
      reservedFor: claim?.reservedFor.map((r) => r.name),
      allocated: claim?.allocated,
      planned: plan ? [plan.status ? 'status' : '', plan.clearAllocationOnly ? 'deallocate' : '', plan.removeFinalizer ? 'finalizer' : '', plan.delete ? 'delete' : '']
        .filter(Boolean) : undefined,
      released,
      deleted,
      lastReason: lastReason || undefined,
    }),
    continueAsNewArgs: () => [input],
  });
}
