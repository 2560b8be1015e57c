import type { V1SuccessPolicy, V1SuccessPolicyRule } from '@kubernetes/client-node';
/**
 * The batch/v1 Job API as the job controller reads it, and the slice of a pod's status its
 * decisions need. Shared by the leaf modules (indexes, pod failure policy, success policy,
 * backoff) and the controller's own projections, so that all of them agree on one shape.
 */

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface ConditionLike {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  /** RFC 3339 */
  lastTransitionTime?: string;
}

export interface ContainerStatusLike {
  name: string;
  /** set when the container's current state is terminated */
  terminated?: {
    exitCode: number;
    reason?: string;
    /** RFC 3339 */
    finishedAt?: string;
  };
}

/** What the job controller reads of a pod's status and metadata to judge how it ended. */
export interface JobPodStatus {
  phase: PodPhase;
  /** RFC 3339; set once the pod is being deleted */
  deletionTimestamp?: string;
  conditions: ConditionLike[];
  containerStatuses: ContainerStatusLike[];
  initContainerStatuses: ContainerStatusLike[];
  annotations: Record<string, string>;
  labels: Record<string, string>;
}

export type PodFailurePolicyAction = 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';

export interface PodFailurePolicyOnExitCodesRequirement {
  containerName?: string;
  operator: 'In' | 'NotIn';
  values: number[];
}

export interface PodFailurePolicyOnPodConditionsPattern {
  type: string;
  /** defaults to True in the API */
  status?: 'True' | 'False' | 'Unknown';
}

export interface PodFailurePolicyRule {
  action: PodFailurePolicyAction;
  onExitCodes?: PodFailurePolicyOnExitCodesRequirement;
  onPodConditions?: PodFailurePolicyOnPodConditionsPattern[];
}

export interface PodFailurePolicy {
  rules: PodFailurePolicyRule[];
}

/** batch/v1 SuccessPolicy (succeededIndexes is a compressed interval list, e.g. "0,2-4"): client-node's models are the JSON shape. */
export type SuccessPolicyRule = V1SuccessPolicyRule;
export type SuccessPolicy = V1SuccessPolicy;

export type CompletionMode = 'NonIndexed' | 'Indexed';
export type PodReplacementPolicy = 'TerminatingOrFailed' | 'Failed';

export type JobConditionType = 'Suspended' | 'Complete' | 'Failed' | 'FailureTarget' | 'SuccessCriteriaMet';

export interface JobCondition extends ConditionLike {
  type: JobConditionType;
  /** RFC 3339 */
  lastProbeTime?: string;
}

export interface UncountedTerminatedPods {
  succeeded?: string[];
  failed?: string[];
}

export interface JobStatus {
  conditions?: JobCondition[];
  /** RFC 3339 */
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  ready?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods?: UncountedTerminatedPods;
}

/** Indexed-job annotations and labels, as the pinned Kubernetes version writes and reads them. */
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
export const JOB_INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const JOB_INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';
/** the finalizer that keeps a finished pod until its Job has counted it */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
