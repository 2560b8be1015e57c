import type { CronJobWorkflowInput } from '../../workflows/cronjob/workflow';
import { mergeCronJobEvents, type ChildJob, type CronJobEvent, type CronJobView } from '../../workflows/cronjob/types';
import { CHILD_JOB_FIELDS, CRON_JOB_VIEW_FIELDS, childJob, cronJobView } from './activities';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import type { RouteContext } from '../../workers/descriptor';
import { cronJobWorkflow } from '../../workflows/cronjob/workflow';

/** Job summaries carry only what the CronJob controller decides on: equal but for the version means nothing changed for it. */
function sameForCronJob(a: ChildJob, b: ChildJob): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the cronjob controller, as upstream's handlers enqueue keys: a CronJob to itself; a Job
 * to the CronJob its controller reference resolves to (kind CronJob, same namespace, same UID), and
 * on a change of controller to the old one as well.
 */
export function cronJobRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('cronjob')) return undefined;

  const queue = (cj: Pick<CronJobView, 'namespace' | 'name' | 'uid'>, event: CronJobEvent) => {
    const args: CronJobWorkflowInput = { namespace: cj.namespace, name: cj.name, uid: cj.uid, tuning: input.tuning };
    signaller.queue({ controller: 'cronjob', workflow: cronJobWorkflow, kind: 'CronJob', namespace: cj.namespace, name: cj.name, uid: cj.uid, args },
      event, mergeCronJobEvents);
  };

  const cronJobs = cache.watch(RESOURCES.cronJobs, CRON_JOB_VIEW_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const cj = cronJobView(ev.old);
        queue(cj, { cronJobDeletedUid: cj.uid });
        return;
      }
      const cj = cronJobView(ev.obj);
      // a list (the first, or after a gap) has each CronJob read its Jobs afresh
      queue(cj, ev.source === 'watch' ? { cronJob: cj } : { cronJob: cj, relist: true });
    },
  });

  const ownerOf = (j: ChildJob): CronJobView | undefined => {
    const ref = j.controllerRef;
    if (!ref || ref.kind !== 'CronJob') return undefined;
    const o = cronJobs.get(ref.uid);
    const cj = o && cronJobView(o);
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

  cache.watch(RESOURCES.jobs, CHILD_JOB_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        routeJob(childJob(ev.old), undefined);
        return;
      }
      // a relist's unchanged Jobs are skipped; the new ones are not, nor is the first list's every
      // Job: this watch may have listed alone, after a gap the CronJobs did not see
      if (ev.type === 'updated' && ev.source === 'relist' && ev.old.metadata?.resourceVersion === ev.obj.metadata?.resourceVersion) return;
      routeJob(ev.type === 'updated' ? childJob(ev.old) : undefined, childJob(ev.obj));
    },
  });

  // a CronJob gone while no watch ran: `relist` has its workflow read it and finish
  return { sweeps: [{ controller: 'cronjob', kind: 'CronJob', store: cronJobs, reobserve: () => ({ relist: true } satisfies CronJobEvent) }] };
}
