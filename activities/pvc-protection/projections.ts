import { controllerRef } from '../../workflows/common/controller-ref';
import { podClaimRefs, type PodVolumeSource } from '../../workflows/common/ephemeral-claims';
import { PVC_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import type { PvcPodView, PvcView } from '../../workflows/pvc-protection/logic';
import type { FieldMask } from '../informers/fields';
import type { StoreIndex } from '../informers/store';
import type { KubeObject } from '../kube/projections';

/** What pvcView reads of a claim: its metadata (finalizers, deletion, controller owner). */
export const PVC_PROTECTION_FIELDS: FieldMask = { metadata: true };

export function pvcView(o: KubeObject): PvcView {
  const m = o.metadata ?? {};
  const ref = controllerRef(m.ownerReferences);
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    deleting: !!m.deletionTimestamp,
    protected: (m.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER),
    ...(ref ? { controllerUid: ref.uid } : {}),
  };
}

/**
 * What the pod index and pvcPodView read of a pod: its volumes' claims (an ephemeral volume's
 * template is not needed, only that it is one), node, phase, and whether any container still runs.
 */
export const CLAIM_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, volumes: { name: true, persistentVolumeClaim: { claimName: true }, ephemeral: {} } },
  status: {
    phase: true,
    initContainerStatuses: { state: { waiting: {}, terminated: {} } },
    containerStatuses: { state: { waiting: {}, terminated: {} } },
    ephemeralContainerStatuses: { state: { waiting: {}, terminated: {} } },
  },
};

type ContainerStatus = { state?: { waiting?: object | null; terminated?: object | null } | null };
type PodObject = KubeObject & {
  metadata?: KubeObject['metadata'] & { deletionGracePeriodSeconds?: number | null };
  spec?: { nodeName?: string; volumes?: PodVolumeSource[] | null };
  status?: {
    phase?: string;
    initContainerStatuses?: ContainerStatus[] | null;
    containerStatuses?: ContainerStatus[] | null;
    ephemeralContainerStatuses?: ContainerStatus[] | null;
  };
};

/** volumeutil's notRunning: every container waiting or terminated (none at all counts too). */
const notRunning = (statuses: ContainerStatus[] | null | undefined) => (statuses ?? []).every((s) => !!s.state?.terminated || !!s.state?.waiting);

export function pvcPodView(o: KubeObject): PvcPodView {
  const p = o as PodObject;
  const m = p.metadata ?? {};
  const st = p.status ?? {};
  const deleting = !!m.deletionTimestamp;
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    nodeName: p.spec?.nodeName ?? '',
    shutDown: deleting && m.deletionGracePeriodSeconds === 0,
    terminated: st.phase === 'Failed' || st.phase === 'Succeeded'
      || (deleting && notRunning(st.initContainerStatuses) && notRunning(st.containerStatuses) && notRunning(st.ephemeralContainerStatuses)),
    claims: podClaimRefs(m.name ?? '', p.spec?.volumes),
  };
}

/**
 * Pods by `<namespace>/<claim>` for every claim their volumes name, ephemeral ones included
 * (upstream's pod-pvc-index). The PVC protection and ephemeral volume routes share it.
 */
export const PODS_BY_CLAIM: StoreIndex = {
  name: 'pod-pvc',
  keys: (o) => {
    const p = o as PodObject;
    const ns = p.metadata?.namespace ?? '';
    return [...new Set(podClaimRefs(p.metadata?.name ?? '', p.spec?.volumes).map((c) => `${ns}/${c.claim}`))];
  },
};
