import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { CONTROLLER_REVISION_FIELDS, controllerRevisionView, revisionedWorkloadMeta } from '../kube/controller-revisions';
import { controllerRef } from '../../workflows/common/controller-ref';
import type { LabelSelector, OwnerRef, PodTemplate } from '../../workflows/common/meta';
import type { ClaimTemplate, RetentionPolicyType, StatefulClaimView, StatefulPodView, StatefulRevisionView, StatefulSetStatusView, StatefulSetView } from '../../workflows/statefulset/types';

/** A StatefulSet is read whole: its template goes into revisions exactly as served. */
export const STATEFULSET_FIELDS: FieldMask = { metadata: true, spec: true, status: true };

type StatefulSetObject = KubeObject & {
  spec?: {
    replicas?: number;
    selector?: LabelSelector | null;
    template?: PodTemplate & Record<string, unknown>;
    serviceName?: string;
    podManagementPolicy?: string;
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } | null };
    revisionHistoryLimit?: number;
    minReadySeconds?: number;
    ordinals?: { start?: number } | null;
    volumeClaimTemplates?: ClaimTemplate[] | null;
    persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string } | null;
  };
  status?: Partial<StatefulSetStatusView>;
};

const policy = (v: string | undefined): RetentionPolicyType => (v === 'Delete' ? 'Delete' : 'Retain');

export function statefulSetView(o: KubeObject): StatefulSetView {
  const s = o as StatefulSetObject;
  const spec = s.spec ?? {};
  const st = s.status ?? {};
  const ru = spec.updateStrategy?.rollingUpdate;
  const onDelete = spec.updateStrategy?.type === 'OnDelete';
  return {
    ...revisionedWorkloadMeta(s, spec.selector),
    replicas: spec.replicas ?? 1,
    template: spec.template ?? { spec: {} },
    serviceName: spec.serviceName ?? '',
    podManagementPolicy: spec.podManagementPolicy === 'Parallel' ? 'Parallel' : 'OrderedReady',
    updateStrategy: onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', ...(ru ? { rollingUpdate: { partition: ru.partition ?? 0 } } : {}) },
    revisionHistoryLimit: spec.revisionHistoryLimit ?? 10,
    minReadySeconds: spec.minReadySeconds ?? 0,
    ordinalsStart: spec.ordinals?.start ?? 0,
    volumeClaimTemplates: spec.volumeClaimTemplates ?? [],
    retention: {
      whenDeleted: policy(spec.persistentVolumeClaimRetentionPolicy?.whenDeleted),
      whenScaled: policy(spec.persistentVolumeClaimRetentionPolicy?.whenScaled),
    },
    status: {
      replicas: st.replicas ?? 0,
      ...(st.observedGeneration !== undefined ? { observedGeneration: st.observedGeneration } : {}),
      ...(st.readyReplicas !== undefined ? { readyReplicas: st.readyReplicas } : {}),
      ...(st.currentReplicas !== undefined ? { currentReplicas: st.currentReplicas } : {}),
      ...(st.updatedReplicas !== undefined ? { updatedReplicas: st.updatedReplicas } : {}),
      ...(st.availableReplicas !== undefined ? { availableReplicas: st.availableReplicas } : {}),
      ...(st.currentRevision ? { currentRevision: st.currentRevision } : {}),
      ...(st.updateRevision ? { updateRevision: st.updateRevision } : {}),
      ...(st.collisionCount !== undefined ? { collisionCount: st.collisionCount } : {}),
    },
  };
}

const refView = (r: OwnerRef): OwnerRef => ({
  apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid,
  ...(r.controller !== undefined ? { controller: r.controller } : {}),
  ...(r.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: r.blockOwnerDeletion } : {}),
});

/** What statefulPodView reads of a pod; the routes watch pods with it too. */
export const STATEFUL_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { volumes: { name: true, persistentVolumeClaim: { claimName: true } } },
  status: { phase: true, conditions: { type: true, status: true, lastTransitionTime: true } },
};

export function statefulPodView(o: KubeObject): StatefulPodView {
  const m = o.metadata ?? {};
  const spec = (o.spec ?? {}) as { volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName?: string } | null }> | null };
  const st = (o.status ?? {}) as { phase?: string; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
  const ready = (st.conditions ?? []).find((c) => c.type === 'Ready');
  const ref = controllerRef(m.ownerReferences);
  return {
    name: m.name ?? '',
    namespace: m.namespace ?? '',
    uid: m.uid ?? '',
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    labels: m.labels ?? {},
    ...(ref ? { controllerRef: refView(ref) } : {}),
    phase: st.phase ?? '',
    ready: ready?.status === 'True',
    ...(ready?.status === 'True' && ready.lastTransitionTime ? { readySince: ready.lastTransitionTime } : {}),
    deleting: !!m.deletionTimestamp,
    volumes: Object.fromEntries((spec.volumes ?? []).map((v) => [v.name, v.persistentVolumeClaim?.claimName ?? ''])),
  };
}

/** What statefulClaimView reads of a claim. */
export const STATEFUL_CLAIM_FIELDS: FieldMask = { metadata: true };

export function statefulClaimView(o: KubeObject): StatefulClaimView {
  const m = o.metadata ?? {};
  return { name: m.name ?? '', uid: m.uid ?? '', ownerReferences: (m.ownerReferences ?? []).map(refView), deleting: !!m.deletionTimestamp };
}

/** What statefulRevisionView reads of a ControllerRevision. */
export const STATEFUL_REVISION_FIELDS: FieldMask = CONTROLLER_REVISION_FIELDS;

export function statefulRevisionView(o: KubeObject): StatefulRevisionView {
  return controllerRevisionView(o, refView);
}
