import { claimClass, claimHasClass, isVolumeBoundToClaim, volumeUnsatisfiedReason } from './match';
import { hostPathProvisionRefusal, migratedDriver, provisioningRoute } from './plugins';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  type BinderEvent,
  type ClaimView,
  type ClassView,
  type VolumeView,
} from './types';

/*
 * What to do with a claim, as upstream's syncClaim decides it (syncUnboundClaim for a claim
 * without the bind-completed annotation, syncBoundClaim for one with it). Pure: the activity
 * that observed the claim found its class, the volume it names and, for a claim naming none, the
 * volume findBestMatch picks.
 */

export interface ClaimObservation {
  claim: ClaimView;
  /** the claim's class, when it names one the API has */
  cls?: ClassView;
  /** spec.volumeName's volume; null when the claim names one that does not exist */
  named?: VolumeView | null;
  /** for a claim naming no volume: the one findBestMatch picked */
  match?: VolumeView;
  /** the newest default class, for a claim that asked for no class */
  defaultClass?: string;
  /** active pods using the claim that the scheduler has not placed yet */
  nonScheduledPods: string[];
  /** the claim's class names no binding mode (upstream's IsDelayBindingMode error) */
  bindingModeError?: string;
}

export interface ProvisionerFlags {
  dynamicProvisioning: boolean;
  hostPathProvisioner: boolean;
}

export type ClaimPlan =
  /** nothing to write; `events` are still recorded */
  | { kind: 'none'; events: BinderEvent[]; why: string }
  | { kind: 'error'; events: BinderEvent[]; error: string }
  /** upstream's bind(): volume first, then the claim */
  | { kind: 'bind'; volume: VolumeView; why: string }
  /** updateClaimStatus: phase with capacity, modes and attributes class cleared; events first */
  | { kind: 'pending'; events: BinderEvent[]; why: string }
  /** updateClaimStatusWithEvent: the event only when the phase changes */
  | { kind: 'lost'; event: BinderEvent; why: string }
  | { kind: 'assign-default-class'; className: string }
  /** the migrated-to annotation of a claim whose provisioner moved to CSI */
  | { kind: 'migration-annotation'; migratedTo: string | null }
  /** setClaimProvisioner, then the ExternalProvisioning Event */
  | { kind: 'external-provisioning'; provisioner: string }
  /** the in-tree host-path provisioner makes pvc-<uid> */
  | { kind: 'host-path-provisioning'; cls: ClassView; volumeName: string }
  /** a refused in-tree provisioning: annotate first unless refused before that, maybe drop the scheduler's node */
  | { kind: 'provisioning-failed'; annotate?: string; rescheduleNode: boolean; event: BinderEvent };

export const FAILED_BINDING_NO_CLASS = 'no persistent volumes available for this claim and no storage class is set';

/** updateMigrationAnnotations for a claim: the migrated-to value its provisioner calls for, if it differs. */
export function claimMigrationChange(claim: ClaimView): { migratedTo: string | null } | undefined {
  const provisioner = claim.annotations[ANN_STORAGE_PROVISIONER] ?? claim.annotations[ANN_BETA_STORAGE_PROVISIONER];
  if (provisioner === undefined) return undefined;
  const driver = migratedDriver(provisioner);
  const current = claim.annotations[ANN_MIGRATED_TO];
  if (driver) return current === driver ? undefined : { migratedTo: driver };
  return current ? { migratedTo: null } : undefined;
}

/** The claim's WaitForFirstConsumer or WaitForPodScheduled Event. */
export function delayBindingEvent(pods: readonly string[]): BinderEvent {
  if (pods.length === 0) return { type: 'Normal', reason: 'WaitForFirstConsumer', message: 'waiting for first consumer to be created before binding' };
  const message = pods.length > 1 ? `waiting for pods ${pods.join(',')} to be scheduled` : `waiting for pod ${pods[0]} to be scheduled`;
  return { type: 'Normal', reason: 'WaitForPodScheduled', message };
}

function isDelayBinding(o: ClaimObservation): boolean {
  return o.cls?.volumeBindingMode === 'WaitForFirstConsumer';
}

function provisionPlan(o: ClaimObservation, flags: ProvisionerFlags): ClaimPlan {
  if (!flags.dynamicProvisioning) return { kind: 'none', events: [], why: 'dynamic provisioning is disabled' };
  const className = claimClass(o.claim);
  const route = provisioningRoute(className, o.cls);
  if (route.kind === 'failed') {
    return { kind: 'none', events: [{ type: 'Warning', reason: 'ProvisioningFailed', message: route.message }], why: route.message };
  }
  if (route.kind === 'external') return { kind: 'external-provisioning', provisioner: route.provisioner };
  const cls = o.cls!;
  const refusal = hostPathProvisionRefusal(o.claim, cls, flags.hostPathProvisioner);
  if (refusal) {
    return {
      kind: 'provisioning-failed',
      ...(refusal.beforeAnnotating ? {} : { annotate: cls.provisioner }),
      rescheduleNode: !!refusal.reschedule && ANN_SELECTED_NODE in o.claim.annotations,
      event: { type: 'Warning', reason: 'ProvisioningFailed', message: refusal.message },
    };
  }
  return { kind: 'host-path-provisioning', cls, volumeName: `pvc-${o.claim.uid}` };
}

function syncUnbound(o: ClaimObservation, flags: ProvisionerFlags): ClaimPlan {
  const c = o.claim;
  if (c.volumeName === '') {
    if (o.bindingModeError) return { kind: 'error', events: [], error: o.bindingModeError };
    if (o.match) return { kind: 'bind', volume: o.match, why: `volume ${o.match.name} is the best match for the claim` };
    if (!claimHasClass(c) && o.defaultClass) return { kind: 'assign-default-class', className: o.defaultClass };
    if (isDelayBinding(o) && !(ANN_SELECTED_NODE in c.annotations)) {
      return { kind: 'pending', events: [delayBindingEvent(o.nonScheduledPods)], why: 'binding waits for the first consumer to be scheduled' };
    }
    if (claimClass(c) !== '') return provisionPlan(o, flags);
    return { kind: 'pending', events: [{ type: 'Normal', reason: 'FailedBinding', message: FAILED_BINDING_NO_CLASS }], why: 'no volume matches and the claim has no class' };
  }
  const v = o.named;
  if (!v) return { kind: 'pending', events: [], why: `the requested volume ${c.volumeName} does not exist` };
  if (!v.claimRef) {
    const unsatisfied = volumeUnsatisfiedReason(v, c);
    if (unsatisfied) {
      return {
        kind: 'pending',
        events: [{ type: 'Warning', reason: 'VolumeMismatch', message: `Cannot bind to requested volume "${v.name}": ${unsatisfied}` }],
        why: `the requested volume cannot be bound: ${unsatisfied}`,
      };
    }
    return { kind: 'bind', volume: v, why: `the claim requested volume ${v.name}, which is unbound` };
  }
  if (isVolumeBoundToClaim(v, c)) return { kind: 'bind', volume: v, why: `volume ${v.name} is already bound to the claim: finishing the binding` };
  const event: BinderEvent = { type: 'Warning', reason: 'FailedBinding', message: `volume "${v.name}" already bound to a different claim.` };
  if (!(ANN_BOUND_BY_CONTROLLER in c.annotations)) return { kind: 'pending', events: [event], why: 'the requested volume is bound to another claim' };
  return {
    kind: 'error',
    events: [event],
    error: `invalid binding of claim "${c.namespace}/${c.name}" to volume "${c.volumeName}": volume already claimed by "${v.claimRef.namespace}/${v.claimRef.name}"`,
  };
}

function syncBound(o: ClaimObservation): ClaimPlan {
  const c = o.claim;
  if (c.volumeName === '') {
    return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!' }, why: 'the bound claim lost its volume name' };
  }
  const v = o.named;
  if (!v) {
    return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimLost', message: 'Bound claim has lost its PersistentVolume. Data on the volume is lost!' }, why: `volume ${c.volumeName} is gone` };
  }
  if (!v.claimRef || v.claimRef.uid === c.uid) return { kind: 'bind', volume: v, why: v.claimRef ? 'the claim is bound: checking both sides' : 'the volume came unbound: binding it again' };
  return { kind: 'lost', event: { type: 'Warning', reason: 'ClaimMisbound', message: 'Two claims are bound to the same volume, this one is bound incorrectly' }, why: 'the volume is bound to another claim' };
}

/** Upstream's syncClaim, after its migration-annotation step. */
export function planClaimSync(o: ClaimObservation, flags: ProvisionerFlags): ClaimPlan {
  const migration = claimMigrationChange(o.claim);
  if (migration) return { kind: 'migration-annotation', ...migration };
  return ANN_BIND_COMPLETED in o.claim.annotations ? syncBound(o) : syncUnbound(o, flags);
}

/** A claim bound and settled: the phase is Bound and the volume is bound to it. */
export function claimSettled(o: ClaimObservation): boolean {
  const c = o.claim;
  return c.phase === 'Bound' && ANN_BIND_COMPLETED in c.annotations && !!o.named && o.named.claimRef?.uid === c.uid && o.named.phase === 'Bound';
}

