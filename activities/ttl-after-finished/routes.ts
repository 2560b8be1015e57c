import { CONTROLLER, JobTtlView, sameForTtl, wantsTtlWorkflow } from '../../workflows/ttl-after-finished/logic';
import type { TtlAfterFinishedEvent, TtlAfterFinishedWorkflowInput } from '../../workflows/ttl-after-finished/workflow';
import { mergeTtlAfterFinishedEvents, ttlAfterFinishedWorkflowId } from '../../workflows/ttl-after-finished/workflow';
import { jobTtlView } from './activities';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { ttlAfterFinishedWorkflow } from '../../workflows/ttl-after-finished/workflow';

export const JOBS_PATH = '/apis/batch/v1/jobs';

/**
 * Routes of the TTL-after-finished controller, as upstream's add and update handlers enqueue: a
 * Job that has finished, has a TTL and is not being deleted starts (or re-times) its workflow.
 * Nothing is sent for other Jobs, so no workflow is ever started just to end: a run whose Job was
 * deleted or lost its TTL finds out when its timer fires and it reads the Job live.
 */
export function ttlAfterFinishedRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  /** the last view sent per Job UID, so that status churn on a finished Job costs nothing */
  const sent = new Map<string, JobTtlView>();

  const queue = (job: JobTtlView) => {
    const args: TtlAfterFinishedWorkflowInput = { namespace: job.namespace, name: job.name, uid: job.uid, tuning: input.tuning };
    const event: TtlAfterFinishedEvent = { job };
    signaller.queue({ controller: CONTROLLER, workflow: ttlAfterFinishedWorkflow, kind: 'Job', namespace: job.namespace, name: job.name,
      uid: job.uid, args, workflowId: ttlAfterFinishedWorkflowId(job.namespace, job.name) }, event, mergeTtlAfterFinishedEvents);
  };

  const route = (job: JobTtlView, force: boolean) => {
    if (!wantsTtlWorkflow(job)) {
      sent.delete(job.uid);
      return;
    }
    const before = sent.get(job.uid);
    if (!force && before && sameForTtl(before, job)) return;
    sent.set(job.uid, job);
    queue(job);
  };

  const jobs: Handler = {
    relisted(objects) {
      // a relist re-sends every Job due for cleanup: a workflow lost or ended early is brought back
      sent.clear();
      for (const o of objects) route(jobTtlView(o), true);
    },
    event(type, o) {
      const job = jobTtlView(o);
      if (type === 'DELETED') sent.delete(job.uid);
      else route(job, false);
    },
  };

  return {
    handlers: new Map<string, Handler>([[JOBS_PATH, jobs]]),
    sizes: () => ({ ttlJobsTracked: sent.size }),
  };
}
