import { proxyActivities } from '@temporalio/workflow';
import type { CsrSigningActivities, SignCsrResult } from '../../activities/csrsigning/activities';
import { CsrSeen, type CsrEvent, type CsrWorkflowInput } from '../common/csr';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER } from './logic';

export function csrSigningWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
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
export async function csrSigningWorkflow(input: CsrWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const seen = new CsrSeen(input);
  let last: SignCsrResult | undefined;
  let attempts = 0;

  const id = objectIdentity<typeof csrSigningWorkflow>(input.uid, (next) => [seen.inputFor(next)]);

  async function reconcile(): Promise<ReconcileResult> {
    const { csr, deleted } = seen;
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

  await runObjectLoop<CsrEvent>({
    controller: CONTROLLER,
    tuning,
    apply: (e) => seen.apply(e),
    reconcile,
    describe: () => ({
      csr: input.name,
      uid: seen.uid,
      signerName: seen.csr?.signerName,
      usages: seen.csr?.usages ?? [],
      outcome: last?.outcome,
      serialNumber: last?.serialNumber,
      notBefore: last?.notBefore,
      notAfter: last?.notAfter,
      message: last?.message,
      attempts,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [seen.inputFor(seen.uid)],
  });
}
