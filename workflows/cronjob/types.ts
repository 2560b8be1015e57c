/**
 * Payloads that cross the workflow boundary for the CronJob controller: compact projections of a
 * CronJob and of the Jobs it controls, the signal the watch sends, and the writes a decision asks for.
 */

import type { OwnerRef } from '../common/meta';

/** Where upstream records, on each Job it creates, the scheduled time it was created for (RFC 3339 in the CronJob's zone). */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';

/** corev1.ObjectReference as upstream writes it into status.active. */
export interface JobRef {
  apiVersion?: string;
  kind?: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
}

/** spec.jobTemplate as the API returned it; the spec is opaque here and copied into each Job. */
export interface JobTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

export interface CronJobStatusView {
  active: JobRef[];
  lastScheduleTime?: string; // RFC 3339
  lastSuccessfulTime?: string;
}

export interface CronJobView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string; // RFC 3339
  deletionTimestamp?: string;
  schedule: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  /** defaulted to Allow when unset */
  concurrencyPolicy: ConcurrencyPolicy;
  suspend: boolean;
  /** absent when unset: upstream keeps every Job of that kind then */
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate: JobTemplate;
  status: CronJobStatusView;
}

/** What the controller reads of one Job whose controller reference names the CronJob. */
export interface ChildJob {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  deletionTimestamp?: string;
  /** the controller owner reference, if any */
  controllerRef?: Pick<OwnerRef, 'apiVersion' | 'kind' | 'name' | 'uid'>;
  /** the batch.kubernetes.io/cronjob-scheduled-timestamp annotation */
  scheduledTimestamp?: string;
  /** status.startTime: history is trimmed oldest-started first */
  startTime?: string;
  /** a Complete or Failed condition with status True */
  finished?: 'Complete' | 'Failed';
  /** status.completionTime (set on success) */
  completionTime?: string;
}

/** What the informer router sends a CronJob's workflow; a burst of events for one key arrives merged. */
export interface CronJobEvent {
  /** the CronJob as last seen by the watch */
  cronJob?: CronJobView;
  /** the CronJob with this UID was deleted */
  cronJobDeletedUid?: string;
  /** Jobs it controls, added or changed (latest state) */
  jobs?: ChildJob[];
  /** UIDs of Jobs deleted */
  jobsDeleted?: string[];
  /** the watch relisted (start, failover, 410 Gone): events may have been missed, re-read everything */
  relist?: boolean;
}

/** Later events win per object; a Job deleted after a change stays deleted, and the reverse. */
export function mergeCronJobEvents(a: CronJobEvent, b: CronJobEvent): CronJobEvent {
  const jobs = new Map<string, ChildJob>();
  const deleted = new Set<string>(a.jobsDeleted ?? []);
  for (const j of a.jobs ?? []) jobs.set(j.uid, j);
  for (const j of b.jobs ?? []) {
    jobs.set(j.uid, j);
    deleted.delete(j.uid);
  }
  for (const u of b.jobsDeleted ?? []) {
    jobs.delete(u);
    deleted.add(u);
  }
  const cronJob = b.cronJob ?? a.cronJob;
  const cronJobDeletedUid = b.cronJobDeletedUid ?? a.cronJobDeletedUid;
  return {
    ...(cronJob && !(b.cronJobDeletedUid && cronJob.uid === b.cronJobDeletedUid) ? { cronJob } : {}),
    ...(cronJobDeletedUid ? { cronJobDeletedUid } : {}),
    ...(jobs.size ? { jobs: [...jobs.values()] } : {}),
    ...(deleted.size ? { jobsDeleted: [...deleted] } : {}),
    ...(a.relist || b.relist ? { relist: true } : {}),
  };
}

/** A core/v1 Event on the CronJob, as upstream's recorder would write it. */
export interface CronJobEventRecord {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** The Job to create, as plain JSON for the API server (upstream's getJobFromTemplate2 with the name fixed). */
export interface JobManifest {
  apiVersion: 'batch/v1';
  kind: 'Job';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    ownerReferences: OwnerRef[];
  };
  spec: Record<string, unknown>;
}

/**
 * A Job this workflow created whose entry in status.active it has not yet seen written (the status
 * update failed or lost a race). Remembered so the next pass puts it back instead of calling it unexpected.
 */
export interface UnconfirmedStart {
  job: JobRef;
  scheduledTime: string; // RFC 3339
}
