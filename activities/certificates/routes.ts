import { latestCsrEvent, type CsrEvent, type CsrFacts, type CsrWorkflowInput } from '../../workflows/common/csr';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { CSR_FACT_FIELDS, csrFacts } from './csr';

/** One CSR controller's workflow, and which CSRs it acts on. */
export interface CsrRouteSpec {
  controller: string;
  workflow: (input: CsrWorkflowInput) => Promise<void>;
  workflowId(name: string): string;
  /** a CSR this controller has work for; every other one starts nothing, at a relist either */
  wanted(csr: CsrFacts): boolean;
}

/**
 * The approver's and the signer's routes: a CSR it has work for goes to its run (`<controller>/<name>`),
 * and the deletion of one goes too, so a run waiting out a backoff for it ends.
 */
export function registerCsrRoutes({ input, signaller, cache }: RouteContext, spec: CsrRouteSpec): RouteFamily {
  const queue = (csr: CsrFacts, event: CsrEvent) => {
    const args: CsrWorkflowInput = { name: csr.name, uid: csr.uid, tuning: input.tuning };
    signaller.queue({
      controller: spec.controller, workflow: spec.workflow, kind: 'CertificateSigningRequest', namespace: '', name: csr.name,
      uid: csr.uid, args, workflowId: spec.workflowId(csr.name),
    }, event, latestCsrEvent);
  };

  cache.watch(RESOURCES.certificateSigningRequests, CSR_FACT_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const gone = csrFacts(ev.old);
        if (spec.wanted(gone)) queue(gone, { deletedUid: gone.uid });
        return;
      }
      const csr = csrFacts(ev.obj);
      if (spec.wanted(csr)) queue(csr, { csr });
    },
  });

  return {};
}
