/**
 * The claims a pod's volumes name, as component-helpers/storage/ephemeral and upstream's pod-PVC
 * index see them: a persistentVolumeClaim source names its claim; a generic ephemeral volume's
 * claim is named after the pod and the volume, and is the pod's only if the pod controls it.
 */

/** One volume of a pod as these rules read it (the JSON of a core/v1 Volume, cut down). */
export interface PodVolumeSource {
  name: string;
  persistentVolumeClaim?: { claimName?: string } | null;
  /** present for a generic ephemeral volume; its content does not matter here */
  ephemeral?: object | null;
}

/** A volume of a pod that names a claim. */
export interface PodClaimRef {
  volume: string;
  claim: string;
  /** a generic ephemeral volume: the claim counts only if the pod controls it */
  ephemeral: boolean;
}

/** ephemeral.VolumeClaimName: `<pod>-<volume>`, which never fails and needs nothing else. */
export function ephemeralClaimName(podName: string, volumeName: string): string {
  return `${podName}-${volumeName}`;
}

/**
 * The claims the pod's volumes name, in volume order. A volume with a persistentVolumeClaim source
 * is taken as such even if it (wrongly) has an ephemeral source too, as upstream's index does;
 * an empty claim name is no claim.
 */
export function podClaimRefs(podName: string, volumes: readonly PodVolumeSource[] | undefined | null): PodClaimRef[] {
  const out: PodClaimRef[] = [];
  for (const v of volumes ?? []) {
    if (v.persistentVolumeClaim) {
      const claim = v.persistentVolumeClaim.claimName ?? '';
      if (claim) out.push({ volume: v.name, claim, ephemeral: false });
    } else if (v.ephemeral) {
      out.push({ volume: v.name, claim: ephemeralClaimName(podName, v.name), ephemeral: true });
    }
  }
  return out;
}

/** A claim as the ownership check reads it. */
export interface ClaimOwnership {
  namespace: string;
  /** the UID of its controller owner reference, if it has one */
  controllerUid?: string;
}

/** ephemeral.VolumeIsForPod without the error: same namespace and controlled by the pod. */
export function claimIsForPod(podNamespace: string, podUid: string, claim: ClaimOwnership): boolean {
  return claim.namespace === podNamespace && claim.controllerUid !== undefined && claim.controllerUid === podUid;
}

/** ephemeral.VolumeIsForPod's error text, which upstream puts in its Event as is. */
export function notCreatedForPodMessage(claimNamespace: string, claimName: string, podNamespace: string, podName: string): string {
  return `PVC ${claimNamespace}/${claimName} was not created for pod ${podNamespace}/${podName} (pod is not owner)`;
}
