/**
 * What the three storage-object protection controllers (PVC, PV, VolumeAttributesClass) share:
 * upstream's protectionutil rules on one finalizer, and the two-step decision each of them makes
 * per object: add the finalizer to an object that is not being deleted, or, for an object being
 * deleted that still has it, remove it once nothing uses the object.
 */

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
export const VAC_PROTECTION_FINALIZER = 'kubernetes.io/vac-protection';

/** The slice of a protected object the decision reads. */
export interface ProtectedObject {
  /** '' for a cluster-scoped object */
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** a deletionTimestamp is set */
  deleting: boolean;
  /** its finalizers include the controller's protection finalizer */
  protected: boolean;
}

/** protectionutil.IsDeletionCandidate: being deleted and still held by the finalizer. */
export function isDeletionCandidate(o: ProtectedObject): boolean {
  return o.deleting && o.protected;
}

/** protectionutil.NeedToAddFinalizer: not being deleted and not yet held by the finalizer. */
export function needToAddFinalizer(o: ProtectedObject): boolean {
  return !o.deleting && !o.protected;
}

/**
 * What the object needs before anything is known about its use: `check-use` for a deletion
 * candidate (the finalizer goes if nothing uses it), `add` for an object without the finalizer,
 * `none` otherwise. Upstream's process functions look at the deletion first and then at the add;
 * the two never both hold, since one needs a deletionTimestamp and the other none.
 */
export type ProtectionNeed = 'check-use' | 'add' | 'none';

export function protectionNeed(o: ProtectedObject): ProtectionNeed {
  if (isDeletionCandidate(o)) return 'check-use';
  if (needToAddFinalizer(o)) return 'add';
  return 'none';
}

/** The write a decision comes to. */
export type ProtectionAction = 'add' | 'remove' | 'keep' | 'none';

/** The whole decision once `inUse` is known (it is asked only of a deletion candidate). */
export function protectionAction(o: ProtectedObject, inUse: () => boolean): ProtectionAction {
  const need = protectionNeed(o);
  if (need === 'add') return 'add';
  if (need === 'none') return 'none';
  return inUse() ? 'keep' : 'remove';
}

/** Finalizers with `finalizer` added at the end or every copy of it removed, as upstream edits the list. */
export function withFinalizer(finalizers: readonly string[] | undefined, finalizer: string, present: boolean): string[] {
  const list = [...(finalizers ?? [])];
  if (present) return list.includes(finalizer) ? list : [...list, finalizer];
  return list.filter((f) => f !== finalizer);
}

/** The later of two views of one object wins: each is the whole object as the watch saw it. */
export function laterView<T>(_earlier: T, later: T): T {
  return later;
}
