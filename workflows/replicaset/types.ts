/**
 * Payloads that cross the workflow boundary for the replicaset / replicationcontroller engine.
 * Compact projections of API objects: only the fields a decision needs, never whole objects.
 */
import type { LabelSelector, OwnerRef, PodTemplate } from '../common/meta';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** What the engine knows of one pod. */
export interface PodSummary {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string; // RFC 3339
  deletionTimestamp?: string;
  labels: Record<string, string>;
  ownerReferences: OwnerRef[];
  phase: PodPhase;
  nodeName?: string;
  /** Ready condition status True */
  ready: boolean;
  /** lastTransitionTime of the Ready condition when ready (RFC 3339) */
  readySince?: string;
  /** highest restartCount over containers */
  restartCount: number;
  /** the pod's deletion cost annotation (controller.kubernetes.io/pod-deletion-cost), 0 when absent or invalid */
  deletionCost: number;
  /**
   * highest restartCount over restartable init containers (sidecars: restartPolicy Always); 0 when absent.
   * Upstream breaks scale-down ties on it after the regular restart count.
   */
  sidecarRestartCount?: number;
}

/** The two kinds the engine drives; RC is reconciled through the same logic with its map selector. */
export type ReplicaOwnerKind = 'ReplicaSet' | 'ReplicationController';

export interface ReplicaOwner {
  kind: ReplicaOwnerKind;
  apiVersion: 'apps/v1' | 'v1';
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  deletionTimestamp?: string;
  /** spec.replicas, defaulted to 1 when unset */
  replicas: number;
  minReadySeconds: number;
  selector: LabelSelector;
  /** spec.template as the API returned it (metadata.labels/annotations + spec); opaque to the engine */
  template: PodTemplate;
  status: ReplicaStatus;
}


export interface ReplicaCondition {
  type: string; // 'ReplicaFailure'
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface ReplicaStatus {
  replicas: number;
  fullyLabeledReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  /** apps/v1 ReplicaSet only (upstream 1.35 sets it for ReplicaSets) */
  terminatingReplicas?: number;
  observedGeneration: number;
  conditions: ReplicaCondition[];
}

/** Why manageReplicas failed this round; drives the ReplicaFailure condition (FailedCreate / FailedDelete). */
export interface ManageError {
  kind: 'create' | 'delete';
  message: string;
}

/** A pod to create, as plain JSON for the API server (what upstream's GetPodFromTemplate builds, with a fixed name). */
export interface PodManifest {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences: OwnerRef[];
  };
  spec: Record<string, unknown>;
}
