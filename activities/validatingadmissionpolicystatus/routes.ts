import { CONTROLLER, checkDue } from '../../workflows/validatingadmissionpolicystatus/logic';
import {
  mergeVapStatusEvents,
  vapStatusWorkflow,
  vapStatusWorkflowId,
  type VapStatusEvent,
  type VapStatusWorkflowInput,
} from '../../workflows/validatingadmissionpolicystatus/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { VAP_STATUS_FIELDS, policyView } from './activities';
import type { PolicyView } from '../../workflows/validatingadmissionpolicystatus/logic';

/**
 * Routes of the ValidatingAdmissionPolicy status controller. Upstream queues every added or
 * updated policy and skips those whose status observes their generation; here only a policy with
 * a check due gets a signal (a run is started for it), so settled policies cost nothing. A policy
 * deleted while due tells its run to end.
 */
export function vapStatusRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (p: PolicyView, event: VapStatusEvent) => {
    const args: VapStatusWorkflowInput = { name: p.name, uid: p.uid, generation: p.generation, tuning: input.tuning };
    signaller.queue({
      controller: CONTROLLER, workflow: vapStatusWorkflow, kind: 'ValidatingAdmissionPolicy', namespace: '', name: p.name,
      uid: p.uid, args, workflowId: vapStatusWorkflowId(p.name),
    }, event, mergeVapStatusEvents);
  };

  cache.watch(RESOURCES.validatingAdmissionPolicies, VAP_STATUS_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const gone = policyView(ev.old);
        if (checkDue(gone)) queue(gone, { deletedUid: gone.uid });
        return;
      }
      const p = policyView(ev.obj);
      if (checkDue(p)) queue(p, { policy: p });
    },
  });

  return {};
}
