import { CONTROLLER, csrDeadlines, decideCsr, sameForCleaner, type CsrView } from '../../workflows/csrcleaner/logic';
import {
  csrCleanerWorkflow,
  csrCleanerWorkflowId,
  mergeCsrCleanerEvents,
  type CsrCleanerEvent,
  type CsrCleanerWorkflowInput,
} from '../../workflows/csrcleaner/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { CSR_CLEANER_FIELDS, csrCleanerView } from './activities';

/**
 * Routes of the CSR cleaner. Upstream lists every CSR once an hour; here each CSR that some rule
 * will ever apply to (nearly all: a CSR without conditions expires a day after its creation) gets
 * a workflow holding a timer to its first deadline, and a change the rules see re-times it.
 * A CSR deleted while its run still waits (no deadline passed yet) ends that run; one deleted
 * after a deadline (by this cleaner, mostly) sends nothing, as its run has ended or will on its
 * live read.
 */
export function csrCleanerRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (csr: CsrView, event: CsrCleanerEvent) => {
    const args: CsrCleanerWorkflowInput = { name: csr.name, uid: csr.uid, tuning: input.tuning };
    signaller.queue({
      controller: CONTROLLER, workflow: csrCleanerWorkflow, kind: 'CertificateSigningRequest', namespace: '', name: csr.name,
      uid: csr.uid, args, workflowId: csrCleanerWorkflowId(csr.name),
    }, event, mergeCsrCleanerEvents);
  };

  cache.watch(RESOURCES.certificateSigningRequests, CSR_CLEANER_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const gone = csrCleanerView(ev.old);
        if (decideCsr(gone, Date.now()).kind === 'wait') queue(gone, { deletedUid: gone.uid });
        return;
      }
      const csr = csrCleanerView(ev.obj);
      if (csrDeadlines(csr).length === 0) return;
      // a list (the first, or after a gap) sends every CSR again: a lost run is brought back
      if (ev.source === 'watch' && ev.type === 'updated') {
        const before = csrCleanerView(ev.old);
        if (csrDeadlines(before).length > 0 && sameForCleaner(before, csr)) return;
      }
      queue(csr, { csr });
    },
  });

  return {};
}
