import {
  ContinueAsNew,
  condition,
  continueAsNew,
  defineSignal,
  log,
  patched,
  proxySinks,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { KcmSinks, ReconcileOutcome } from './sinks';

/** Every per-object workflow receives informer events on this one signal name. */
export const OBJECT_EVENT_SIGNAL = 'kcm.objectEvent';

/** Knobs that tests turn down so timers and history limits are reached in seconds. */
export interface LoopTuning {
  /** periodic re-observation of an idle object, ms */
  resyncMs: number;
  /** first delay after a failed reconcile, doubled per consecutive failure */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** continue-as-new once history passes this many events (or when Temporal suggests it) */
  maxHistoryEvents: number;
}

export const DEFAULT_TUNING: LoopTuning = {
  resyncMs: 12 * 3600_000,
  backoffBaseMs: 1000,
  backoffMaxMs: 5 * 60_000,
  maxHistoryEvents: 10_000,
};

export interface ReconcileResult {
  /** the object is gone: the workflow ends */
  finished?: boolean;
  /** the reconcile could not finish its work; retry after a backoff */
  failed?: boolean;
  /** reconcile again after this long even if nothing happens (e.g. minReadySeconds) */
  requeueAfterMs?: number;
}

export interface ObjectLoop<Signal> {
  controller: string;
  tuning: LoopTuning;
  /** fold one signal into the workflow's view of the world; must not call activities */
  apply(signal: Signal): void;
  /** bring the world in line with the view; may call activities */
  reconcile(): Promise<ReconcileResult>;
  /** the arguments of the next run when history grows long */
  continueAsNewArgs(): unknown[];
}

export function backoffMs(tuning: LoopTuning, consecutiveFailures: number): number {
  if (consecutiveFailures <= 0) return 0;
  return Math.min(tuning.backoffMaxMs, tuning.backoffBaseMs * 2 ** Math.min(30, consecutiveFailures - 1));
}

const { kcm } = proxySinks<KcmSinks>();

/**
 * The loop every controller's per-object workflow runs: wait for signals or a timer, fold every
 * pending signal into state, reconcile once, repeat. A burst of events therefore costs one
 * reconcile, and a reconcile never overlaps another for the same object (one workflow per ID).
 */
export async function runObjectLoop<Signal>(loop: ObjectLoop<Signal>): Promise<void> {
  const pending: Signal[] = [];
  setHandler(defineSignal<[Signal]>(OBJECT_EVENT_SIGNAL), (s) => {
    pending.push(s);
  });

  let due = true; // the first reconcile runs at once
  let failures = 0;
  let waitMs = loop.tuning.resyncMs;
  for (;;) {
    const batch = pending.splice(0, pending.length);
    for (const s of batch) loop.apply(s);
    if (batch.length) kcm.signals(loop.controller, batch.length, Math.max(0, batch.length - 1));

    if (due || batch.length) {
      const started = Date.now();
      let outcome: ReconcileOutcome;
      let result: ReconcileResult;
      try {
        result = await loop.reconcile();
      } catch (err) {
        // A reconcile that found a new object under the name continues as new for it; that is
        // not a failure (before this patch it was caught here and retried forever).
        if (err instanceof ContinueAsNew && patched('continue-as-new-escapes-loop')) throw err;
        // An activity that exhausted its retries or was rejected: the object is left for a
        // backed-off retry; the workflow itself must not fail, or nothing would ever heal it.
        log.warn('reconcile failed', { error: String(err) });
        result = { failed: true };
      }
      if (result.finished) {
        kcm.reconciled(loop.controller, 'finished', Date.now() - started);
        return;
      }
      failures = result.failed ? failures + 1 : 0;
      outcome = result.failed ? 'error' : result.requeueAfterMs !== undefined ? 'requeue' : 'success';
      kcm.reconciled(loop.controller, outcome, Date.now() - started);
      waitMs = result.failed
        ? backoffMs(loop.tuning, failures)
        : Math.min(result.requeueAfterMs ?? loop.tuning.resyncMs, loop.tuning.resyncMs);
      due = false;
    }

    const info = workflowInfo();
    if (pending.length === 0 && (info.continueAsNewSuggested || info.historyLength >= loop.tuning.maxHistoryEvents)) {
      await continueAsNew<(...args: unknown[]) => Promise<void>>(...loop.continueAsNewArgs());
    }

    const signalled = await condition(() => pending.length > 0, waitMs);
    if (!signalled) due = true;
  }
}
