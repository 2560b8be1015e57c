/**
 * Upstream's PV protection rule (pkg/controller/volume/pvprotection): a volume is in use exactly
 * while its status says Bound, which the binder writes; nothing else (a claimRef, a pod) counts.
 */
import { protectionNeed, type ProtectedObject } from '../common/storage-protection';

export const CONTROLLER = 'pv-protection';

/** A PersistentVolume as the controller reads it. */
export interface PvView extends ProtectedObject {
  /** status.phase ('' when unset) */
  phase: string;
}

/** isBeingUsed: Bound by its status, whatever its claimRef says. */
export function pvInUse(pv: PvView): boolean {
  return pv.phase === 'Bound';
}

/**
 * Whether the watch should start a workflow: a finalizer to add, or a deletion candidate that is
 * not in use. A candidate still Bound would be kept by upstream's sync without a write, so it
 * waits for the status change that frees it.
 */
export function pvWriteDue(pv: PvView): boolean {
  const need = protectionNeed(pv);
  return need === 'add' || (need === 'check-use' && !pvInUse(pv));
}
