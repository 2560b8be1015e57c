/**
 * Pods left holding batch.kubernetes.io/job-tracking with no live Job to count them: upstream's
 * orphan-pod queue, as pure decisions. The watch decides whether a pod is worth a look (from its
 * cache); the release decides again from what it just read from the API.
 */
import type { OwnerRef } from '../common/meta';
import { controllerRef } from '../common/controller-ref';
import { isJobFinished, managedByOther } from './logic';
import type { JobPod, JobView } from './types';

/** What the orphan check reads of a pod. */
export type OrphanCandidate = Pick<JobPod, 'hasTrackingFinalizer' | 'ownerReferences' | 'deletionTimestamp'>;

/** A controller reference to a batch/v1 Job: the only owner whose pods this controller releases. */
export function isJobRef(ref: OwnerRef): boolean {
  return ref.kind === 'Job' && ref.apiVersion === 'batch/v1';
}

/**
 * At the watch, upstream's enqueueOrphanPod conditions: a pod holding the finalizer that has no
 * controller at all (on add, update, or relist), or that is being deleted while the Job its
 * controller reference names (by UID) is not in the cache. A live pod whose Job is gone is left to
 * the garbage collector, whose deletion brings it back here. Returns why, or undefined.
 * A cached but finished Job is not a reason: that Job's own workflow releases its pods.
 */
export function orphanReleaseDue(pod: OrphanCandidate, cachedJob: (uid: string) => JobView | undefined): string | undefined {
  if (!pod.hasTrackingFinalizer) return undefined;
  const ref = controllerRef(pod.ownerReferences);
  if (!ref) return 'the pod holds the tracking finalizer but has no controller';
  if (!isJobRef(ref) || !pod.deletionTimestamp) return undefined;
  if (cachedJob(ref.uid)) return undefined;
  return `the pod is being deleted and its Job ${ref.name} (uid ${ref.uid}) is gone`;
}

export type OrphanVerdict = { release: true; why: string } | { release: false; why: string };

/**
 * From a fresh read, upstream's handleSingleOrphanPod: the finalizer goes unless the pod's
 * controller is not a Job, or is a Job that still exists (same UID) and is unfinished or managed by
 * another controller. `job` is the Job read under the controller reference's name, if any.
 */
export function orphanVerdict(pod: OrphanCandidate, job: JobView | undefined): OrphanVerdict {
  if (!pod.hasTrackingFinalizer) return { release: false, why: 'no tracking finalizer' };
  const ref = controllerRef(pod.ownerReferences);
  if (!ref) return { release: true, why: 'no controller' };
  if (!isJobRef(ref)) return { release: false, why: `controlled by ${ref.apiVersion} ${ref.kind} ${ref.name}, not a Job` };
  if (!job) return { release: true, why: `Job ${ref.name} is gone` };
  if (job.uid !== ref.uid) return { release: true, why: `Job ${ref.name} (uid ${ref.uid}) is gone; the name holds uid ${job.uid}` };
  const other = managedByOther(job);
  if (other !== undefined) return { release: false, why: `Job ${ref.name} is managed by ${other}` };
  if (!isJobFinished(job)) return { release: false, why: `Job ${ref.name} is live and counts the pod` };
  return { release: true, why: `Job ${ref.name} has finished` };
}
