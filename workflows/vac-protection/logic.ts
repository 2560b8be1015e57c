/**
 * Upstream's VolumeAttributesClass protection rules (pkg/controller/volume/vacprotection): a class
 * is in use while a claim or a volume in the informers names it, and only the informers are asked
 * (upstream documents the race this leaves: a claim created just as its class is deleted).
 */
import { protectionNeed, type ProtectedObject } from '../common/storage-protection';

export const CONTROLLER = 'vac-protection';

/** A VolumeAttributesClass as the controller reads it. */
export type VacView = ProtectedObject;

/** The classes of a claim as upstream's getPVCReferencedVACNames reads them. */
export interface PvcVacFields {
  spec?: { volumeAttributesClassName?: string | null };
  status?: {
    currentVolumeAttributesClassName?: string | null;
    modifyVolumeStatus?: { targetVolumeAttributesClassName?: string | null } | null;
  };
}

/** The class of a volume as getPVReferencedVACNames reads it. */
export interface PvVacFields {
  spec?: { volumeAttributesClassName?: string | null };
}

/** The classes a claim names: the one asked for, the one it has, and the one a modification is heading to. */
export function pvcClassNames(pvc: PvcVacFields): string[] {
  const names = [pvc.spec?.volumeAttributesClassName, pvc.status?.currentVolumeAttributesClassName, pvc.status?.modifyVolumeStatus?.targetVolumeAttributesClassName];
  return [...new Set(names.filter((n): n is string => !!n))];
}

export function pvClassNames(pv: PvVacFields): string[] {
  const n = pv.spec?.volumeAttributesClassName;
  return n ? [n] : [];
}

/** The classes named before a change and no longer after it: only those may have been freed (upstream's update handlers). */
export function classesLetGo(before: readonly string[], after: readonly string[]): string[] {
  const still = new Set(after);
  return [...new Set(before)].filter((n) => !still.has(n));
}

/**
 * Whether the watch should start a workflow: a finalizer to add, or a deletion candidate no claim
 * or volume uses (upstream's sync would keep a used one without a write).
 */
export function vacWriteDue(vac: VacView, inUse: boolean): boolean {
  const need = protectionNeed(vac);
  return need === 'add' || (need === 'check-use' && !inUse);
}
