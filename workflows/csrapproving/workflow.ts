import { proxyActivities } from '@temporalio/workflow';
import type { CsrApprovingActivities } from '../../activities/csrapproving/activities';
import { CsrSeen, type CsrEvent, type CsrWorkflowInput } from '../common/csr';
import { API_WRITES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { APPROVAL_MESSAGES, CONTROLLER, isPending, notApprovedMessage, recognizedAs, type ApprovalKind } from './logic';

export function csrApprovingWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

const io = proxyActivities<CsrApprovingActivities>(API_WRITES);

/**
 * One pending kubelet client CSR: each recognizer that matches (selfnodeclient, then nodeclient)
 * gets a SubjectAccessReview as the CSR's requester; the first allowed one approves it. When none
 * is allowed the CSR is tried again after a backoff, as upstream requeues it. The run ends once
 * the CSR is approved, denied, issued or gone.
 */
export async function csrApprovingWorkflow(input: CsrWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const seen = new CsrSeen(input);
  let tried: ApprovalKind[] = [];
  let outcome = '';
  let approvedAs: ApprovalKind | undefined;

  const id = objectIdentity<typeof csrApprovingWorkflow>(input.uid, (next) => [seen.inputFor(next)]);

  async function reconcile(): Promise<ReconcileResult> {
    const { csr, deleted } = seen;
    if (deleted) {
      outcome = 'deleted';
      return { finished: true };
    }
    if (!csr) return {};
    await id.handOverIfNew(csr.uid);
    if (!isPending(csr)) {
      outcome = 'settled';
      return { finished: true };
    }
    const kinds = recognizedAs(csr);
    if (kinds.length === 0) {
      outcome = 'not recognized';
      return { finished: true };
    }
    tried = [];
    for (const kind of kinds) {
      tried.push(kind);
      const review = await io.reviewCsrAccess({ name: csr.name, uid: csr.uid, kind, reason: `recognized as a ${kind} request` });
      if (review.outcome === 'gone' || review.outcome === 'replaced' || review.outcome === 'settled') {
        outcome = review.outcome;
        return { finished: true };
      }
      if (review.outcome !== 'allowed') continue;
      const r = await io.approveCsr({
        name: csr.name, uid: csr.uid, kind, message: APPROVAL_MESSAGES[kind],
        reason: `subject access review allowed ${csr.username} to create certificatesigningrequests/${kind}`,
      });
      approvedAs = r.outcome === 'approved' ? kind : undefined;
      outcome = r.outcome;
      return { finished: true };
    }
    outcome = 'not allowed';
    return { failed: true, error: notApprovedMessage(csr.name, tried) };
  }

  await runObjectLoop<CsrEvent>({
    controller: CONTROLLER,
    tuning,
    apply: (e) => seen.apply(e),
    reconcile,
    describe: () => ({
      csr: input.name,
      uid: seen.uid,
      signerName: seen.csr?.signerName,
      username: seen.csr?.username,
      recognizedAs: seen.csr ? recognizedAs(seen.csr) : [],
      tried,
      approvedAs,
      outcome: outcome || undefined,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [seen.inputFor(seen.uid)],
  });
}
