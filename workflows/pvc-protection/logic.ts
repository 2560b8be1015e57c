/**
 * Upstream's PVC protection rules (pkg/controller/volume/pvcprotection): when a pod counts as
 * using a claim, and which claims a pod event must have looked at again.
 */
import type { PodClaimRef } from '../common/ephemeral-claims';
import { claimIsForPod } from '../common/ephemeral-claims';
import type { ProtectedObject } from '../common/storage-protection';

export const CONTROLLER = 'pvc-protection';

/** A PersistentVolumeClaim as the controller reads it. */
export interface PvcView extends ProtectedObject {
  /** the UID of its controller owner: an ephemeral volume's claim is its pod's only if the pod controls it */
  controllerUid?: string;
}

/** A pod as the use check reads it: where it runs, whether it is done, and the claims it names. */
export interface PvcPodView {
  namespace: string;
  name: string;
  uid: string;
  /** spec.nodeName; empty while the pod is not scheduled */
  nodeName: string;
  /**
   * upstream's podIsShutDown: deleted with a zero grace period (the kubelet is done with it, or it
   * was force-deleted), so its ephemeral claim may go even though the pod object is still there
   */
  shutDown: boolean;
  /** volumeutil.IsPodTerminated: Succeeded or Failed, or being deleted with no container running */
  terminated: boolean;
  claims: PodClaimRef[];
}

/**
 * podUsesPVC: only a scheduled pod counts (the kubelet never starts a pod on a claim being
 * deleted). A persistentVolumeClaim volume naming the claim counts whatever the pod's phase, so a
 * finished pod that still exists keeps its claim, as upstream does; an ephemeral volume's claim
 * counts while the pod is not shut down and controls the claim.
 */
export function podUsesPvc(pod: PvcPodView, pvc: PvcView): boolean {
  if (!pod.nodeName || pod.namespace !== pvc.namespace) return false;
  return pod.claims.some((c) => c.claim === pvc.name
    && (!c.ephemeral || (!pod.shutDown && claimIsForPod(pod.namespace, pod.uid, { namespace: pvc.namespace, controllerUid: pvc.controllerUid }))));
}

/** The first pod (by name) that uses the claim, if any. */
export function podUsingPvc(pods: readonly PvcPodView[], pvc: PvcView): PvcPodView | undefined {
  return [...pods].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).find((p) => podUsesPvc(p, pvc));
}

/**
 * enqueuePVCs: the claims a pod event must have looked at again. A pod that is running on a node
 * and not terminated cannot free a claim, so its events are dropped; a deleted, terminated or
 * unscheduled pod may have just let go of each claim it names.
 */
export function claimsFreedBy(pod: PvcPodView, deleted: boolean): string[] {
  if (!deleted && !pod.terminated && pod.nodeName !== '') return [];
  return [...new Set(pod.claims.map((c) => c.claim))];
}
