import { selectorMatches } from '../../workflows/common/selector';
import type { JobWorkflowInput } from '../../workflows/job/workflow';
import { mergeJobEvents, type JobEvent, type JobPod, type JobView } from '../../workflows/job/types';
import { jobPod, jobView } from './projections';
import { controllerRef } from '../kube/projections';
import type { Handler } from '../informers/reflector';
import type { InformerInput, RouteFamily } from '../informers/family';
import { PODS_PATH } from '../replicaset/routes';
import type { Signaller } from '../informers/signaller';
import { jobWorkflow } from '../../workflows/job/workflow';

export const JOBS_PATH = '/apis/batch/v1/jobs';

/** Job pod projections hold only what the controller decides on: equal but for the version means nothing to do. */
function sameForJobs(a: JobPod, b: JobPod): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the job controller, as upstream's handlers enqueue keys: a Job to itself; a pod to the
 * Job that controls it (by UID), or, orphaned, to every Job in its namespace whose selector
 * matches; an update to the Jobs of both its old and new state.
 */
export function jobRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('job')) return undefined;

  const jobs = new Map<string, JobView>();
  const pods = new Map<string, JobPod>();

  const queue = (job: JobView, event: JobEvent) => {
    const args: JobWorkflowInput = { namespace: job.namespace, name: job.name, uid: job.uid, tuning: input.tuning };
    signaller.queue({ controller: 'job', workflow: jobWorkflow, kind: 'Job', namespace: job.namespace, name: job.name, uid: job.uid, args },
      event, mergeJobEvents);
  };

  const jobsForPod = (p: JobPod): JobView[] => {
    const ref = controllerRef(p.ownerReferences);
    if (ref) {
      if (ref.kind !== 'Job') return [];
      const j = jobs.get(ref.uid);
      return j ? [j] : [];
    }
    return [...jobs.values()].filter((j) => j.namespace === p.namespace && selectorMatches(j.selector, p.labels));
  };

  /** Pods another kind of controller owns never matter here; not caching them keeps memory down. */
  const mayConcernJobs = (p: JobPod): boolean => {
    const ref = controllerRef(p.ownerReferences);
    return !ref || ref.kind === 'Job';
  };

  const remember = (p: JobPod): void => {
    if (mayConcernJobs(p)) pods.set(p.uid, p);
    else pods.delete(p.uid);
  };

  const routePod = (before: JobPod | undefined, after: JobPod | undefined) => {
    if (before && after && sameForJobs(before, after)) return;
    const targets = new Map<string, JobView>();
    for (const p of [before, after]) if (p) for (const j of jobsForPod(p)) targets.set(j.uid, j);
    for (const j of targets.values()) queue(j, after ? { pods: [after] } : { podsDeleted: [before!.uid] });
  };

  const jobHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const job = jobView(obj);
        seen.add(job.uid);
        jobs.set(job.uid, job);
        queue(job, { job, relist: true });
      }
      for (const [uid, j] of jobs) {
        if (!seen.has(uid)) {
          jobs.delete(uid);
          queue(j, { jobDeletedUid: uid });
        }
      }
    },
    event(type, obj) {
      const job = jobView(obj);
      if (type === 'DELETED') {
        jobs.delete(job.uid);
        queue(job, { jobDeletedUid: job.uid });
      } else {
        jobs.set(job.uid, job);
        queue(job, { job });
      }
    },
  };

  const podHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const p = jobPod(obj);
        if (!mayConcernJobs(p) && !pods.has(p.uid)) continue;
        seen.add(p.uid);
        const before = pods.get(p.uid);
        remember(p);
        if (before && before.resourceVersion !== p.resourceVersion) routePod(before, p);
      }
      for (const [uid, p] of pods) {
        if (!seen.has(uid)) {
          pods.delete(uid);
          routePod(p, undefined);
        }
      }
    },
    event(type, obj) {
      const p = jobPod(obj);
      const before = pods.get(p.uid);
      if (type === 'DELETED') {
        pods.delete(p.uid);
        routePod(before ?? p, undefined);
      } else {
        remember(p);
        routePod(before, p);
      }
    },
  };

  return {
    handlers: new Map<string, Handler>([[JOBS_PATH, jobHandler], [PODS_PATH, podHandler]]),
    sizes: () => ({ jobs: jobs.size, jobPods: pods.size }),
  };
}
