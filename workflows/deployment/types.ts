/**
 * Payloads that cross the workflow boundary for the deployment engine. Compact projections of
 * apps/v1 Deployments and ReplicaSets (only what a decision reads) and the commands a reconcile issues.
 */
import type { ReplicaCondition } from '../replicaset/types';
import type { LabelSelector, OwnerRef, PodTemplate } from '../common/meta';
import type { IntOrPercent } from '../common/int-or-percent';

export type { IntOrPercent, LabelSelector, OwnerRef, PodTemplate, ReplicaCondition };


export type ConditionStatus = 'True' | 'False' | 'Unknown';

export type DeploymentStrategy =
  | { type: 'RollingUpdate'; maxSurge: IntOrPercent; maxUnavailable: IntOrPercent }
  | { type: 'Recreate' };

/** apps/v1 DeploymentCondition; times are RFC 3339 strings as the API serializes them. */
export interface DeploymentCondition {
  type: string; // 'Available' | 'Progressing' | 'ReplicaFailure'
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface DeploymentStatus {
  observedGeneration: number;
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  unavailableReplicas: number;
  /** absent when some ReplicaSet does not report it (upstream leaves the pointer nil then) */
  terminatingReplicas?: number;
  /** absent until the first hash collision (nil upstream); 0 and absent hash differently */
  collisionCount?: number;
  conditions: DeploymentCondition[];
}

/** Compact projection of an apps/v1 Deployment. */
export interface DeploymentView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  deletionTimestamp?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** spec.replicas, defaulted to 1 */
  replicas: number;
  selector: LabelSelector;
  template: PodTemplate;
  /** the apiserver defaults a RollingUpdate's maxSurge and maxUnavailable to '25%' */
  strategy: DeploymentStrategy;
  minReadySeconds: number;
  /** default 10; null/undefined means keep every old ReplicaSet */
  revisionHistoryLimit?: number | null;
  /** default 600; null/undefined (or 2^31-1) means no deadline */
  progressDeadlineSeconds?: number | null;
  paused: boolean;
  status: DeploymentStatus;
}

export interface ReplicaSetStatusView {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  fullyLabeledReplicas: number;
  observedGeneration: number;
  terminatingReplicas?: number;
  /** the ReplicaSet's conditions; its ReplicaFailure condition is copied onto the Deployment */
  conditions?: ReplicaCondition[];
}

/** Compact projection of an apps/v1 ReplicaSet owned by the Deployment. */
export interface ReplicaSetView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  generation: number;
  deletionTimestamp?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerRef[];
  /** spec.replicas */
  replicas: number;
  minReadySeconds: number;
  template: PodTemplate;
  /**
   * Set only when the template was left out of an observation too large for a payload
   * (activities/deployment/fit.ts): whether it equals the Deployment's, ignoring the hash label.
   */
  templateMatches?: boolean;
  selector: LabelSelector;
  status: ReplicaSetStatusView;
}

/**
 * The commands one reconcile issues, in the order to run them. Each carries why, in words.
 * A ReplicaSet is written at most once per plan (its final desired state); the Deployment is written
 * at most once (annotations then status, which upstream sends in one UpdateStatus).
 */
export type DeploymentAction =
  | {
      type: 'createReplicaSet';
      namespace: string;
      name: string;
      /** the pod-template-hash value */
      hash: string;
      replicas: number;
      minReadySeconds: number;
      annotations: Record<string, string>;
      labels: Record<string, string>;
      ownerReferences: OwnerRef[];
      /** the Deployment's template with the pod-template-hash label added */
      template: PodTemplate;
      /** the Deployment's selector with matchLabels pod-template-hash added */
      selector: LabelSelector;
      reason: string;
    }
  | {
      type: 'scaleReplicaSet';
      name: string;
      uid: string;
      resourceVersion: string;
      replicas: number;
      /** the full desired annotation map (desired-replicas / max-replicas included) */
      annotations: Record<string, string>;
      /** set when spec.minReadySeconds must change too (upstream syncs it onto the new RS) */
      minReadySeconds?: number;
      reason: string;
    }
  | {
      type: 'updateReplicaSetAnnotations';
      name: string;
      uid: string;
      resourceVersion: string;
      /** the full desired annotation map */
      annotations: Record<string, string>;
      /** set when spec.minReadySeconds must change too */
      minReadySeconds?: number;
      reason: string;
    }
  | { type: 'deleteReplicaSet'; name: string; uid: string; reason: string }
  | { type: 'updateDeploymentAnnotations'; annotations: Record<string, string>; reason: string }
  | { type: 'updateDeploymentStatus'; status: DeploymentStatus; reason: string };

export interface DeploymentPlan {
  actions: DeploymentAction[];
  /** re-run the reconcile after this many ms even without events (progress-deadline check) */
  requeueAfterMs?: number;
  /** set when this round bumped status.collisionCount (a hash collision); the status write carries it */
  collisionCount?: number;
}

export interface PlanDeploymentInput {
  deployment: DeploymentView;
  /** every ReplicaSet the Deployment controls (already claimed) */
  replicaSets: readonly ReplicaSetView[];
  /** pods of ReplicaSets other than the new one that are neither Succeeded nor Failed (Recreate waits for 0) */
  oldPodsRunning: number;
  /** the reconcile's clock, epoch ms */
  now: number;
  /**
   * name new ReplicaSets by upstream's pod-template-hash (ComputeHash); runs recorded before it
   * used this project's own hash
   */
  upstreamTemplateHash?: boolean;
}

/** Just enough of the Deployment to address, guard and report a write; keeps histories small. */
export interface DeploymentRef {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

export function deploymentRef(d: DeploymentRef): DeploymentRef {
  return { namespace: d.namespace, name: d.name, uid: d.uid, resourceVersion: d.resourceVersion };
}
