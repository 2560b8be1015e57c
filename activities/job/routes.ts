import { selectorMatches } from '../../workflows/common/selector';
import type { JobWorkflowInput } from '../../workflows/job/workflow';
import { mergeJobEvents, type JobEvent, type JobPod, type JobView } from '../../workflows/job/types';
import { JOB_POD_FIELDS, JOB_VIEW_FIELDS, jobPod, jobView } from './projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import { BY_NAMESPACE } from '../informers/indexes';
import type { RouteContext } from '../../workers/descriptor';
import { jobWorkflow } from '../../workflows/job/workflow';
import { orphanReleaseDue } from '../../workflows/job/orphans';
import { jobOrphanPodWorkflow, orphanPodWorkflowId, type OrphanPodEvent, type OrphanPodWorkflowInput } from '../../workflows/job/orphan-pod';

/** Job pod projections hold only what the controller decides on: equal but for the version means nothing to do. */
function sameForJobs(a: JobPod, b: JobPod): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the job controller, as upstream's handlers enqueue keys: a Job to itself; a pod to the
 * Job that controls it (by UID), or, orphaned, to every Job in its namespace whose selector
 * matches; an update to the Jobs of both its old and new state. A pod left holding the tracking
 * finalizer with no Job to count it (upstream's orphan queue) gets a release of its own, keyed by
 * the pod, on any event that shows it so, the first list included.
 */
export function jobRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('job')) return undefined;

  const queue = (job: JobView, event: JobEvent) => {
    const args: JobWorkflowInput = { namespace: job.namespace, name: job.name, uid: job.uid, tuning: input.tuning };
    signaller.queue({ controller: 'job', workflow: jobWorkflow, kind: 'Job', namespace: job.namespace, name: job.name, uid: job.uid, args },
      event, mergeJobEvents);
  };

  const jobs = cache.watch(RESOURCES.jobs, JOB_VIEW_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const job = jobView(ev.old);
        queue(job, { jobDeletedUid: job.uid });
        return;
      }
      const job = jobView(ev.obj);
      // a list (the first, or after a gap) has each Job read its pods afresh
      queue(job, ev.source === 'watch' ? { job } : { job, relist: true });
    },
  });
  jobs.addIndex(BY_NAMESPACE);

  const jobsForPod = (p: JobPod): JobView[] => {
    const ref = controllerRef(p.ownerReferences);
    if (ref) {
      if (ref.kind !== 'Job') return [];
      const j = jobs.get(ref.uid);
      return j ? [jobView(j)] : [];
    }
    return jobs.byIndex(BY_NAMESPACE, p.namespace).map(jobView).filter((j) => selectorMatches(j.selector, p.labels));
  };

  const routePod = (before: JobPod | undefined, after: JobPod | undefined) => {
    if (before && after && sameForJobs(before, after)) return;
    const targets = new Map<string, JobView>();
    for (const p of [before, after]) if (p) for (const j of jobsForPod(p)) targets.set(j.uid, j);
    for (const j of targets.values()) queue(j, after ? { pods: [after] } : { podsDeleted: [before!.uid] });
  };

  const cachedJob = (uid: string): JobView | undefined => {
    const j = jobs.get(uid);
    return j ? jobView(j) : undefined;
  };
  const releaseIfOrphaned = (p: JobPod) => {
    const why = orphanReleaseDue(p, cachedJob);
    if (!why) return;
    const args: OrphanPodWorkflowInput = { namespace: p.namespace, name: p.name, uid: p.uid, tuning: input.tuning };
    const event: OrphanPodEvent = { uid: p.uid, resourceVersion: p.resourceVersion, why };
    signaller.queue({ controller: 'job', workflow: jobOrphanPodWorkflow, kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid, args,
      workflowId: orphanPodWorkflowId(p.namespace, p.name) }, event, (_earlier: OrphanPodEvent, later: OrphanPodEvent) => later);
  };

  cache.watch(RESOURCES.pods, JOB_POD_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        if (ev.source !== 'list') routePod(jobPod(ev.old), undefined);
        return;
      }
      const after = jobPod(ev.obj);
      const before = ev.type === 'updated' ? jobPod(ev.old) : undefined;
      if (ev.source === 'relist' && before?.resourceVersion === after.resourceVersion) return;
      releaseIfOrphaned(after);
      // the first list reaches each Job as its own relist
      if (ev.source === 'list') return;
      routePod(before, after);
    },
  });

  // a Job gone while no watch ran: `relist` has its workflow read it, release its pods and finish
  return { sweeps: [{ controller: 'job', kind: 'Job', store: jobs, reobserve: () => ({ relist: true } satisfies JobEvent) }] };
}
