import {
  ContinueAsNew,
  TemporalFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  makeContinueAsNewFunc,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { SA_LAST_ERROR } from '../search-attributes';
import { activityCodeThrew, authorizerRefusalIn, runObject, type ForbiddenReport, type RunObject, type ThrowStage, type ThrownReport } from './api-rejections';
import { taskQueueToMoveTo } from './task-queues';
import { SHADOW_WORKFLOW_ID_PREFIX } from './workflow-ids';
import { WakeTimers } from './wake-timers';
import type { KcmSinks, ReconcileOutcome } from './sinks';
import { isPatched } from './patches';

/** Every per-object workflow receives informer events on this one signal name. */
export const OBJECT_EVENT_SIGNAL = 'kcm.objectEvent';
/** The field of an object event saying how many watch events the informer merged into it, when more than one. */
export const FOLDED_FIELD = 'folded';
/** Stops reconciling one object (incident response); events are kept and applied on resume. */
export const PAUSE_SIGNAL = 'kcm.pause';
export const RESUME_SIGNAL = 'kcm.resume';
/** What the workflow currently believes, for `temporal workflow query --type state` and the CLI. */
export const STATE_QUERY = 'state';

export interface PauseRequest {
  /** why, in words, shown by the state query and the Web UI memo */
  reason?: string;
}

/** A controller's own account of its object: desired against observed, small and JSON-plain. */
export type ObjectView = Record<string, string | number | boolean | null | string[] | undefined>;

export interface LoopState {
  controller: string;
  workflowId: string;
  runId: string;
  paused?: { since: string; reason?: string };
  /** signals received but not yet folded in (all of them while paused) */
  pendingSignals: number;
  reconciles: number;
  consecutiveFailures: number;
  lastReconcile?: { at: string; outcome: ReconcileOutcome | 'finished'; durationMs: number };
  lastError?: { at: string; message: string };
  /** when the next reconcile happens if no event comes first (a requeue, backoff or resync timer) */
  nextWakeAt?: string;
  /** when this converged run continues as new if nothing happens first (LoopTuning.settleMs) */
  settlesAt?: string;
  historyLength: number;
  /** the run's history size in bytes, as of its last workflow task */
  historyBytes: number;
  view?: ObjectView;
}

/** The error text kept in the LastError memo and KcmLastError search attribute. */
const MAX_ERROR_LENGTH = 500;

/** Knobs that tests turn down so timers and history limits are reached in seconds. */
export interface LoopTuning {
  /** periodic re-observation of an idle object, ms */
  resyncMs: number;
  /** first delay after a failed reconcile, doubled per consecutive failure */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** continue-as-new once history passes this many events (or when Temporal suggests it) */
  maxHistoryEvents: number;
  /**
   * continue-as-new once history passes this many bytes: Temporal terminates a run at 50 MiB
   * whatever its event count, and a server configured never to suggest continue-as-new would let a
   * run of large signals (snapshots of big objects) get there well before maxHistoryEvents
   */
  maxHistoryBytes: number;
  /**
   * a converged run continues as new at a quiet resync (the resync timer's turn, with no event and
   * nothing left to do) once its history passes this many events, so that a replica that wakes it
   * cold replays a few dozen events rather than every resync since it started
   */
  idleHistoryEvents: number;
  /**
   * a converged run past idleHistoryEvents that stays quiet this long after its last reconcile
   * continues as new then, in a timer's task of its own, without waiting for the resync: a cold
   * wake in the hours before that resync (a pod of a settled ReplicaSet deleted, after the run was
   * evicted from the workflow cache) replays the few events of the new run's start, not the whole
   * history of the changes that settled; 0 turns it off
   */
  settleMs: number;
  /**
   * a run continues as new at its first turn with nothing pending once it is this old, however
   * short its history and however far its next wake: the patch policy (docs/ARCHITECTURE.md,
   * "Patch policy") counts on no run outliving a release by more than this
   */
  maxRunAgeMs: number;
}

/**
 * What a run uses where its input names no value. The manager passes its own (`run`'s defaults,
 * `--max-history-events` 1,000 among them) to every run it starts; these stay as runs of earlier
 * builds were started with, so that their histories replay to the same decisions.
 */
export const DEFAULT_TUNING: LoopTuning = {
  resyncMs: 12 * 3600_000,
  backoffBaseMs: 1000,
  backoffMaxMs: 5 * 60_000,
  maxHistoryEvents: 10_000,
  // a fifth of Temporal's hard limit, past its 10 MiB warning
  maxHistoryBytes: 10 * 1024 * 1024,
  // runs of earlier builds had no such knob; they take this one, and their old turns replay as
  // they were recorded, since the continue-as-new it brings is behind a patch
  idleHistoryEvents: 100,
  // runs of earlier builds settle too, once they converge under this code (behind a patch)
  settleMs: 15 * 60_000,
  // runs of earlier builds are bounded too, once they pass it under this code (behind a patch)
  maxRunAgeMs: 7 * 24 * 3600_000,
};

export interface ReconcileResult {
  /** the object is gone: the workflow ends */
  finished?: boolean;
  /** the reconcile could not finish its work; retry after a backoff */
  failed?: boolean;
  /** with failed: what went wrong, in words (shown by the state query and the LastError memo) */
  error?: string;
  /** reconcile again after this long even if nothing happens (e.g. minReadySeconds) */
  requeueAfterMs?: number;
}

export interface ObjectLoop<Signal> {
  controller: string;
  tuning: LoopTuning;
  /**
   * fold one signal into the workflow's view of the world; must not call activities. One that
   * throws loses that signal: the turn fails (backed off, reported) without a reconcile, and
   * onResync is called so that a loop able to forget its view reads the world afresh.
   */
  apply(signal: Signal): void;
  /** bring the world in line with the view; may call activities */
  reconcile(): Promise<ReconcileResult>;
  /** the arguments of the next run when history grows long */
  continueAsNewArgs(): unknown[];
  /**
   * This run's input, for a loop whose signals cross a continue-as-new: the next run's input
   * (continueAsNewArgs()'s first argument, an object) takes those not yet folded in as
   * `carriedSignals`, and this run folds its own input's before its first reconcile. Such a loop
   * continues as new at its history ceiling (historyCeiling) even with signals pending. One that
   * does not waits for a turn with none, which under steady churn may never come before Temporal
   * terminates the run at 51,200 events or 50 MiB; a loop whose next run re-reads the world needs
   * none (rereadsOnNewRun). The workflow's hand-over to a new object under the name (identity.ts)
   * must not pass its input's carried signals on: they are the old object's.
   */
  carries?: CarriedSignals<Signal>;
  /** what the `state` query reports of the object (desired vs observed, pending work) */
  describe?(): ObjectView;
  /**
   * For episode workflows (started by the watch only when a write is due, ended once it is done):
   * a reconcile that says `finished` while signals are already pending does not end the run; they
   * are folded in and reconciled first. A signal that reaches Temporal while the last workflow
   * task runs makes the server refuse the completion, and the replayed task sees it here, so an
   * event sent just as an episode ends is never dropped.
   */
  drainBeforeFinish?: boolean | (() => boolean);
  /**
   * Told, before the reconcile a wake timer brings, when that timer was due. A timer never fires
   * before it is due, so the workflow's clock is at least that; but a replica that picks up a run
   * it did not have cached (after a kill -9, or an eviction) was seen to get the timer's task with
   * Date.now() still at the previous task's time (TS SDK 1.x), and a countdown read from that
   * clock is started over instead of ending (the taint eviction e2e saw a toleration run 20 s
   * late). Workflows that time deadlines take this as a floor for their clock.
   */
  onWake?(dueAt: number): void;
  /**
   * The resync's timer fired (the loop reconciles next): a loop whose view is built from events
   * can forget it here, so that the resync reads the world afresh as upstream's informer resync
   * hands its handlers the cache's objects. A signal gate may hold events that changed nothing the
   * workflow would act on; the resync is where its view catches up with them.
   */
  onResync?(): void;
  /**
   * A new run's first reconcile reads its object and everything it decides on from the API again,
   * and carries only what continueAsNewArgs returns. Such a loop continues as new in a task of its
   * own (see runObjectLoop), with signals that came meanwhile folded in first rather than waited
   * out: the next run's read supersedes them. A loop that learns anything only from signals must
   * not set this.
   */
  rereadsOnNewRun?: boolean;
  /**
   * Drop what the run believes because of its own writes (pods it created, pods it deleted, a
   * status it wrote) so that the next reconcile reads the world again. A --shadow run calls it
   * after every reconcile: its writes were dry runs, the world is as the cluster's own manager
   * left it, and a belief in a write that never happened would make every later decision differ.
   * A loop that re-reads everything on every reconcile needs none.
   */
  reread?(): void;
}

/** The next-run input field that carries a run's unfolded signals (see ObjectLoop.carries). */
export interface CarriedSignals<Signal> {
  carriedSignals?: Signal[];
}

/**
 * Where a run continues as new even with signals pending, if its loop carries them: twice its
 * continue-as-new bounds, and at most four fifths of Temporal's limits (51,200 events, 50 MiB).
 */
export function historyCeiling(tuning: LoopTuning): { events: number; bytes: number } {
  return { events: Math.min(2 * tuning.maxHistoryEvents, 40_960), bytes: Math.min(2 * tuning.maxHistoryBytes, 40 * 1024 * 1024) };
}

/**
 * The most the carried signals may weigh as JSON: they travel in the next run's input, one payload,
 * which Temporal refuses past 2 MiB, and a refused continue-as-new fails its workflow task on every
 * retry. Heavier, the run waits for a turn with nothing pending, as a loop that carries none does.
 */
export const CARRIED_SIGNALS_MAX_BYTES = 512 * 1024;

export function backoffMs(tuning: LoopTuning, consecutiveFailures: number): number {
  if (consecutiveFailures <= 0) return 0;
  return Math.min(tuning.backoffMaxMs, tuning.backoffBaseMs * 2 ** Math.min(30, consecutiveFailures - 1));
}

const { kcm } = proxySinks<KcmSinks>();
/** registered on every controller's worker by the manager (activities/kube/failure-reports.ts) */
const reporter = proxyLocalActivities<{
  reportForbidden(r: ForbiddenReport): Promise<void>;
  reportThrown(r: ThrownReport): Promise<void>;
}>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } });

/**
 * Thrown by the controller's own workflow code (a TypeError, a parse error of its own), as against
 * a call it made that failed (an activity's failure, a cancellation: Temporal's failure types) or
 * the run handing over to a new one.
 */
function thrownByCode(err: unknown): boolean {
  return !(err instanceof TemporalFailure) && !(err instanceof ContinueAsNew);
}

/**
 * A report on the run's object (a local activity) once per streak of the same text, so that a
 * backed-off retry failing alike adds no history; reset() ends the streak. `patched` guards the
 * activity for histories recorded before it, and is asked only when a report would go out, so
 * only runs that meet the case record the patch. Best effort: the reconcile's own backoff goes on
 * either way.
 */
function streakReports<Extra = undefined>(patched: () => boolean, send: (object: RunObject, text: string, extra: Extra) => Promise<void>) {
  let last: string | undefined;
  return {
    async report(text: string, extra: Extra): Promise<void> {
      if (text === last) return;
      const object = runObject();
      if (!object || !patched()) return;
      last = text;
      try {
        await send(object, text, extra);
      } catch {
        // said in the run's KcmLastError all the same
      }
    },
    reset(): void {
      last = undefined;
    },
  };
}

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
  let paused: { since: string; reason?: string } | undefined;
  let pauseChanged = false;
  setHandler(defineSignal<[PauseRequest?]>(PAUSE_SIGNAL), (req) => {
    if (paused) return;
    paused = { since: iso(Date.now()), ...(req?.reason ? { reason: req.reason } : {}) };
    pauseChanged = true;
  });
  setHandler(defineSignal(RESUME_SIGNAL), () => {
    if (!paused) return;
    paused = undefined;
    pauseChanged = true;
  });

  let due = true; // the first reconcile runs at once
  /** the wait under way is the resync's: the last reconcile neither failed nor asked for a requeue */
  let waitIsResync = false;
  /** due because the resync timer fired, not because of an event, a requeue or a backoff */
  let resyncWake = false;
  let failures = 0;
  let waitMs = loop.tuning.resyncMs;
  let reconciles = 0;
  let lastReconcile: LoopState['lastReconcile'];
  let lastError: LoopState['lastError'];
  /** the error text last published as memo and search attribute */
  let publishedError: string | undefined;
  let nextWakeAt: number | undefined;
  const timers = new WakeTimers();
  /**
   * The next run's arguments: what the loop says must survive, and the signals given (none by
   * default). The carried signals of this run's own input are never passed on twice.
   */
  const nextRunArgs = (carry: Signal[] = []): unknown[] => {
    const args = loop.continueAsNewArgs();
    if (!loop.carries) return args;
    const { carriedSignals: _passed, ...first } = args[0] as CarriedSignals<Signal>;
    return [carry.length ? { ...first, carriedSignals: carry } : first, ...args.slice(1)];
  };
  /** ends this run for a new one carrying what the loop says must survive */
  const continueRun = () => continueAsNew<(...args: unknown[]) => Promise<void>>(...nextRunArgs());
  // before any signal this run got: setHandler above already delivered those the server buffered
  pending.unshift(...(loop.carries?.carriedSignals ?? []));
  /** when the last reconcile ended, if it left the object converged (its wait is the resync's) */
  let convergedAt: number | undefined;
  /** the settle timer's fire time while it runs (LoopTuning.settleMs) */
  let settleAt: number | undefined;
  let settleFired = false;
  /** the reconciles when the settle timer was started: one more since, and the run was not quiet */
  let reconcilesAtSettle = 0;
  /** when this run is old enough to continue as new at its next turn with nothing pending (see LoopTuning.maxRunAgeMs) */
  const runAgeLimitAt = workflowInfo().runStartTime.getTime() + loop.tuning.maxRunAgeMs;
  const shadowRun = workflowInfo().workflowId.startsWith(SHADOW_WORKFLOW_ID_PREFIX);
  // A right the manager or the controller's account lacks is not the object's fault: say so on the
  // object (a Warning Event, and a log line) besides KcmLastError, as upstream's controllers record
  // a refused write. Histories recorded before this have no such activity, hence the patch.
  const forbiddenReports = streakReports(() => isPatched('forbidden-reported'), (object, message) =>
    reporter.reportForbidden({ reason: 'the authorizer refused this controller a call (403): a Warning Event on the object', controller: loop.controller, object, message }));
  const reportIfForbidden = async (failure: string) => {
    const refusal = authorizerRefusalIn(failure);
    if (refusal) await forbiddenReports.report(refusal, undefined);
  };
  // The controller's own code threw on this object: say so on the object, as a Warning Event and
  // a log line, besides KcmLastError. Histories recorded before this had no such activity (a throw
  // in reconcile was only backed off), hence the patch.
  const thrownReports = streakReports<ThrowStage>(() => isPatched('thrown-reported'), (object, message, stage) =>
    reporter.reportThrown({ reason: 'the controller threw on this object: a Warning Event on it', controller: loop.controller, object, stage, message }));
  const reportThrown = async (stage: ThrowStage, message: string) => {
    kcm.thrown(loop.controller, stage);
    await thrownReports.report(message, stage);
  };
  /**
   * Folds signals into the loop's view. A signal whose apply throws is dropped (applying it again
   * would throw again: the code is deterministic), and the first such error is returned; before
   * this, the throw failed the workflow task, and every retry of the task replayed into it again.
   */
  const fold = (signals: Signal[]): { error: unknown } | undefined => {
    let failed: { error: unknown } | undefined;
    for (const s of signals) {
      try {
        loop.apply(s);
      } catch (error) {
        failed ??= { error };
      }
    }
    return failed;
  };

  setHandler(defineQuery<LoopState>(STATE_QUERY), () => {
    const info = workflowInfo();
    return {
      controller: loop.controller,
      workflowId: info.workflowId,
      runId: info.runId,
      ...(paused ? { paused } : {}),
      pendingSignals: pending.length,
      reconciles,
      consecutiveFailures: failures,
      ...(lastReconcile ? { lastReconcile } : {}),
      ...(lastError ? { lastError } : {}),
      ...(nextWakeAt !== undefined && !paused ? { nextWakeAt: iso(nextWakeAt) } : {}),
      ...(settleAt !== undefined && !paused ? { settlesAt: iso(settleAt) } : {}),
      historyLength: info.historyLength,
      historyBytes: info.historySize,
      ...(loop.describe ? { view: loop.describe() } : {}),
    };
  });

  // The memo and search attribute make a failing or paused object findable in the Web UI and by
  // `temporal workflow list --query "KcmLastError IS NOT NULL"`. Histories recorded before this
  // existed have no such commands, hence the patch.
  const publishError = (message: string | undefined) => {
    if (message === publishedError || !isPatched('last-error-published')) return;
    publishedError = message;
    upsertMemo({ LastError: message ?? null });
    upsertSearchAttributes([{ key: SA_LAST_ERROR, value: message ?? null }]);
  };

  // The Web UI shows these as the workflow's current details; a query serves them, so they cost no history events.
  const refreshDetails = () => {
    if (paused) setCurrentDetails(`**Paused** since ${paused.since}${paused.reason ? `: ${paused.reason}` : ''}. Events are kept and applied on resume.`);
    else if (lastError) setCurrentDetails(`**Failing** (${failures} in a row) since ${lastError.at}: ${lastError.message}`);
    else setCurrentDetails(lastReconcile ? `Reconciled ${lastReconcile.at} (${lastReconcile.outcome})${nextWakeAt !== undefined ? `; next look ${iso(nextWakeAt)}` : ''}` : '');
  };

  for (;;) {
    if (pauseChanged) {
      pauseChanged = false;
      // only a pause or resume signal gets here, so older histories never take this branch
      upsertMemo({ Paused: paused ? `since ${paused.since}${paused.reason ? `: ${paused.reason}` : ''}` : null });
      if (!paused) due = true; // catch up with everything that arrived meanwhile
    }
    refreshDetails();
    if (paused) {
      await condition(() => pauseChanged);
      continue;
    }

    const batch = pending.splice(0, pending.length);
    const foldFailure = fold(batch);
    if (batch.length) kcm.signals(loop.controller, batch.length, Math.max(0, batch.length - 1));

    /** this turn was the resync's, brought no event, and left the object converged */
    let quiet = false;
    if (due || batch.length) {
      const started = Date.now();
      let outcome: ReconcileOutcome;
      let result: ReconcileResult;
      let thrown: string | undefined;
      if (foldFailure) {
        // The view may lack the event, or hold part of it: nothing is planned from it now. The
        // backoff's wake reconciles, from a view read afresh where the loop can forget it.
        thrown = `folding an event in threw: ${errorText(foldFailure.error)}`;
        log.warn('folding an event in threw; the event is dropped', { error: thrown });
        loop.onResync?.();
        result = { failed: true };
        await reportThrown('event', clip(thrown));
      } else {
        try {
          result = await loop.reconcile();
        } catch (err) {
          // A reconcile that found a new object under the name continues as new for it; that is
          // not a failure (before this patch it was caught here and retried forever).
          if (err instanceof ContinueAsNew && isPatched('continue-as-new-escapes-loop')) throw err;
          // An activity that exhausted its retries or was rejected, or the controller's own code
          // throwing: the object is left for a backed-off retry; the workflow itself must not
          // fail, or nothing would ever heal it.
          log.warn('reconcile failed', { error: String(err) });
          thrown = errorText(err);
          result = { failed: true };
          if (thrownByCode(err)) await reportThrown('reconcile', clip(thrown));
          // an activity's own code threw (a final failure since workers/manager.ts made it one;
          // before, the same throw was retried as a passing one and took no report, so histories
          // recorded then never meet this)
          else if (activityCodeThrew(err)) await reportThrown('activity', clip(thrown));
        }
        reconciles++;
      }
      if (shadowRun && loop.reread && isPatched('shadow-rereads')) loop.reread();
      // a function (a patched() check) is asked only when signals are pending, so only a run that meets the case records it
      if (result.finished && !(pending.length > 0 && (typeof loop.drainBeforeFinish === 'function' ? loop.drainBeforeFinish() : loop.drainBeforeFinish))) {
        kcm.reconciled(loop.controller, 'finished', Date.now() - started);
        // a run that ends after failing must not leave KcmLastError on its closed record, or
        // `KcmLastError IS NOT NULL` lists it as stuck; runs before this ended with it set
        if (publishedError !== undefined && isPatched('finish-clears-last-error')) publishError(undefined);
        return;
      }
      // only runs that opted in get here with a finished result: reconcile again for what came meanwhile
      if (result.finished) result = {};
      failures = result.failed ? failures + 1 : 0;
      outcome = result.failed ? 'error' : result.requeueAfterMs !== undefined ? 'requeue' : 'success';
      kcm.reconciled(loop.controller, outcome, Date.now() - started);
      lastReconcile = { at: iso(started), outcome, durationMs: Date.now() - started };
      if (result.failed) {
        const message = clip(thrown ?? result.error ?? `${loop.controller}: the reconcile could not finish its work`);
        lastError = { at: iso(Date.now()), message };
        publishError(message);
        await reportIfForbidden(thrown ?? result.error ?? '');
      } else {
        lastError = undefined;
        forbiddenReports.reset();
        thrownReports.reset();
        if (publishedError !== undefined) publishError(undefined);
      }
      waitMs = result.failed
        ? backoffMs(loop.tuning, failures)
        : Math.min(result.requeueAfterMs ?? loop.tuning.resyncMs, loop.tuning.resyncMs);
      nextWakeAt = Date.now() + waitMs;
      waitIsResync = !result.failed && waitMs === loop.tuning.resyncMs;
      convergedAt = waitIsResync ? Date.now() : undefined;
      quiet = resyncWake && batch.length === 0 && waitIsResync;
      due = false;
      resyncWake = false;
      refreshDetails();
    }

    const info = workflowInfo();
    // A run past its age continues as new as a long one does. Runs before the bound never did;
    // the patch is asked only once the run is that old, so only such runs record it.
    const tooOld = Date.now() >= runAgeLimitAt && isPatched('run-age-bound');
    // Bytes as well as events: runs before the byte bound never counted them, so the patch is
    // asked only once a run is past it.
    const tooBig = info.historySize >= loop.tuning.maxHistoryBytes && isPatched('history-bytes-bound');
    const longHistory = info.continueAsNewSuggested || info.historyLength >= loop.tuning.maxHistoryEvents || tooOld || tooBig;
    // The server refuses a task that closes the run if a signal reached it while the task ran, and
    // the worker then drops the run and replays its whole history (about 0.6 ms of CPU an event)
    // before trying again. Decided below, continue-as-new shares its task with the reconcile's
    // writes, which under churn outlast the gap between two signals: the history-cut bench saw 27
    // of 30 refused (docs/BENCHMARKS.md, "Why more runs cost CPU under churn"). A 1 ms timer ends
    // this task instead and the run continues in the timer's task, which does nothing else. Only
    // for loops whose next run re-reads the world: the signals that come meanwhile are folded in
    // but not reconciled, and under steady churn some always come. Older histories have no timer.
    if (longHistory && loop.rereadsOnNewRun && !pauseChanged && isPatched('continue-as-new-in-timer-task')) {
      await sleep(1);
      if (!pauseChanged) {
        // the next run reads the world again: a signal that throws here loses nothing it needs
        if (fold(pending.splice(0, pending.length))) kcm.thrown(loop.controller, 'event');
        await continueRun();
      }
    }
    // At the ceiling, a loop that carries signals takes the pending ones into the next run rather
    // than wait for a turn with none. Runs before never did; the patch is asked only there.
    const ceiling = historyCeiling(loop.tuning);
    if (loop.carries && pending.length > 0 && !pauseChanged && (info.historyLength >= ceiling.events || info.historySize >= ceiling.bytes)
      && JSON.stringify(pending).length <= CARRIED_SIGNALS_MAX_BYTES && isPatched('history-ceiling-carries')) {
      await continueAsNew<(...args: unknown[]) => Promise<void>>(...nextRunArgs(pending.splice(0, pending.length)));
    }
    if (pending.length === 0 && !pauseChanged && longHistory) {
      await continueRun();
    }
    // A converged object's run otherwise grows by a resync turn (four or five events) each resync
    // period until maxHistoryEvents, and a replica that wakes it cold (after a kill -9, a failover
    // or an eviction from the workflow cache) replays every one, at about half a millisecond an
    // event. At a quiet resync the run carries nothing a signal is still to change, so it
    // continues as new there, in the resync's own task: no event is in flight for an idle object.
    // Older histories never did, hence the patch, asked only when the run is past the threshold.
    if (quiet && pending.length === 0 && !pauseChanged && info.historyLength >= loop.tuning.idleHistoryEvents && isPatched('idle-continue-as-new')) {
      await continueRun();
    }
    // A run a build before per-controller task queues started on the base queue moves to its
    // controller's queue at its first quiet turn on this code. Runs already there never call
    // patched(), and replays of older histories see it false, so they keep their commands.
    const moveTo = taskQueueToMoveTo(info.taskQueue, loop.controller);
    if (moveTo && pending.length === 0 && !pauseChanged && isPatched('controller-task-queue')) {
      await makeContinueAsNewFunc<(...args: unknown[]) => Promise<void>>({ taskQueue: moveTo })(...nextRunArgs());
    }

    // Histories before kept timers started one per wait and cancelled it when a signal came first.
    // A wake due now still waits on a (1 ms) timer, as `condition(fn, 0)` did: a reconcile that
    // keeps asking for another at once without calling an activity must not spin in one task.
    if (isPatched('kept-wake-timers')) {
      if (nextWakeAt !== undefined) timers.wakeAt(nextWakeAt, Date.now(), waitIsResync);
      // A converged run past idleHistoryEvents continues as new once it has been quiet for
      // settleMs, rather than at its resync hours later: a replica that wakes it cold meanwhile
      // (the run evicted from the workflow cache, a failover) then replays the new run's few
      // events, not every change that led here. One timer at a time, never cancelled: one that
      // fires after later reconciles is spent, and the next starts from the last of them. Older
      // histories had no such timer; the patch is asked only when one would start.
      if (convergedAt !== undefined && settleAt === undefined && !settleFired && pending.length === 0 && loop.tuning.settleMs > 0 && info.historyLength >= loop.tuning.idleHistoryEvents && isPatched('settled-continue-as-new')) {
        const at = convergedAt + loop.tuning.settleMs;
        settleAt = at;
        reconcilesAtSettle = reconciles;
        void sleep(Math.max(1, at - Date.now())).then(() => {
          settleAt = undefined;
          settleFired = true;
        }, () => undefined); // only a cancelled workflow cancels it
      }
      // a run that would sleep past its age wakes at it (its turn then reconciles and continues as
      // new); asked only when the next wake is past the age, so only such runs record the patch
      const wakeForAge = (nextWakeAt === undefined || nextWakeAt > runAgeLimitAt) && runAgeLimitAt > Date.now() && isPatched('run-age-bound');
      if (wakeForAge) timers.wakeAt(runAgeLimitAt, Date.now());
      await condition(() => pending.length > 0 || pauseChanged || timers.hasFired || settleFired);
      if (settleFired) {
        settleFired = false;
        // Quiet since it started: no reconcile, nothing pending, no other wake. The task is the
        // timer's and does nothing else, so no write of this run is in flight either.
        if (reconciles === reconcilesAtSettle && pending.length === 0 && !pauseChanged && !timers.hasFired) {
          await continueRun();
        }
      }
      const fired = timers.takeFired();
      if (fired) {
        due = true;
        // A kept timer asked for as a requeue (or the run's age) before the last reconcile, which
        // asked only for the resync, can fire first: that wake still reconciles, but it is not the
        // resync, so it must neither re-read the world nor end a busy run as idle (a churned
        // ReplicaSet continued as new every few seconds). Older histories took it for the
        // resync; the patch is asked only when such a timer fires.
        resyncWake = waitIsResync && (fired.resync || !isPatched('early-timer-no-resync'));
        loop.onWake?.(timers.firedDueAt);
        if (resyncWake) loop.onResync?.();
      }
      nextWakeAt = timers.nextAt;
      continue;
    }
    const signalled = await condition(() => pending.length > 0 || pauseChanged, waitMs);
    if (!signalled) {
      due = true;
      resyncWake = waitIsResync;
    } else if (pauseChanged && paused) {
      // the wait was cut short by a pause: on resume the object is reconciled anyway
      due = true;
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** An activity failure's root cause reads best: "createPods: pods is forbidden: ..." */
function errorText(err: unknown): string {
  let e: unknown = err;
  const parts: string[] = [];
  for (let depth = 0; e && depth < 4; depth++) {
    const x = e as { message?: string; activityType?: string; cause?: unknown };
    if (x.activityType) parts.push(x.activityType);
    if (!x.cause) parts.push(x.message ?? String(e));
    e = x.cause;
  }
  return parts.join(': ');
}

function clip(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
