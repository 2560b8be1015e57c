import { CONTROLLER, sameForTtl, wantsTtlWorkflow, type JobTtlView } from '../../workflows/ttl-after-finished/logic';
import type { TtlAfterFinishedEvent, TtlAfterFinishedWorkflowInput } from '../../workflows/ttl-after-finished/workflow';
import { mergeTtlAfterFinishedEvents, ttlAfterFinishedWorkflowId } from '../../workflows/ttl-after-finished/workflow';
import { JOB_TTL_FIELDS, jobTtlView } from './activities';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import type { RouteContext } from '../../workers/descriptor';
import { ttlAfterFinishedWorkflow } from '../../workflows/ttl-after-finished/workflow';

/**
 * Routes of the TTL-after-finished controller, as upstream's add and update handlers enqueue: a
 * Job that has finished, has a TTL and is not being deleted starts (or re-times) its workflow.
 * Nothing is sent for other Jobs, so no workflow is ever started just to end: a run whose Job was
 * deleted or lost its TTL finds out when its timer fires and it reads the Job live.
 */
export function ttlAfterFinishedRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (job: JobTtlView) => {
    const args: TtlAfterFinishedWorkflowInput = { namespace: job.namespace, name: job.name, uid: job.uid, tuning: input.tuning };
    const event: TtlAfterFinishedEvent = { job };
    signaller.queue({ controller: CONTROLLER, workflow: ttlAfterFinishedWorkflow, kind: 'Job', namespace: job.namespace, name: job.name,
      uid: job.uid, args, workflowId: ttlAfterFinishedWorkflowId(job.namespace, job.name) }, event, mergeTtlAfterFinishedEvents);
  };

  cache.watch(RESOURCES.jobs, JOB_TTL_FIELDS, {
    onEvent(ev) {
      // a deleted Job's workflow finds out by its live read; nothing to send
      if (ev.type === 'deleted') return;
      const job = jobTtlView(ev.obj);
      if (!wantsTtlWorkflow(job)) return;
      // a list (the first, or after a gap) re-sends every Job due for cleanup: a workflow lost or
      // ended early is brought back
      if (ev.source === 'watch' && ev.type === 'updated') {
        // Every earlier view that wanted a workflow was sent (each list sends them all, each watch
        // event sends what timing would see differently), so one the same for timing as the last
        // state means status churn on a finished Job, which costs nothing.
        const before = jobTtlView(ev.old);
        if (wantsTtlWorkflow(before) && sameForTtl(before, job)) return;
      }
      queue(job);
    },
  });

  return {};
}
