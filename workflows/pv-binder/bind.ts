import type { V1ObjectReference } from '@kubernetes/client-node';
import type { PersistentVolumeClaimJson, PersistentVolumeJson } from './types';
import { compareQuantities, parseQuantity } from '../common/quantity';
import { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PRE_RESIZE_CAPACITY, type ClaimPhase } from './types';

/*
 * The edits of upstream's bind(), unbindVolume() and updateClaimStatus(), on whole objects as the
 * writes put them back. Each returns false when the object already is as it should be, so a
 * retried bind writes only what is still missing.
 */

/** A claim reference as client-go's GetReference makes it from a claim read from the API. */
export function claimReference(claim: PersistentVolumeClaimJson): V1ObjectReference {
  const m = claim.metadata ?? {};
  return { kind: 'PersistentVolumeClaim', namespace: m.namespace, name: m.name, uid: m.uid, apiVersion: 'v1', resourceVersion: m.resourceVersion };
}

function refBindsClaim(ref: V1ObjectReference | undefined, claim: PersistentVolumeClaimJson): boolean {
  const m = claim.metadata ?? {};
  return !!ref && ref.name === m.name && ref.namespace === m.namespace && (!ref.uid || ref.uid === m.uid);
}

/** GetBindVolumeToClaim: point the volume at the claim, marking a binding the controller made. */
export function bindVolumeToClaim(volume: PersistentVolumeJson, claim: PersistentVolumeClaimJson): boolean {
  const m = claim.metadata ?? {};
  const ref = volume.spec?.claimRef;
  const byController = !refBindsClaim(ref, claim);
  let dirty = false;
  if (!ref || ref.name !== m.name || ref.namespace !== m.namespace || ref.uid !== m.uid) {
    volume.spec = { ...volume.spec, claimRef: claimReference(claim) };
    dirty = true;
  }
  if (byController && !(ANN_BOUND_BY_CONTROLLER in (volume.metadata?.annotations ?? {}))) {
    volume.metadata = { ...volume.metadata, annotations: { ...volume.metadata?.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' } };
    dirty = true;
  }
  return dirty;
}

/** bindClaimToVolume: the claim names the volume and carries the bind-completed annotation. */
export function bindClaimToVolume(claim: PersistentVolumeClaimJson, volumeName: string): boolean {
  let dirty = false;
  const annotations = { ...claim.metadata?.annotations };
  if (claim.spec?.volumeName !== volumeName) {
    claim.spec = { ...claim.spec, volumeName };
    if (!(ANN_BOUND_BY_CONTROLLER in annotations)) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
    dirty = true;
  }
  if (!(ANN_BIND_COMPLETED in annotations)) {
    annotations[ANN_BIND_COMPLETED] = 'yes';
    dirty = true;
  }
  if (dirty) claim.metadata = { ...claim.metadata, annotations };
  return dirty;
}

function sameModes(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  // upstream compares with reflect.DeepEqual: nil and empty differ, order counts
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * updateClaimStatus: the phase, and with a volume its access modes, its capacity (only as the
 * claim becomes Bound, or the pre-resize capacity) and its attributes class (only from Pending
 * to Bound); without one, those fields cleared. Throws as upstream fails for a volume without a
 * storage capacity.
 */
export function setClaimStatus(claim: PersistentVolumeClaimJson, phase: ClaimPhase, volume?: PersistentVolumeJson): boolean {
  const before = claim.status ?? {};
  const status = { ...before };
  let dirty = false;
  if (before.phase !== phase) {
    status.phase = phase;
    dirty = true;
  }
  if (!volume) {
    for (const k of ['accessModes', 'capacity', 'currentVolumeAttributesClassName'] as const) {
      if (status[k] !== undefined && status[k] !== null) {
        delete status[k];
        dirty = true;
      }
    }
  } else {
    const modes = volume.spec?.accessModes;
    if (!sameModes(before.accessModes, modes)) {
      if (modes === undefined) delete status.accessModes;
      else status.accessModes = modes;
      dirty = true;
    }
    if (before.phase !== phase) {
      const volumeCap = volume.spec?.capacity?.storage;
      if (volumeCap === undefined) throw new Error(`PersistentVolume "${volume.metadata?.name}" is without a storage capacity`);
      const pre = volume.metadata?.annotations?.[ANN_PRE_RESIZE_CAPACITY];
      if (pre !== undefined) {
        let preQty = pre;
        try {
          parseQuantity(pre);
        } catch {
          preQty = volumeCap;
        }
        status.capacity = { ...status.capacity, storage: preQty };
        dirty = true;
      } else {
        const claimCap = before.capacity?.storage;
        if (claimCap === undefined || compareQuantities(parseQuantity(volumeCap), parseQuantity(claimCap)) !== 0) {
          status.capacity = { ...volume.spec?.capacity };
          dirty = true;
        }
      }
    }
    const vac = volume.spec?.volumeAttributesClassName;
    if (before.phase === 'Pending' && phase === 'Bound' && (before.currentVolumeAttributesClassName ?? undefined) !== (vac ?? undefined)) {
      if (vac === undefined) delete status.currentVolumeAttributesClassName;
      else status.currentVolumeAttributesClassName = vac;
      dirty = true;
    }
  }
  if (dirty) claim.status = status;
  return dirty;
}

/** unbindVolume's edit: a controller's binding goes whole, a user's pre-binding keeps the name. */
export function unbindVolume(volume: PersistentVolumeJson): void {
  const annotations = { ...volume.metadata?.annotations };
  if (ANN_BOUND_BY_CONTROLLER in annotations) {
    const { claimRef: _dropped, ...spec } = volume.spec ?? {};
    volume.spec = spec;
    delete annotations[ANN_BOUND_BY_CONTROLLER];
    volume.metadata = { ...volume.metadata, annotations: Object.keys(annotations).length ? annotations : undefined };
  } else if (volume.spec?.claimRef) {
    volume.spec = { ...volume.spec, claimRef: { ...volume.spec.claimRef, uid: '' } };
  }
}
