import { compareQuantities, parseQuantity, type Quantity } from '../common/quantity';
import { selectorMatches } from '../common/selector';
import { ANN_BETA_STORAGE_CLASS, type ClaimView, type VolumeView } from './types';

/*
 * Which volume a claim gets, as upstream's PV controller picks it (its access-mode index and the
 * storage helpers' FindMatchingVolume): a volume pre-bound to the claim wins; otherwise the
 * smallest Available volume of the claim's class, size, volume mode, attributes class and
 * selector, looked for first among volumes whose access modes are the fewest that cover the
 * claim's.
 */

/** The order upstream spells a mode set in, which is also its index key. */
const MODE_ORDER = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

export function accessModesKey(modes: readonly string[]): string {
  return MODE_ORDER.filter((m) => modes.includes(m)).join(',');
}

/** The claim's class: the beta annotation first, then spec.storageClassName; '' for none. */
export function claimClass(c: Pick<ClaimView, 'annotations' | 'storageClassName'>): string {
  if (ANN_BETA_STORAGE_CLASS in c.annotations) return c.annotations[ANN_BETA_STORAGE_CLASS];
  return c.storageClassName ?? '';
}

/** Whether the claim asked for a class at all (an empty class is a request for none). */
export function claimHasClass(c: Pick<ClaimView, 'annotations' | 'storageClassName'>): boolean {
  return ANN_BETA_STORAGE_CLASS in c.annotations || c.storageClassName !== undefined;
}

export function volumeClass(v: Pick<VolumeView, 'annotations' | 'storageClassName'>): string {
  if (ANN_BETA_STORAGE_CLASS in v.annotations) return v.annotations[ANN_BETA_STORAGE_CLASS];
  return v.storageClassName;
}

/** Pre-bound or bound to this claim: same name and namespace, and the same UID if the volume names one. */
export function isVolumeBoundToClaim(v: Pick<VolumeView, 'claimRef'>, c: Pick<ClaimView, 'namespace' | 'name' | 'uid'>): boolean {
  const r = v.claimRef;
  if (!r || r.name !== c.name || r.namespace !== c.namespace) return false;
  return r.uid === '' || r.uid === c.uid;
}

/** A missing volumeMode is Filesystem on both sides. */
export function volumeModeMismatch(c: Pick<ClaimView, 'volumeMode'>, v: Pick<VolumeView, 'volumeMode'>): boolean {
  return (c.volumeMode ?? 'Filesystem') !== (v.volumeMode ?? 'Filesystem');
}

export function accessModesCover(volumeModes: readonly string[], claimModes: readonly string[]): boolean {
  return claimModes.every((m) => volumeModes.includes(m));
}

const ZERO = parseQuantity('0');
/** An absent or unreadable size counts as zero, as a missing entry of a Go ResourceList does. */
function qty(s: string | undefined): Quantity {
  if (!s) return ZERO;
  try {
    return parseQuantity(s);
  } catch {
    return ZERO;
  }
}

/** FindMatchingVolume on one mode set's volumes, in the PV controller's path (no node). */
function findInSet(claim: ClaimView, volumes: readonly VolumeView[], delayBinding: boolean): VolumeView | undefined {
  const requested = qty(claim.request);
  const wantClass = claimClass(claim);
  let smallest: VolumeView | undefined;
  let smallestQty: Quantity | undefined;
  for (const v of volumes) {
    if (v.claimRef && !isVolumeBoundToClaim(v, claim)) continue;
    const size = qty(v.capacity);
    if (compareQuantities(size, requested) < 0) continue;
    if (volumeModeMismatch(claim, v)) continue;
    if ((claim.volumeAttributesClassName ?? '') !== (v.volumeAttributesClassName ?? '')) continue;
    if (v.deleting) continue;
    if (isVolumeBoundToClaim(v, claim)) return v;
    // delayed binding leaves unbound volumes to the scheduler
    if (delayBinding) continue;
    if (v.phase !== 'Available') continue;
    if (claim.selector && !selectorMatches(claim.selector, v.labels)) continue;
    if (volumeClass(v) !== wantClass) continue;
    if (!smallestQty || compareQuantities(smallestQty, size) > 0) {
      smallest = v;
      smallestQty = size;
    }
  }
  return smallest;
}

/**
 * The volume for a claim without spec.volumeName, or undefined. Volumes are grouped by their
 * exact mode set; sets that cover the claim's modes are tried fewest modes first. Upstream's
 * order among equal candidates is its cache's (random); here it is by name, so ties are stable.
 */
export function findBestMatch(claim: ClaimView, volumes: readonly VolumeView[], delayBinding: boolean): VolumeView | undefined {
  const sets = new Map<string, VolumeView[]>();
  for (const v of [...volumes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const key = accessModesKey(v.accessModes);
    const list = sets.get(key);
    if (list) list.push(v);
    else sets.set(key, [v]);
  }
  const covering = [...sets.keys()]
    .map((key) => ({ key, modes: key === '' ? [] : key.split(',') }))
    .filter((s) => accessModesCover(s.modes, claim.accessModes))
    .sort((a, b) => a.modes.length - b.modes.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const s of covering) {
    const found = findInSet(claim, sets.get(s.key)!, delayBinding);
    if (found) return found;
  }
  return undefined;
}

/** Upstream's checkVolumeSatisfyClaim: why a volume the claim names cannot be bound to it, or undefined. */
export function volumeUnsatisfiedReason(v: VolumeView, claim: ClaimView): string | undefined {
  if (v.deleting) return `the volume is marked for deletion "${v.name}"`;
  if (compareQuantities(qty(v.capacity), qty(claim.request)) < 0) return 'requested PV is too small';
  if (volumeClass(v) !== claimClass(claim)) return 'storageClassName does not match';
  if ((claim.volumeAttributesClassName ?? '') !== (v.volumeAttributesClassName ?? '')) return 'volumeAttributesClassName does not match';
  if (volumeModeMismatch(claim, v)) return 'incompatible volumeMode';
  if (!accessModesCover(v.accessModes, claim.accessModes)) return 'incompatible accessMode';
  return undefined;
}
