import { CONTROLLER, needsApproval } from '../../workflows/csrapproving/logic';
import {
  csrApprovingWorkflow,
  csrApprovingWorkflowId,
  mergeCsrApprovingEvents,
  type CsrApprovingEvent,
  type CsrApprovingWorkflowInput,
} from '../../workflows/csrapproving/workflow';
import type { CsrFacts } from '../../workflows/certificates/csr';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { CSR_FACT_FIELDS, csrFacts } from '../certificates/csr';

/**
 * Routes of the CSR approver. Upstream's handler sees every CSR and acts on pending kubelet
 * client requests only; here only those (pending, recognized by a recognizer) start a workflow,
 * so approved, denied, issued and foreign CSRs start nothing, at a relist either.
 */
export function csrApprovingRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (csr: Pick<CsrFacts, 'name' | 'uid'>, event: CsrApprovingEvent) => {
    const args: CsrApprovingWorkflowInput = { name: csr.name, uid: csr.uid, tuning: input.tuning };
    signaller.queue({
      controller: CONTROLLER, workflow: csrApprovingWorkflow, kind: 'CertificateSigningRequest', namespace: '', name: csr.name,
      uid: csr.uid, args, workflowId: csrApprovingWorkflowId(csr.name),
    }, event, mergeCsrApprovingEvents);
  };

  cache.watch(RESOURCES.certificateSigningRequests, CSR_FACT_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        // a run may be waiting out a backoff for it: end it
        const gone = csrFacts(ev.old);
        if (needsApproval(gone)) queue(gone, { deletedUid: gone.uid });
        return;
      }
      const csr = csrFacts(ev.obj);
      if (needsApproval(csr)) queue(csr, { csr });
    },
  });

  return {};
}
