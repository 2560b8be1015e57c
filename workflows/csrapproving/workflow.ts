import { proxyActivities } from '@temporalio/workflow';
import type { CsrApprovingActivities } from '../../activities/csrapproving/activities';
import type { CsrFacts } from '../certificates/csr';
import { API_WRITES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { APPROVAL_MESSAGES, CONTROLLER, isPending, notApprovedMessage, recognizedAs, type ApprovalKind } from './logic';

/** What the watch sends: the CSR as the approver sees it (a pending, recognized one), or that it was deleted. */
export type CsrApprovingEvent = { csr: CsrFacts } | { deletedUid: string };

export interface CsrApprovingWorkflowInput {
  name: string;
  uid: string;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: the CSR as last seen */
  csr?: CsrFacts;
}

export function csrApprovingWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

/** The latest view wins: a CSR's spec never changes, its status only moves on. */
export function mergeCsrApprovingEvents(_earlier: CsrApprovingEvent, later: CsrApprovingEvent): CsrApprovingEvent {
  return later;
}

const io = proxyActivities<CsrApprovingActivities>(API_WRITES);

/**
 * One pending kubelet client CSR: each recognizer that matches (selfnodeclient, then nodeclient)
 * gets a SubjectAccessReview as the CSR's requester; the first allowed one approves it. When none
 * is allowed the CSR is tried again after a backoff, as upstream requeues it. The run ends once
 * the CSR is approved, denied, issued or gone.
 */
export async function csrApprovingWorkflow(input: CsrApprovingWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let csr: CsrFacts | undefined = input.csr;
  let deleted = false;
  let tried: ApprovalKind[] = [];
  let outcome = '';
  let approvedAs: ApprovalKind | undefined;

  const id = objectIdentity<typeof csrApprovingWorkflow>(input.uid, (next) => [{ ...input, uid: next, csr: csr?.uid === next ? csr : undefined }]);

  async function reconcile(): Promise<ReconcileResult> {
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

  await runObjectLoop<CsrApprovingEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if ('deletedUid' in e) {
        if (e.deletedUid === (csr?.uid ?? input.uid)) deleted = true;
        return;
      }
      csr = e.csr;
      deleted = false;
    },
    reconcile,
    describe: () => ({
      csr: input.name,
      uid: csr?.uid ?? input.uid,
      signerName: csr?.signerName,
      username: csr?.username,
      recognizedAs: csr ? recognizedAs(csr) : [],
      tried,
      approvedAs,
      outcome: outcome || undefined,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [{ ...input, uid: csr?.uid ?? input.uid, ...(csr ? { csr } : {}) }],
  });
}
