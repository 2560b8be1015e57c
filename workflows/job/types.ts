/**
 * Payloads that cross the workflow boundary for the job controller: compact projections of a Job
 * and of its pods (never the pod template, which the pod-creating activity reads live), and the
 * informer event a Job's workflow receives.
 */
import { mergePodDeltas } from '../common/pod-deltas';
import type { LabelSelector, OwnerRef } from '../common/meta';
import type {
  CompletionMode,
  JobPodStatus,
  JobStatus,
  PodFailurePolicy,
  PodReplacementPolicy,
  SuccessPolicy,
} from './api';

/** The value of spec.managedBy under which this controller (upstream's job-controller) acts. */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

/** What the job controller reads of a Job. Defaults the API server applies are applied here too. */
export interface JobView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  /** RFC 3339 */
  creationTimestamp: string;
  deletionTimestamp?: string;
  labels: Record<string, string>;
  /** spec.parallelism, defaulted to 1 */
  parallelism: number;
  /** spec.completions; undefined means "any one success completes the Job" */
  completions?: number;
  completionMode: CompletionMode;
  /** spec.backoffLimit, defaulted to 6 (to MaxInt32 by the API when backoffLimitPerIndex is set) */
  backoffLimit: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  activeDeadlineSeconds?: number;
  podFailurePolicy?: PodFailurePolicy;
  successPolicy?: SuccessPolicy;
  suspend: boolean;
  podReplacementPolicy?: PodReplacementPolicy;
  selector: LabelSelector;
  managedBy?: string;
  /** spec.template.spec.restartPolicy: OnFailure makes container restarts count against backoffLimit */
  restartPolicy: string;
  status: JobStatus;
}

/** What the job controller knows of one pod. */
export interface JobPod extends JobPodStatus {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** RFC 3339 */
  creationTimestamp: string;
  deletionGracePeriodSeconds?: number;
  ownerReferences: OwnerRef[];
  /** carries batch.kubernetes.io/job-tracking: not yet counted in the Job's status */
  hasTrackingFinalizer: boolean;
  /** Ready condition True */
  ready: boolean;
  nodeName?: string;
  /** highest restart count over regular containers (deletion order) */
  restartCount: number;
  /** highest restart count over sidecar containers (deletion order) */
  sidecarRestartCount: number;
  /** sum of restart counts over all containers, init ones included (restartPolicy OnFailure's backoff) */
  totalRestarts: number;
  /** init containers with restartPolicy Always: their finish times count towards the pod's */
  sidecarContainerNames?: string[];
}

/** What the informer router sends one Job's workflow; several events for one key arrive merged. */
export interface JobEvent {
  /** the Job as last seen by the watch */
  job?: JobView;
  /** the Job with this UID was deleted */
  jobDeletedUid?: string;
  /** pods added or changed (latest state) */
  pods?: JobPod[];
  /** UIDs of pods deleted */
  podsDeleted?: string[];
  /** the watch relisted: events may have been missed, re-read everything */
  relist?: boolean;
}

/** Merge two events for one Job into one signal, `later` winning where they overlap. */
export function mergeJobEvents(earlier: JobEvent, later: JobEvent): JobEvent {
  const out: JobEvent = mergePodDeltas(earlier, later);
  const job = later.job ?? earlier.job;
  if (job) out.job = job;
  const gone = later.jobDeletedUid ?? earlier.jobDeletedUid;
  if (gone) out.jobDeletedUid = gone;
  if (earlier.relist || later.relist) out.relist = true;
  return out;
}
