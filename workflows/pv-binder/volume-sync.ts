import { volumeModeMismatch } from './match';
import { deleterRoute, hasRecycler, migratedDriver } from './plugins';
import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_MIGRATED_TO,
  FINALIZER_EXTERNAL_DELETION,
  FINALIZER_IN_TREE_DELETION,
  type BinderEvent,
  type ClaimView,
  type VolumePhase,
  type VolumeView,
} from './types';

/*
 * What to do with a volume, as upstream's syncVolume decides it. Pure: the activity found the
 * claim the volume points at (informer first, then the API, as upstream double-checks before it
 * releases anything). Each plan is one write; the workflow observes again after it.
 */

export interface VolumeObservation {
  volume: VolumeView;
  /** the claim named by claimRef, if it exists with the claimRef's UID */
  claim?: ClaimView;
}

export type VolumePlan =
  | { kind: 'none'; why: string; settled: boolean }
  /** migration annotation and deletion finalizers, as upstream anneals them first */
  | { kind: 'anneal'; finalizers: string[]; migratedTo?: string | null; why: string }
  /** updateVolumePhase, or updateVolumePhaseWithEvent when `event` is set (the event only on a change) */
  | { kind: 'phase'; phase: VolumePhase; message: string; event?: BinderEvent; why: string }
  /** the claim is pending on this volume with another volume mode: tell both */
  | { kind: 'mismatch'; volumeEvent: BinderEvent; claimEvent: BinderEvent; why: string }
  /** unbindVolume: drop the claimRef (bound by the controller) or only its UID (pre-bound by a user), then Available */
  | { kind: 'unbind'; why: string }
  /** the host-path deleter: remove the directory, then the volume */
  | { kind: 'delete'; path: string; why: string }
  /** a recycler pod empties the volume, which is then Available again */
  | { kind: 'recycle'; why: string };

/** upstream's modifyDeletionFinalizers and updateMigrationAnnotations for a volume; undefined when nothing changes */
export function volumeAnneal(v: VolumeView): { finalizers: string[]; migratedTo?: string | null } | undefined {
  let finalizers = [...v.finalizers];
  let changed = false;
  let migratedTo: string | null | undefined;
  const provisioner = v.annotations[ANN_DYNAMICALLY_PROVISIONED];
  if (provisioner !== undefined) {
    const driver = migratedDriver(provisioner);
    const current = v.annotations[ANN_MIGRATED_TO];
    if (driver && current !== driver) migratedTo = driver;
    else if (!driver && current) migratedTo = null;
    const drop = (f: string) => {
      if (finalizers.includes(f)) {
        finalizers = finalizers.filter((x) => x !== f);
        changed = true;
      }
    };
    if (driver) drop(FINALIZER_IN_TREE_DELETION);
    else if (provisioner.startsWith('kubernetes.io/')) {
      if (v.reclaimPolicy === 'Delete' && !finalizers.includes(FINALIZER_IN_TREE_DELETION)) {
        finalizers.push(FINALIZER_IN_TREE_DELETION);
        changed = true;
      } else if (v.reclaimPolicy === 'Retain' || v.reclaimPolicy === 'Recycle') drop(FINALIZER_IN_TREE_DELETION);
      drop(FINALIZER_EXTERNAL_DELETION);
    }
  }
  if (!changed && migratedTo === undefined) return undefined;
  return { finalizers, ...(migratedTo !== undefined ? { migratedTo } : {}) };
}

function phase(v: VolumeView, p: VolumePhase, why: string, event?: BinderEvent, message = ''): VolumePlan {
  if (v.phase === p) return { kind: 'none', why: `${why}; already ${p}`, settled: true };
  return { kind: 'phase', phase: p, message: event ? event.message : message, ...(event ? { event } : {}), why };
}

/** upstream's reclaimVolume, on a volume already Released (or Failed) */
export function reclaimPlan(v: VolumeView): VolumePlan {
  if (ANN_MIGRATED_TO in v.annotations) return { kind: 'none', why: 'the volume migrated to CSI: its driver reclaims it', settled: true };
  switch (v.reclaimPolicy) {
    case 'Retain':
      return { kind: 'none', why: 'the reclaim policy is Retain', settled: true };
    case 'Recycle':
      if (hasRecycler(v)) return { kind: 'recycle', why: 'the claim is gone and the reclaim policy is Recycle' };
      return phase(v, 'Failed', 'no recycler', { type: 'Warning', reason: 'VolumeFailedRecycle', message: 'No recycler plugin found for the volume!' });
    case 'Delete': {
      const d = deleterRoute(v);
      if (d.kind === 'external') return { kind: 'none', why: 'an external deleter removes the volume', settled: true };
      if (d.kind === 'failed') return phase(v, 'Failed', 'the volume cannot be deleted', { type: 'Warning', reason: 'VolumeFailedDelete', message: d.message });
      return { kind: 'delete', path: d.path, why: 'the claim is gone and the reclaim policy is Delete' };
    }
    default:
      return phase(v, 'Failed', 'unknown reclaim policy', { type: 'Warning', reason: 'VolumeUnknownReclaimPolicy', message: 'Volume has unrecognized PersistentVolumeReclaimPolicy' });
  }
}

/** Upstream's syncVolume. */
export function planVolumeSync(o: VolumeObservation): VolumePlan {
  const v = o.volume;
  const anneal = volumeAnneal(v);
  if (anneal) return { kind: 'anneal', ...anneal, why: 'deletion finalizers or the migration annotation are out of date' };
  if (!v.claimRef) return phase(v, 'Available', 'the volume is unused');
  if (v.claimRef.uid === '') return phase(v, 'Available', `the volume is pre-bound to claim ${v.claimRef.namespace}/${v.claimRef.name}`);
  const c = o.claim;
  const released = () => v.phase !== 'Released' && v.phase !== 'Failed';
  if (!c) {
    if (released()) return phase(v, 'Released', `claim ${v.claimRef.namespace}/${v.claimRef.name} is gone`);
    return reclaimPlan(v);
  }
  if (c.volumeName === '') {
    if (volumeModeMismatch(c, v)) {
      return {
        kind: 'mismatch',
        volumeEvent: { type: 'Warning', reason: 'VolumeMismatch', message: `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${c.name}" due to incompatible volumeMode.` },
        claimEvent: { type: 'Warning', reason: 'VolumeMismatch', message: `Cannot bind PersistentVolume "${v.name}" to requested PersistentVolumeClaim due to incompatible volumeMode.` },
        why: 'the claim this volume is bound to wants another volume mode',
      };
    }
    // the claim's sync finishes the binding; the watch has nudged it
    return { kind: 'none', why: 'the claim has not taken the volume yet', settled: false };
  }
  if (c.volumeName === v.name) return phase(v, 'Bound', 'the volume and its claim are bound');
  if (ANN_DYNAMICALLY_PROVISIONED in v.annotations && v.reclaimPolicy === 'Delete') {
    if (released()) return phase(v, 'Released', 'provisioned for a claim that got bound to another volume');
    return reclaimPlan(v);
  }
  return {
    kind: 'unbind',
    why: ANN_BOUND_BY_CONTROLLER in v.annotations
      ? 'bound by the controller to a claim that is bound to another volume'
      : 'pre-bound by a user to a claim that is bound to another volume: keeping the name, dropping the UID',
  };
}
