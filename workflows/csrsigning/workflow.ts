import { proxyActivities } from '@temporalio/workflow';
import type { CsrSigningActivities, SignCsrResult } from '../../activities/csrsigning/activities';
import type { CsrFacts } from '../certificates/csr';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER } from './logic';

/** What the watch sends: the CSR (approved, not yet issued) as the signer sees it, or that it was deleted. */
export type CsrSigningEvent = { csr: CsrFacts } | { deletedUid: string };

export interface CsrSigningWorkflowInput {
  name: string;
  uid: string;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: the CSR as last seen */
  csr?: CsrFacts;
}

export function csrSigningWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

export function mergeCsrSigningEvents(_earlier: CsrSigningEvent, later: CsrSigningEvent): CsrSigningEvent {
  return later;
}

// the activity heartbeats after each API call: a replica killed mid-signing is noticed in seconds,
// and the retry re-reads the CSR (finding the certificate if the killed one had written it)
const io = proxyActivities<CsrSigningActivities>(apiBatches('5 seconds'));

/**
 * One approved CSR for a signer this deployment runs: one activity reads it, checks it as the
 * signer's rules say, and writes its certificate (or its Failed condition). A request that cannot
 * be signed (a bad signature, a CA that cannot be read or has expired) is tried again after a
 * backoff, as upstream requeues it. The run ends once the CSR is issued, failed, no longer
 * approved, or gone.
 */
export async function csrSigningWorkflow(input: CsrSigningWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let csr: CsrFacts | undefined = input.csr;
  let deleted = false;
  let last: SignCsrResult | undefined;
  let attempts = 0;

  const id = objectIdentity<typeof csrSigningWorkflow>(input.uid, (next) => [{ ...input, uid: next, csr: csr?.uid === next ? csr : undefined }]);

  async function reconcile(): Promise<ReconcileResult> {
    if (deleted) return { finished: true };
    if (!csr) return {};
    await id.handOverIfNew(csr.uid);
    attempts++;
    last = await io.signCsr({
      name: csr.name, uid: csr.uid, signerName: csr.signerName,
      reason: attempts === 1 ? `approved; signer ${csr.signerName}` : `attempt ${attempts}: ${last?.message ?? 'retry'}`,
    });
    if (last.outcome === 'rejected') return { failed: true, error: last.message ?? 'rejected' };
    return { finished: true };
  }

  await runObjectLoop<CsrSigningEvent>({
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
      usages: csr?.usages ?? [],
      outcome: last?.outcome,
      serialNumber: last?.serialNumber,
      notBefore: last?.notBefore,
      notAfter: last?.notAfter,
      message: last?.message,
      attempts,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [{ ...input, uid: csr?.uid ?? input.uid, ...(csr ? { csr } : {}) }],
  });
}
