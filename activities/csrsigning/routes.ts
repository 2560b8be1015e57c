import { CONTROLLER, needsSigning, signerPlan, startedSigners } from '../../workflows/csrsigning/logic';
import {
  csrSigningWorkflow,
  csrSigningWorkflowId,
  mergeCsrSigningEvents,
  type CsrSigningEvent,
  type CsrSigningWorkflowInput,
} from '../../workflows/csrsigning/workflow';
import type { CsrFacts } from '../../workflows/certificates/csr';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { CSR_FACT_FIELDS, csrFacts } from '../certificates/csr';
import { signingFilesOf } from './settings';

/**
 * Routes of the CSR signer: an approved CSR, neither denied nor failed nor issued, for one of the
 * signers this deployment's flags start, gets a workflow; every other CSR starts nothing.
 */
export function csrSigningRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  const signers = startedSigners(signerPlan(signingFilesOf(input.flags)));
  if (signers.length === 0) return undefined;

  const queue = (csr: Pick<CsrFacts, 'name' | 'uid'>, event: CsrSigningEvent) => {
    const args: CsrSigningWorkflowInput = { name: csr.name, uid: csr.uid, tuning: input.tuning };
    signaller.queue({
      controller: CONTROLLER, workflow: csrSigningWorkflow, kind: 'CertificateSigningRequest', namespace: '', name: csr.name,
      uid: csr.uid, args, workflowId: csrSigningWorkflowId(csr.name),
    }, event, mergeCsrSigningEvents);
  };

  cache.watch(RESOURCES.certificateSigningRequests, CSR_FACT_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const gone = csrFacts(ev.old);
        if (needsSigning(gone, signers)) queue(gone, { deletedUid: gone.uid });
        return;
      }
      const csr = csrFacts(ev.obj);
      if (needsSigning(csr, signers)) queue(csr, { csr });
    },
  });

  return {};
}
