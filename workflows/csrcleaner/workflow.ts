import { log, proxyActivities } from '@temporalio/workflow';
import type { CsrCleanerActivities } from '../../activities/csrcleaner/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { API_WRITES } from '../runtime/activity-options';
import { CONTROLLER, CsrDecision, CsrView, RULE_MESSAGES, decideCsr } from './logic';

/**
 * What the watch sends: the CSR as the cleaner's rules see it, whenever that changed; or that the
 * CSR (this UID) was deleted before any deadline passed, so its run ends instead of waiting.
 */
export type CsrCleanerEvent = { csr: CsrView } | { deletedUid: string };

export interface CsrCleanerWorkflowInput {
  name: string;
  /** the CSR this run times; one recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function csrCleanerWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

/** The latest wins: each view is the whole CSR as the rules see it, and a deletion is final for its UID. */
export function mergeCsrCleanerEvents(_earlier: CsrCleanerEvent, later: CsrCleanerEvent): CsrCleanerEvent {
  return later;
}

const io = proxyActivities<CsrCleanerActivities>(API_WRITES);

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One CSR: waits on a durable timer until the first of the cleaner's deadlines passes, reads the
 * CSR live, and deletes it if a rule still says so. A CSR that changes meanwhile (approved, denied,
 * issued) is timed again from the new view; the run ends once the CSR is deleted or gone, or when
 * no rule can ever apply to it.
 */
export async function csrCleanerWorkflow(input: CsrCleanerWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let csr: CsrView | undefined;
  let signalled = false;
  /** the watch saw this run's CSR deleted */
  let deleted = false;
  let last: CsrDecision | undefined;
  let outcome = '';

  const id = objectIdentity<typeof csrCleanerWorkflow>(input.uid, (next) => [{ ...input, uid: next }]);

  async function reconcile(): Promise<ReconcileResult> {
    const byWatch = signalled;
    signalled = false;
    if (deleted) {
      outcome = 'deleted';
      return { finished: true };
    }
    // woken by a timer other than a deadline (resync, backoff), the view may be stale: read it
    if (!csr || (!byWatch && decideCsr(csr, Date.now()).kind !== 'delete')) {
      csr = await io.readCsrForCleanup({ name: input.name });
      if (!csr) {
        outcome = 'gone';
        return { finished: true };
      }
    }
    await id.handOverIfNew(csr.uid);

    last = decideCsr(csr, Date.now());
    if (last.kind === 'keep') {
      outcome = 'no rule applies';
      return { finished: true };
    }
    if (last.kind === 'wait') return { requeueAfterMs: last.ms };

    // the watch may be behind (a condition updated since): decide again on the CSR as it is now
    const fresh = await io.readCsrForCleanup({ name: input.name });
    if (!fresh) {
      outcome = 'gone';
      return { finished: true };
    }
    csr = fresh;
    await id.handOverIfNew(fresh.uid);
    last = decideCsr(fresh, Date.now());
    if (last.kind === 'keep') {
      outcome = 'no rule applies';
      return { finished: true };
    }
    if (last.kind === 'wait') return { requeueAfterMs: last.ms };

    const r = await io.deleteCsr({
      name: input.name, uid: fresh.uid, rule: last.rule, dueAt: iso(last.afterMs),
      reason: RULE_MESSAGES[last.rule],
    });
    if (r.outcome === 'replaced') {
      log.info('CSR replaced under its name; timing the newcomer', { csr: input.name });
      csr = undefined;
      return { requeueAfterMs: 0 };
    }
    outcome = r.outcome;
    return { finished: true };
  }

  await runObjectLoop<CsrCleanerEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if ('deletedUid' in e) {
        // a deletion of another CSR under the name (this run's successor) changes nothing here
        if (e.deletedUid === (csr?.uid ?? input.uid)) deleted = true;
        return;
      }
      csr = e.csr;
      deleted = false;
      signalled = true;
    },
    reconcile,
    describe: () => ({
      csr: input.name,
      uid: csr?.uid ?? input.uid,
      decision: last?.kind,
      rule: last && last.kind !== 'keep' ? last.rule : undefined,
      dueAt: last && last.kind !== 'keep' ? iso(last.afterMs) : undefined,
      outcome: outcome || undefined,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [{ ...input, uid: csr?.uid ?? input.uid }],
  });
}
