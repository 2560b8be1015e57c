import { log, proxyActivities } from '@temporalio/workflow';
import type { ClaimGuard, PvBinderActivities, RecyclerPodRef, VolumeGuard, WriteOutcome } from '../../activities/pv-binder/activities';
import { API_BATCHES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { claimSettled, planClaimSync, type ClaimObservation, type ProvisionerFlags } from './claim-sync';
import { ANN_MIGRATED_TO, CONTROLLER, type ClaimEvent, type VolumeEvent } from './types';
import { planVolumeSync, type VolumeObservation } from './volume-sync';
import { isPatched } from '../runtime/patches';

/** The binder's settings, from its flags. */
export interface BinderSettings extends ProvisionerFlags {
  /** --pvclaimbinder-sync-period: how often an unbound claim is looked at again */
  syncPeriodMs: number;
}

export interface PvClaimWorkflowInput {
  namespace: string;
  name: string;
  /** the claim this run binds; a claim recreated under the name gets a run of its own */
  uid: string;
  settings: BinderSettings;
  tuning?: Partial<LoopTuning>;
}

/** A recycling under way: its pod, the pod's Events already passed on, and how it ended once it has. */
export interface Recycling {
  pod: RecyclerPodRef;
  seen: string[];
  outcome?: { succeeded: true } | { succeeded: false; message: string };
}

export interface PvVolumeWorkflowInput {
  name: string;
  uid: string;
  settings: BinderSettings;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: a recycler pod outlives a run */
  recycling?: Recycling;
}

export const pvClaimWorkflowId = (namespace: string, name: string) => `${CONTROLLER}/claims/${namespace}/${name}`;
export const pvVolumeWorkflowId = (name: string) => `${CONTROLLER}/volumes/${name}`;

/** The latest view wins; a deletion sticks; a nudge is kept until a view carries it. */
export function mergeClaimEvents(earlier: ClaimEvent, later: ClaimEvent): ClaimEvent {
  if (later.gone || earlier.gone) return { ...later, gone: !!later.gone || (!later.claim && !!earlier.gone) };
  return { ...(later.claim ?? earlier.claim ? { claim: later.claim ?? earlier.claim } : {}), ...(earlier.nudge || later.nudge ? { nudge: true } : {}) };
}

export function mergeVolumeEvents(earlier: VolumeEvent, later: VolumeEvent): VolumeEvent {
  if (later.gone || earlier.gone) return { ...later, gone: !!later.gone || (!later.volume && !!earlier.gone) };
  return { ...(later.volume ?? earlier.volume ? { volume: later.volume ?? earlier.volume } : {}), ...(earlier.nudge || later.nudge ? { nudge: true } : {}) };
}

const io = proxyActivities<PvBinderActivities>(API_BATCHES);

/**
 * After a write, the next look reads the API, not the cache, which may not have seen the write
 * yet; a conflict or a vanished object is looked at again at once.
 */
function after(r: WriteOutcome, fresh: { value: boolean }): ReconcileResult {
  if (r.outcome !== 'done') log.info('object changed since it was read; observing it again', { outcome: r.outcome, detail: r.detail });
  fresh.value = true;
  return { requeueAfterMs: 0 };
}

/**
 * One PersistentVolumeClaim, as upstream's claim worker syncs it: binds it to the best matching
 * volume (or the one it names), sets it Pending with upstream's Events while nothing fits, hands
 * it to a provisioner, marks it Lost when its volume goes. An unbound claim is looked at again
 * every sync period, as upstream's resync does; a bound and settled claim ends its run (the watch
 * starts a new one when anything about it changes).
 */
export async function pvClaimWorkflow(input: PvClaimWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvClaimWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let gone = false;
  const fresh = { value: false };
  let last: ClaimObservation | undefined;
  let lastPlan = '';
  let writes = 0;

  async function reconcile(): Promise<ReconcileResult> {
    if (gone) return { finished: true };
    const o = await io.observeClaim({ namespace: input.namespace, name: input.name, ...(fresh.value ? { fresh: true } : {}) });
    fresh.value = false;
    if (!o) return { finished: true };
    await id.handOverIfNew(o.claim.uid);
    id.learn(o.claim.uid);
    last = o;
    const c = o.claim;
    const guard: ClaimGuard = { namespace: c.namespace, name: c.name, uid: c.uid, resourceVersion: c.resourceVersion };
    const plan = planClaimSync(o, input.settings);
    lastPlan = plan.kind;
    const resync: ReconcileResult = { requeueAfterMs: input.settings.syncPeriodMs };
    switch (plan.kind) {
      case 'none':
        if (plan.events.length) await io.recordClaimEvents({ claim: guard, events: plan.events, reason: plan.why });
        if (claimSettled(o)) return { finished: true };
        return resync;
      case 'error':
        if (plan.events.length) await io.recordClaimEvents({ claim: guard, events: plan.events, reason: plan.error });
        return { failed: true, error: plan.error };
      case 'bind': {
        if (claimSettled(o)) return { finished: true };
        const v = plan.volume;
        const volume: VolumeGuard = { name: v.name, uid: v.uid, resourceVersion: v.resourceVersion };
        writes++;
        return after(await io.bindClaimAndVolume({ claim: guard, volume, reason: plan.why }), fresh);
      }
      case 'pending': {
        writes++;
        const r = await io.setClaimPhase({ claim: guard, phase: 'Pending', events: plan.events, eventsOnChange: false, reason: plan.why });
        return r.outcome === 'done' ? resync : after(r, fresh);
      }
      case 'lost': {
        if (c.phase === 'Lost') return { finished: true };
        writes++;
        const r = await io.setClaimPhase({ claim: guard, phase: 'Lost', events: [plan.event], eventsOnChange: true, reason: plan.why });
        return r.outcome === 'done' ? { finished: true } : after(r, fresh);
      }
      case 'assign-default-class':
        writes++;
        return after(await io.assignDefaultClass({ claim: guard, className: plan.className, reason: 'the claim asked for no class and a default class exists' }), fresh);
      case 'migration-annotation':
        writes++;
        return after(await io.annotateClaim({
          claim: guard,
          set: plan.migratedTo ? { [ANN_MIGRATED_TO]: plan.migratedTo } : {},
          remove: plan.migratedTo ? [] : [ANN_MIGRATED_TO],
          reason: 'the claim\'s provisioner migrated to a CSI driver',
        }), fresh);
      case 'external-provisioning': {
        writes++;
        const r = await io.externalProvisioning({ claim: guard, provisioner: plan.provisioner, reason: `no volume matches; provisioner ${plan.provisioner} makes one` });
        return r.outcome === 'done' ? resync : after(r, fresh);
      }
      case 'provisioning-failed': {
        writes++;
        const r = await io.provisioningFailed({ claim: guard, ...(plan.annotate ? { annotate: plan.annotate } : {}), rescheduleNode: plan.rescheduleNode, event: plan.event, reason: plan.event.message });
        return r.outcome === 'done' ? resync : after(r, fresh);
      }
      case 'host-path-provisioning': {
        writes++;
        const r = await io.provisionHostPath({ claim: guard, cls: plan.cls, volumeName: plan.volumeName, reason: 'no volume matches; the in-tree host-path provisioner makes one' });
        return r.outcome === 'done' ? resync : after(r, fresh);
      }
    }
  }

  await runObjectLoop<ClaimEvent>({
    controller: CONTROLLER,
    tuning,
    // a settled run ends; an event sent as it ends (the claim deleted just as its volume settled
    // Bound) is folded in and reconciled, not dropped with the run. Runs recorded before ended there.
    drainBeforeFinish: () => isPatched('pv-binder-drains-before-finish'),
    apply(e) {
      if (e.gone) gone = true;
      else if (e.claim) gone = false;
    },
    reconcile,
    describe: () => ({
      phase: last?.claim.phase,
      volumeName: last?.claim.volumeName || undefined,
      storageClass: last?.claim.storageClassName,
      match: last?.match?.name,
      lastPlan: lastPlan || undefined,
      writes,
    }),
    continueAsNewArgs: () => [input],
  });
}

/**
 * One PersistentVolume, as upstream's volume worker syncs it: Available while unused, Bound with
 * its claim, Released when the claim goes, then reclaimed by its policy (kept, deleted by the
 * host-path deleter or an external one, or Failed with upstream's Event when nothing can delete
 * it). A volume with nothing left to do ends its run.
 */
export async function pvVolumeWorkflow(input: PvVolumeWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvVolumeWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let gone = false;
  const fresh = { value: false };
  let last: VolumeObservation | undefined;
  let lastPlan = '';
  let writes = 0;

  let recycling = input.recycling;

  /** upstream's recycleVolumeOperation, across reconciles: start the pod, wait for it, make the volume Available or Failed. */
  async function recycle(o: VolumeObservation, guard: VolumeGuard): Promise<ReconcileResult> {
    const v = o.volume;
    if (!recycling) {
      const r = await io.startRecycler({ volume: { name: v.name, uid: v.uid }, reason: 'the claim is gone and the reclaim policy is Recycle' });
      if (r.outcome === 'skip') {
        fresh.value = true;
        return { requeueAfterMs: 0 };
      }
      if (r.outcome === 'used') {
        await io.volumeEvents({ volume: { name: v.name, uid: v.uid }, volumeEvent: { type: 'Normal', reason: 'VolumeFailedRecycle', message: `Volume is used by pods: ${r.pods.join(',')}` },
          reason: 'active pods still use the volume\'s old claim: recycling waits' });
        return { requeueAfterMs: input.settings.syncPeriodMs };
      }
      if (r.outcome === 'failed') return failRecycle(v.phase, guard, r.message);
      recycling = { pod: r.pod, seen: [] };
    }
    if (!recycling.outcome) {
      const c = await io.checkRecycler({ pod: recycling.pod, volume: { name: v.name, uid: v.uid }, seen: recycling.seen });
      recycling = { ...recycling, seen: [...recycling.seen, ...c.forwarded] };
      // the watch wakes the run when the pod changes; the sync period is the fallback
      if (c.state === 'running') return { requeueAfterMs: input.settings.syncPeriodMs };
      recycling = { ...recycling, outcome: c.state === 'succeeded' ? { succeeded: true } : { succeeded: false, message: `failed to recycle volume: ${c.message}` } };
    }
    const outcome = recycling.outcome!;
    if (!outcome.succeeded) {
      recycling = undefined;
      return failRecycle(v.phase, guard, outcome.message);
    }
    writes++;
    const r = await io.unbindVolume({ volume: guard, event: { type: 'Normal', reason: 'VolumeRecycled', message: 'Volume recycled' }, reason: 'the recycler pod emptied the volume' });
    if (r.outcome === 'done') recycling = undefined;
    return after(r, fresh);
  }

  /** A failed recycling: Failed with the Event (once, as the phase changes), then tried again after a backoff, as upstream retries. */
  async function failRecycle(phase: string | undefined, guard: VolumeGuard, message: string): Promise<ReconcileResult> {
    const event = { type: 'Warning' as const, reason: 'VolumeFailedRecycle', message: `Recycle failed: ${message}` };
    if (phase !== 'Failed') {
      writes++;
      await io.setVolumePhase({ volume: guard, phase: 'Failed', message: event.message, event, reason: 'recycling the volume failed' });
    }
    fresh.value = true;
    return { failed: true, error: event.message };
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (gone) return { finished: true };
    const o = await io.observeVolume({ name: input.name, ...(fresh.value ? { fresh: true } : {}) });
    fresh.value = false;
    if (!o) return { finished: true };
    await id.handOverIfNew(o.volume.uid);
    id.learn(o.volume.uid);
    last = o;
    const v = o.volume;
    const guard: VolumeGuard = { name: v.name, uid: v.uid, resourceVersion: v.resourceVersion };
    // a recycler pod already made is seen through, whatever happened to the volume meanwhile
    if (recycling) return recycle(o, guard);
    const plan = planVolumeSync(o);
    lastPlan = plan.kind;
    switch (plan.kind) {
      case 'none':
        // a volume waiting for its claim's sync is nudged again by the watch; nothing to time here
        return plan.settled ? { finished: true } : { requeueAfterMs: input.settings.syncPeriodMs };
      case 'anneal':
        writes++;
        return after(await io.annealVolume({ volume: guard, finalizers: plan.finalizers, ...(plan.migratedTo !== undefined ? { migratedTo: plan.migratedTo } : {}), reason: plan.why }), fresh);
      case 'phase':
        writes++;
        return after(await io.setVolumePhase({ volume: guard, phase: plan.phase, message: plan.message, ...(plan.event ? { event: plan.event } : {}), reason: plan.why }), fresh);
      case 'mismatch':
        await io.volumeEvents({ volume: { name: v.name, uid: v.uid }, claim: { namespace: o.claim!.namespace, name: o.claim!.name, uid: o.claim!.uid },
          volumeEvent: plan.volumeEvent, claimEvent: plan.claimEvent, reason: plan.why });
        return { requeueAfterMs: input.settings.syncPeriodMs };
      case 'unbind':
        writes++;
        return after(await io.unbindVolume({ volume: guard, reason: plan.why }), fresh);
      case 'delete': {
        writes++;
        const r = await io.deleteReleasedVolume({ volume: { name: v.name, uid: v.uid }, path: plan.path, reason: plan.why });
        return r.outcome === 'done' ? { finished: true } : after(r, fresh);
      }
      case 'recycle':
        return recycle(o, guard);
    }
  }

  await runObjectLoop<VolumeEvent>({
    controller: CONTROLLER,
    tuning,
    // a settled run ends; an event sent as it ends (the claim deleted just as its volume settled
    // Bound) is folded in and reconciled, not dropped with the run. Runs recorded before ended there.
    drainBeforeFinish: () => isPatched('pv-binder-drains-before-finish'),
    apply(e) {
      if (e.gone) gone = true;
      else if (e.volume) gone = false;
    },
    reconcile,
    describe: () => ({
      phase: last?.volume.phase,
      claim: last?.volume.claimRef ? `${last.volume.claimRef.namespace}/${last.volume.claimRef.name}` : undefined,
      reclaimPolicy: last?.volume.reclaimPolicy,
      lastPlan: lastPlan || undefined,
      recyclerPod: recycling ? `${recycling.pod.namespace}/${recycling.pod.name}` : undefined,
      writes,
    }),
    continueAsNewArgs: () => [{ ...input, recycling }],
  });
}
