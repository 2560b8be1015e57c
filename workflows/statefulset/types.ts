/**
 * Payloads of the StatefulSet controller (upstream pkg/controller/statefulset): compact views of a
 * StatefulSet, its pods, claims and revisions, as one observation of the API reads them.
 */
import type { ControllerRevisionView, RevisionedWorkloadView } from '../common/controller-history';
import type { OwnerRef } from '../common/meta';

export type RetentionPolicyType = 'Retain' | 'Delete';

export interface StatefulSetStatusView {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
}

export interface StatefulSetView extends RevisionedWorkloadView {
  /** spec.replicas (1 when unset) */
  replicas: number;
  serviceName: string;
  podManagementPolicy: 'OrderedReady' | 'Parallel';
  updateStrategy: { type: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { partition: number } };
  /** spec.ordinals.start (0 when unset) */
  ordinalsStart: number;
  /** spec.volumeClaimTemplates as served */
  volumeClaimTemplates: ClaimTemplate[];
  retention: { whenDeleted: RetentionPolicyType; whenScaled: RetentionPolicyType };
  status: StatefulSetStatusView;
}

export interface ClaimTemplate {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] } & Record<string, unknown>;
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

/** What the controller reads of a pod. */
export interface StatefulPodView {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion?: string;
  labels: Record<string, string>;
  controllerRef?: OwnerRef;
  /** status.phase as served; '' when the pod has none yet (upstream's isCreated) */
  phase: string;
  ready: boolean;
  /** when Ready last turned True (RFC 3339), for minReadySeconds */
  readySince?: string;
  deleting: boolean;
  /** volume name to the claim it names ('' for a volume that is no claim) */
  volumes: Record<string, string>;
}

/** What the controller reads of a PersistentVolumeClaim named after one of its templates. */
export interface StatefulClaimView {
  name: string;
  uid: string;
  ownerReferences: OwnerRef[];
  deleting: boolean;
}

/** What the controller reads of a ControllerRevision. */
export type StatefulRevisionView = ControllerRevisionView;

/** What the watch sends a StatefulSet's workflow: something about it changed; it is observed afresh. */
export interface StatefulSetEvent {
  /** the StatefulSet was deleted */
  gone?: boolean;
  /** the StatefulSet's UID, when the event names the set */
  uid?: string;
}
