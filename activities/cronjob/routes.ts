import type { CronJobWorkflowInput } from '../../workflows/cronjob/workflow';
import { mergeCronJobEvents, type ChildJob, type CronJobEvent, type CronJobView } from '../../workflows/cronjob/types';
import { childJob, cronJobView } from './activities';
import type { Handler } from '../informers/reflector';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Signaller } from '../informers/signaller';
import { cronJobWorkflow } from '../../workflows/cronjob/workflow';

export const CRONJOBS_PATH = '/apis/batch/v1/cronjobs';
export const JOBS_PATH = '/apis/batch/v1/jobs';

/** Job summaries carry only what the CronJob controller decides on: equal but for the version means nothing changed for it. */
function sameForCronJob(a: ChildJob, b: ChildJob): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the cronjob controller, as upstream's handlers enqueue keys: a CronJob to itself; a Job
 * to the CronJob its controller reference resolves to (kind CronJob, same namespace, same UID), and
 * on a change of controller to the old one as well.
 */
export function cronJobRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('cronjob')) return undefined;

  const cronJobs = new Map<string, CronJobView>();
  const jobs = new Map<string, ChildJob>();

  const queue = (cj: Pick<CronJobView, 'namespace' | 'name' | 'uid'>, event: CronJobEvent) => {
    const args: CronJobWorkflowInput = { namespace: cj.namespace, name: cj.name, uid: cj.uid, tuning: input.tuning };
    signaller.queue({ controller: 'cronjob', workflow: cronJobWorkflow, kind: 'CronJob', namespace: cj.namespace, name: cj.name, uid: cj.uid, args },
      event, mergeCronJobEvents);
  };

  const ownerOf = (j: ChildJob): CronJobView | undefined => {
    const ref = j.controllerRef;
    if (!ref || ref.kind !== 'CronJob') return undefined;
    const cj = cronJobs.get(ref.uid);
    return cj && cj.namespace === j.namespace ? cj : undefined;
  };

  const routeJob = (before: ChildJob | undefined, after: ChildJob | undefined) => {
    if (before && after && sameForCronJob(before, after)) return;
    const targets = new Map<string, CronJobView>();
    for (const j of [before, after]) {
      const o = j && ownerOf(j);
      if (o) targets.set(o.uid, o);
    }
    for (const o of targets.values()) queue(o, after && ownerOf(after)?.uid === o.uid ? { jobs: [after] } : { jobsDeleted: [(before ?? after)!.uid] });
  };

  const cronJobHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const cj = cronJobView(obj);
        seen.add(cj.uid);
        cronJobs.set(cj.uid, cj);
        queue(cj, { cronJob: cj, relist: true });
      }
      for (const [uid, cj] of cronJobs) {
        if (!seen.has(uid)) {
          cronJobs.delete(uid);
          queue(cj, { cronJobDeletedUid: uid });
        }
      }
    },
    event(type, obj) {
      const cj = cronJobView(obj);
      if (type === 'DELETED') {
        cronJobs.delete(cj.uid);
        queue(cj, { cronJobDeletedUid: cj.uid });
      } else {
        cronJobs.set(cj.uid, cj);
        queue(cj, { cronJob: cj });
      }
    },
  };

  const jobHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const j = childJob(obj);
        seen.add(j.uid);
        const before = jobs.get(j.uid);
        jobs.set(j.uid, j);
        // also the new ones: this watch may have relisted alone, after a gap the CronJobs did not see
        if (!before || before.resourceVersion !== j.resourceVersion) routeJob(before, j);
      }
      for (const [uid, j] of jobs) {
        if (!seen.has(uid)) {
          jobs.delete(uid);
          routeJob(j, undefined);
        }
      }
    },
    event(type, obj) {
      const j = childJob(obj);
      const before = jobs.get(j.uid);
      if (type === 'DELETED') {
        jobs.delete(j.uid);
        routeJob(before ?? j, undefined);
      } else {
        jobs.set(j.uid, j);
        routeJob(before, j);
      }
    },
  };

  return {
    handlers: new Map<string, Handler>([[CRONJOBS_PATH, cronJobHandler], [JOBS_PATH, jobHandler]]),
    sizes: () => ({ cronJobs: cronJobs.size, cronJobJobs: jobs.size }),
  };
}
