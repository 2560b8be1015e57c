import { randomBytes, randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { SA_KIND, SA_LAST_ERROR, SA_NAME, SA_UID } from '../../workflows/search-attributes';
import type { ThrownReport } from '../../workflows/runtime/api-rejections';
import { LoopState, OBJECT_EVENT_SIGNAL, PAUSE_SIGNAL, RESUME_SIGNAL, STATE_QUERY, backoffMs } from '../../workflows/runtime/object-loop';
import { asCodeFailure } from '../../activities/kube/failures';
import { eventually, workflowEnvPerSuite } from '../support/workflow-env';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { PROBE_CONTROLLER, ProbeActivities, ProbeEvent, ProbeInput, ProbeObservation, objectLoopProbeWorkflow } from '../support/workflows/object-loop';

/*
 * runObjectLoop and the identity helper on a real Temporal server: the dev server of the temporal
 * CLI binary the local stack builds (no time skipping there, hence loop tunings in milliseconds).
 * The probe workflow (test/support/workflows/object-loop.ts) observes a fake object through an
 * in-process activity; `world` is that object, `calls` every observation in order.
 */

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

// the controller's own queue, as the manager runs it (a run on any other queue moves there first)
const taskQueue = controllerTaskQueue(`object-loop-${randomUUID()}`, PROBE_CONTROLLER);
const world = new Map<string, ProbeObservation>();
const calls: { name: string; runUid?: string; applied: string[]; at: number }[] = [];
const thrownReports: ThrownReport[] = [];

const activities: ProbeActivities = {
  async observeProbe(req) {
    calls.push({ ...req, applied: [...req.applied], at: Date.now() });
    const seen = world.get(req.name) ?? {};
    if (seen.activityThrows) throw asCodeFailure(new TypeError(seen.activityThrows));
    if (seen.holdMs) await new Promise((r) => setTimeout(r, seen.holdMs));
    return seen;
  },
  async reportThrown(req) {
    thrownReports.push(req);
  },
};

const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../support/workflows/object-loop'), activities });

function start(name: string, input: Omit<ProbeInput, 'name'>): Promise<WorkflowHandleWithFirstExecutionRunId<typeof objectLoopProbeWorkflow>> {
  return env().client.workflow.start(objectLoopProbeWorkflow, {
    taskQueue,
    workflowId: `probe/${name}`,
    args: [{ name, ...input }],
  });
}

const signalEvent = (h: WorkflowHandle, note: string) => h.signal<[ProbeEvent]>(OBJECT_EVENT_SIGNAL, { note });
const state = (h: WorkflowHandle) => h.query<LoopState>(STATE_QUERY);
const callsOf = (name: string) => calls.filter((c) => c.name === name);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The probe's state once its run has continued as new (generation 1 or later). */
const continuedRun = (h: WorkflowHandle, timeoutMs?: number) => eventually('a continued run', async () => {
  const s = await state(h);
  return typeof s.view?.generation === 'number' && s.view.generation >= 1 ? s : undefined;
}, timeoutMs);

/** Ends the probe's current run the way a deleted object does, and waits for the chain of runs to complete. */
async function finish(h: WorkflowHandle, name: string): Promise<void> {
  world.delete(name);
  await signalEvent(h, 'deleted');
  await h.result();
}

async function historyOf(workflowId: string, runId: string): Promise<HistoryEvent[]> {
  return (await env().client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

const ofType = (events: HistoryEvent[], t: temporal.api.enums.v1.EventType) => events.filter((e) => e.eventType === t);

/** The patch IDs a history's markers record. */
const patchesIn = (events: HistoryEvent[]) => ofType(events, EventType.EVENT_TYPE_MARKER_RECORDED)
  .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
  .map((e) => defaultPayloadConverter.fromPayload<{ id: string }>(e.markerRecordedEventAttributes!.details!['patch-data'].payloads![0]).id);

describe('runObjectLoop on the Temporal dev server', () => {
  test('a failed reconcile backs off, doubling from backoffBaseMs up to backoffMaxMs, and a success ends it', async () => {
    const name = 'backoff';
    const tuning = { backoffBaseMs: 100, backoffMaxMs: 400, resyncMs: 3_600_000 };
    world.set(name, { uid: 'u-backoff', fail: 'the API said no' });
    const h = await start(name, { uid: 'u-backoff', tuning });

    // the first reconcile and four retries: waits of 100, 200, 400, 400 ms (the dev server fires
    // timers on a one-second tick, so each takes about a second of wall time)
    await eventually('five failed reconciles', () => callsOf(name).length >= 5);
    const failing = await state(h);
    expect(failing.consecutiveFailures).toBeGreaterThanOrEqual(4);
    expect(failing.lastError?.message).toBe('the API said no');
    expect((await h.describe()).typedSearchAttributes.get(SA_LAST_ERROR)).toBe('the API said no');

    world.set(name, { uid: 'u-backoff' });
    const healed = await eventually('a successful reconcile', async () => {
      const s = await state(h);
      return s.consecutiveFailures === 0 && s.reconciles > failing.reconciles ? s : undefined;
    });
    expect(healed.lastError).toBeUndefined();
    expect(healed.lastReconcile?.outcome).toBe('success');
    // the published error goes with the success
    expect((await h.describe()).typedSearchAttributes.get(SA_LAST_ERROR)).toBeUndefined();

    const failures = healed.reconciles - 1;
    await finish(h, name);

    // The waits are the loop's timers, exact in the history: one per failure, then the resync.
    const timers = ofType(await historyOf(h.workflowId, h.firstExecutionRunId), EventType.EVENT_TYPE_TIMER_STARTED)
      .map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    const expected = Array.from({ length: failures }, (_, i) => backoffMs({ ...tuning, maxHistoryEvents: 10_000, maxHistoryBytes: 1 << 30, idleHistoryEvents: 10_000, settleMs: 0, maxRunAgeMs: 3_600_000 }, i + 1));
    expect(expected.slice(0, 4)).toEqual([100, 200, 400, 400]);
    expect(timers).toEqual([...expected, 3_600_000]);
    // and the retries really waited that long
    const at = callsOf(name).map((c) => c.at);
    for (let i = 1; i <= failures; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(expected[i - 1] - 5);
  });

  test('signal-driven reconciles keep one resync timer; a requeue asked for before a signal still fires', async () => {
    const name = 'timers';
    world.set(name, { uid: 'u-timers' });
    const h = await start(name, { uid: 'u-timers', tuning: { resyncMs: 3_600_000 } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    for (let i = 1; i <= 3; i++) {
      await signalEvent(h, `e${i}`);
      await eventually(`reconcile ${i + 1}`, () => callsOf(name).length >= i + 1);
    }
    // a requeue in 1.5 s, then a signal before it: the signal's reconcile asks for nothing, the requeue still comes
    world.set(name, { uid: 'u-timers', requeueMs: 1500 });
    await signalEvent(h, 'requeue');
    await eventually('the requeueing reconcile', () => callsOf(name).length >= 5);
    world.set(name, { uid: 'u-timers' });
    await signalEvent(h, 'quiet');
    await eventually('the signal\'s reconcile', () => callsOf(name).length >= 6);
    await eventually('the requeue firing all the same', () => callsOf(name).length >= 7, 10_000);
    // the reconcile it brought was told the timer's own due time, the floor of the workflow's clock then
    expect((await state(h)).view?.wakes).toEqual(['0']);
    await finish(h, name);

    const events = await historyOf(h.workflowId, h.firstExecutionRunId);
    const started = ofType(events, EventType.EVENT_TYPE_TIMER_STARTED).map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    // one resync timer for every signal-driven turn, one for the requeue; none ever cancelled
    expect(started).toEqual([3_600_000, 1500]);
    expect(ofType(events, EventType.EVENT_TYPE_TIMER_CANCELED)).toHaveLength(0);
    expect(ofType(events, EventType.EVENT_TYPE_TIMER_FIRED)).toHaveLength(1);
  });

  test('an episode that finishes while signals are pending reconciles them first; a quiet one just ends', async () => {
    const name = 'episode';
    world.set(name, { uid: 'u-episode', done: true, holdMs: 1500 });
    const h = await start(name, { uid: 'u-episode', episode: true });
    await eventually('the first observation', async () => callsOf(name).length === 1);
    // arrives while the reconcile that will say `finished` is still observing
    await signalEvent(h, 'late');
    await h.result();
    expect(callsOf(name).map((c) => c.applied)).toEqual([[], ['late']]);
    // the drain's patch is asked, and recorded, only where signals were pending at the finish
    const markers = (events: HistoryEvent[]) => ofType(events, EventType.EVENT_TYPE_MARKER_RECORDED)
      .filter((e) => Object.values(e.markerRecordedEventAttributes?.details ?? {})
        .some((d) => (d.payloads ?? []).some((p) => Buffer.from(p.data ?? []).toString('utf8').includes('probe-drains-before-finish')))).length;
    expect(markers(await historyOf(h.workflowId, h.firstExecutionRunId))).toBe(1);

    const quiet = 'episode-quiet';
    world.set(quiet, { uid: 'u-quiet', done: true });
    const q = await start(quiet, { uid: 'u-quiet', episode: true });
    await q.result();
    expect(callsOf(quiet)).toHaveLength(1);
    expect(markers(await historyOf(q.workflowId, q.firstExecutionRunId))).toBe(0);
  });

  test('a paused object keeps its events and applies them, in order, on resume', async () => {
    const name = 'pause';
    world.set(name, { uid: 'u-pause' });
    const h = await start(name, { uid: 'u-pause', tuning: { resyncMs: 3_600_000 } });
    await eventually('the first reconcile', () => callsOf(name).length === 1);

    await h.signal(PAUSE_SIGNAL, { reason: 'incident 42' });
    await eventually('the pause', async () => (await state(h)).paused);
    for (const note of ['a', 'b', 'c']) await signalEvent(h, note);
    await eventually('three pending events', async () => (await state(h)).pendingSignals === 3);
    await sleep(1000);

    const paused = await state(h);
    expect(callsOf(name)).toHaveLength(1); // nothing reconciled while paused
    expect(paused.paused?.reason).toBe('incident 42');
    expect(paused.pendingSignals).toBe(3);
    expect((await h.describe()).memo?.Paused).toMatch(/incident 42$/);

    await h.signal(RESUME_SIGNAL);
    await eventually('the reconcile after resume', () => callsOf(name).length === 2);
    expect(callsOf(name)[1].applied).toEqual(['a', 'b', 'c']);
    const resumed = await eventually('the state after resume', async () => {
      const s = await state(h);
      return s.reconciles === 2 ? s : undefined;
    });
    expect(resumed.paused).toBeUndefined();
    expect(resumed.pendingSignals).toBe(0);
    expect((await h.describe()).memo?.Paused ?? null).toBeNull();

    // a resume with nothing pending still reconciles: anything may have changed meanwhile
    await h.signal(PAUSE_SIGNAL);
    await eventually('the second pause', async () => (await state(h)).paused);
    await h.signal(RESUME_SIGNAL);
    await eventually('the reconcile after the second resume', () => callsOf(name).length === 3);
    expect(callsOf(name)[2].applied).toEqual(['a', 'b', 'c']);

    await finish(h, name);
  });

  test('a run whose history passes maxHistoryEvents continues as new with its state', async () => {
    const name = 'long';
    const maxHistoryEvents = 40;
    world.set(name, { uid: 'u-long' });
    // a resync every 100 ms writes about ten events a round
    const h = await start(name, { uid: 'u-long', tuning: { resyncMs: 100, maxHistoryEvents } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    await signalEvent(h, 'a');
    await signalEvent(h, 'b');

    const next = await continuedRun(h);
    expect(next.runId).not.toBe(h.firstExecutionRunId);
    expect(next.view?.applied).toEqual(['a', 'b']);
    expect(next.view?.uid).toBe('u-long');

    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    expect(first.length).toBeGreaterThanOrEqual(maxHistoryEvents);
    const last = first[first.length - 1];
    expect(last.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    const carried = defaultPayloadConverter.fromPayload<ProbeInput>(last.workflowExecutionContinuedAsNewEventAttributes!.input!.payloads![0]);
    expect(carried).toMatchObject({ name, uid: 'u-long', applied: ['a', 'b'], generation: 1 });
    await finish(h, name);
  });

  test('a run whose history passes maxHistoryBytes continues as new with its state, far short of maxHistoryEvents', async () => {
    const name = 'heavy';
    const maxHistoryBytes = 64 * 1024;
    world.set(name, { uid: 'u-heavy' });
    const h = await start(name, { uid: 'u-heavy', tuning: { resyncMs: 3_600_000, maxHistoryEvents: 10_000, idleHistoryEvents: 10_000, maxHistoryBytes } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    // three signals of 30 KiB of incompressible text each (the codec compresses past 128 KiB only)
    const ballast = () => randomBytes(15 * 1024).toString('hex');
    for (const note of ['a', 'b', 'c']) {
      await h.signal<[ProbeEvent]>(OBJECT_EVENT_SIGNAL, { note, ballast: ballast() });
      await eventually(`${note} reconciled`, () => callsOf(name).some((c) => c.applied.includes(note)));
    }

    const next = await continuedRun(h);
    expect(next.view?.applied).toEqual(['a', 'b', 'c']);
    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    expect(first.length).toBeLessThan(100);
    expect(first[first.length - 1].eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // the bound's patch is recorded in the run that met it
    expect(patchesIn(first)).toContain('history-bytes-bound');
    expect((await state(h)).historyBytes).toBeLessThan(maxHistoryBytes);
    await finish(h, name);
  });

  test('a converged run continues as new at a quiet resync once past idleHistoryEvents, in the resync\'s own task; a requeue or a failure is not a resync', async () => {
    const name = 'idle';
    const idleHistoryEvents = 30;
    world.set(name, { uid: 'u-idle' });
    const h = await start(name, { uid: 'u-idle', tuning: { resyncMs: 100, maxHistoryEvents: 10_000, idleHistoryEvents } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    await signalEvent(h, 'a');
    const next = await continuedRun(h);
    expect(next.view?.applied).toEqual(['a']);

    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    const types = first.map((e) => e.eventType);
    // past the threshold, far short of maxHistoryEvents, and ended by the first quiet wake there
    expect(first.length).toBeGreaterThanOrEqual(idleHistoryEvents);
    expect(first.length).toBeLessThan(idleHistoryEvents + 15);
    expect(types[types.length - 1]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // the run ends in the resync's own turn: after the last timer fired, its reconcile (the
    // observation) and the continue-as-new, with no event and no new timer between
    const wake = types.slice(types.lastIndexOf(EventType.EVENT_TYPE_TIMER_FIRED));
    expect(wake).toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    expect(wake).not.toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect(wake).not.toContain(EventType.EVENT_TYPE_TIMER_STARTED);
    const patches = patchesIn(first);
    expect(patches).toContain('idle-continue-as-new');

    // a run that keeps asking for a requeue is never quiet: it grows past the threshold in one run
    const busy = 'idle-requeue';
    world.set(busy, { uid: 'u-busy', requeueMs: 50 });
    const hb = await start(busy, { uid: 'u-busy', tuning: { resyncMs: 100, maxHistoryEvents: 10_000, idleHistoryEvents } });
    // nor is one that keeps failing, though its retries are timer wakes too
    const failing = 'idle-failing';
    world.set(failing, { uid: 'u-failing', fail: 'refused' });
    const hf = await start(failing, { uid: 'u-failing', tuning: { resyncMs: 100, backoffBaseMs: 20, backoffMaxMs: 40, maxHistoryEvents: 10_000, idleHistoryEvents } });
    for (const other of [hb, hf]) {
      await eventually('twice the threshold in one run', async () => (await state(other)).historyLength >= 2 * idleHistoryEvents);
      expect((await state(other)).view?.generation).toBe(0);
    }
    await finish(hb, busy);
    await finish(hf, failing);
    await finish(h, name);
  });

  test('a converged run past idleHistoryEvents continues as new settleMs after its last reconcile, in a timer task of its own; events meanwhile put it off', async () => {
    const name = 'settle';
    const settleMs = 1500;
    const tuning = { resyncMs: 3_600_000, maxHistoryEvents: 10_000, idleHistoryEvents: 10, settleMs };
    world.set(name, { uid: 'u-settle' });
    const h = await start(name, { uid: 'u-settle', tuning });
    // under the threshold (and far below it) runs never settle early
    const short = 'settle-short';
    world.set(short, { uid: 'u-short' });
    const hs = await start(short, { uid: 'u-short', tuning: { ...tuning, idleHistoryEvents: 10_000 } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    // events a third of settleMs apart: each reconcile starts the quiet over
    const notes = ['a', 'b', 'c', 'd', 'e'];
    for (const note of notes) {
      await signalEvent(h, note);
      await eventually(`${note} reconciled`, () => callsOf(name).some((c) => c.applied.includes(note)));
      expect((await state(h)).view?.generation).toBe(0);
      await sleep(settleMs / 3);
    }
    const lastReconcileAt = callsOf(name)[callsOf(name).length - 1].at;
    const settling = await state(h);
    expect(settling.settlesAt).toBeDefined();
    const next = await continuedRun(h, 10_000);
    expect(next.view?.applied).toEqual(notes);
    expect(next.historyLength).toBeLessThan(15);

    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    const types = first.map((e) => e.eventType);
    expect(types[types.length - 1]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // the settle timer's own task: after the last timer fired, no observation and no event
    const wake = types.slice(types.lastIndexOf(EventType.EVENT_TYPE_TIMER_FIRED));
    expect(wake).not.toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    expect(wake).not.toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    const ended = first[first.length - 1].eventTime!;
    expect(tsToMs(ended) - lastReconcileAt).toBeGreaterThanOrEqual(settleMs - 50);
    // one settle timer at a time: the resync's and at most one per settleMs of churn besides
    const timers = ofType(first, EventType.EVENT_TYPE_TIMER_STARTED).map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    expect(timers[0]).toBe(3_600_000);
    expect(timers.slice(1).every((ms) => ms <= settleMs)).toBe(true);
    expect(timers.length).toBeLessThanOrEqual(1 + Math.ceil((notes.length * settleMs) / 3 / settleMs) + 1);
    expect(patchesIn(first)).toContain('settled-continue-as-new');

    const shortState = await state(hs);
    expect(shortState.view?.generation).toBe(0);
    expect(shortState.settlesAt).toBeUndefined();
    await finish(hs, short);
    await finish(h, name);
  });

  test('a resync wake is told to the loop (onResync), a requeue or a backoff wake is not', async () => {
    const name = 'resyncs';
    world.set(name, { uid: 'u-resyncs', requeueMs: 300 });
    const h = await start(name, { uid: 'u-resyncs', tuning: { resyncMs: 1000, backoffBaseMs: 300, backoffMaxMs: 300 } });
    // requeue wakes only: no resync
    await eventually('three requeued reconciles', () => callsOf(name).length >= 3, 10_000);
    expect((await state(h)).view?.resyncs).toBe(0);
    // a failure's backoff is no resync either
    world.set(name, { uid: 'u-resyncs', fail: 'no' });
    await eventually('two failed reconciles', async () => (await state(h)).consecutiveFailures >= 2, 10_000);
    expect((await state(h)).view?.resyncs).toBe(0);
    // converged: the next wake is the resync's
    world.set(name, { uid: 'u-resyncs' });
    await eventually('a resync told to the loop', async () => ((await state(h)).view?.resyncs as number) >= 1, 15_000);
    await finish(h, name);
  });

  test('a requeue timer that fires after a later reconcile asked only for the resync reconciles, and is no resync', async () => {
    const name = 'early-timer';
    world.set(name, { uid: 'u-early', requeueMs: 1500 });
    // a quiet resync past one event would continue as new: the early wake must not look like one
    const h = await start(name, { uid: 'u-early', tuning: { resyncMs: 3_600_000, idleHistoryEvents: 1 } });
    await eventually('the first reconcile, which asks for a requeue', () => callsOf(name).length >= 1);
    // converged before the requeue is due: the signal's reconcile asks for nothing but the resync
    world.set(name, { uid: 'u-early' });
    await signalEvent(h, 'converged');
    await eventually('the signal reconciled', () => callsOf(name).length >= 2);
    // the requeue's timer is kept, so it still fires and reconciles ...
    await eventually('the requeue timer reconciled', () => callsOf(name).length >= 3, 10_000);
    const s = await state(h);
    // ... but it was not the resync: no re-read told to the loop, no idle continue-as-new
    expect(s.view?.resyncs).toBe(0);
    expect(s.view?.generation).toBe(0);
    expect(patchesIn(await historyOf(h.workflowId, h.firstExecutionRunId))).toContain('early-timer-no-resync');
    await finish(h, name);
  });

  test('a run past maxRunAgeMs wakes at its age, though its resync is far off, and continues as new with its state', async () => {
    const name = 'old';
    const maxRunAgeMs = 2000;
    world.set(name, { uid: 'u-old' });
    const h = await start(name, { uid: 'u-old', tuning: { resyncMs: 3_600_000, maxRunAgeMs } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    await signalEvent(h, 'a');
    const next = await continuedRun(h, 15_000);
    expect(next.view?.applied).toEqual(['a']);

    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    const types = first.map((e) => e.eventType);
    expect(types[types.length - 1]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // far short of any history threshold: the age ended it
    expect(first.length).toBeLessThan(60);
    // the resync timer, and one more to the run's age
    const timers = ofType(first, EventType.EVENT_TYPE_TIMER_STARTED).map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    expect(timers[0]).toBe(3_600_000);
    expect(timers).toHaveLength(2);
    expect(timers[1]).toBeLessThanOrEqual(maxRunAgeMs);
    const started = first[0].eventTime!;
    const ended = first[first.length - 1].eventTime!;
    expect(tsToMs(ended) - tsToMs(started)).toBeGreaterThanOrEqual(maxRunAgeMs);
    const patches = patchesIn(first);
    expect(patches).toContain('run-age-bound');
    await finish(h, name);
  });

  test('a loop whose next run re-reads continues as new in a timer\'s own task, with what it applied', async () => {
    const name = 'long-rereads';
    world.set(name, { uid: 'u-rereads' });
    const h = await start(name, { uid: 'u-rereads', rereads: true, tuning: { resyncMs: 100, maxHistoryEvents: 40 } });
    await eventually('the first reconcile', () => callsOf(name).length >= 1);
    await signalEvent(h, 'a');
    await signalEvent(h, 'b');
    const next = await continuedRun(h);
    expect(next.view?.applied).toEqual(['a', 'b']);

    // the closing task is the 1 ms timer's, after the reconcile's task: it runs no activity, so a
    // signal arriving while it runs (which makes the server refuse it) is far less likely
    const types = (await historyOf(h.workflowId, h.firstExecutionRunId)).map((e) => e.eventType);
    expect(types[types.length - 1]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    const lastTask = types.lastIndexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    expect(types.slice(lastTask)).toEqual([
      EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    ]);
    const before = types.slice(0, lastTask).filter((t) => t !== EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect(before[before.length - 1]).toBe(EventType.EVENT_TYPE_TIMER_FIRED);
    await finish(h, name);
  });

  test('under steady churn a run that carries signals continues as new at its ceiling with them pending, losing none; one that does not never continues', async () => {
    const maxHistoryEvents = 30;
    const ceiling = 2 * maxHistoryEvents;
    const runs = ['carries', 'carries-not'].map((name) => ({ name, carries: name === 'carries' }));
    const handles = await Promise.all(runs.map(async ({ name, carries }) => {
      // each reconcile takes a second and a signal comes every 50 ms or so: a turn with nothing
      // pending never comes
      world.set(name, { uid: `u-${name}`, holdMs: 1000 });
      return start(name, { uid: `u-${name}`, carries, tuning: { resyncMs: 3_600_000, maxHistoryEvents, idleHistoryEvents: 10_000 } });
    }));
    const sent: string[] = [];
    for (let i = 0; (await state(handles[0])).view?.generation !== 1 && i < 400; i++) {
      const note = `e${i}`;
      sent.push(note);
      await Promise.all(handles.map((h) => signalEvent(h, note)));
      await sleep(50);
    }
    // the other goes on under the same churn, well past the ceiling, still in its first run
    let other = await state(handles[1]);
    for (let i = 0; other.historyLength <= ceiling + 30 && other.view?.generation === 0 && i < 400; i++) {
      await signalEvent(handles[1], `more${i}`);
      await sleep(50);
      // the state asked now and then, not between every two signals: the churn must not pause
      if (i % 10 === 9) other = await state(handles[1]);
    }
    expect(other.view?.generation).toBe(0);
    expect(other.historyLength).toBeGreaterThan(ceiling + 30);
    const carried = await historyOf(handles[0].workflowId, handles[0].firstExecutionRunId);
    // the carrying run ended at its ceiling, its pending signals in the next run's input
    expect(carried[carried.length - 1].eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // at the first reconcile to end at or past it: a reconcile ends in the task that takes its
    // activity's result, and the history length that task reads is its started event's ID (how
    // far past the ceiling that is depends on how many signals came during the reconcile)
    const turnEnds = carried.flatMap((e, i) => (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
      ? [Number(carried.slice(i).find((t) => t.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)!.eventId)] : []));
    expect(turnEnds.filter((at) => at >= ceiling)).toEqual([turnEnds[turnEnds.length - 1]]);
    const input = defaultPayloadConverter.fromPayload<ProbeInput>(carried[carried.length - 1].workflowExecutionContinuedAsNewEventAttributes!.input!.payloads![0]);
    expect(input.carriedSignals?.length).toBeGreaterThan(0);
    expect(patchesIn(carried)).toContain('history-ceiling-carries');

    // the churn stops: the new run folds what was carried before its first reconcile, and nothing sent is lost
    await eventually('every sent event folded in the continued run', async () => {
      const applied = ((await state(handles[0])).view?.applied ?? []) as string[];
      return sent.every((n) => applied.includes(n));
    });
    // in the order sent: the carried ones before any that reached the new run itself
    const order = (((await state(handles[0])).view?.applied ?? []) as string[]).filter((n) => sent.includes(n)).map((n) => Number(n.slice(1)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // all of them at once: the first reconcile to see one of them sees every one
    const carriedNotes = input.carriedSignals!.map((e) => e.note);
    const firstWithCarried = callsOf('carries').find((c) => c.applied.includes(carriedNotes[0]));
    expect(carriedNotes.filter((n) => !firstWithCarried!.applied.includes(n))).toEqual([]);
    for (const [i, h] of handles.entries()) await finish(h, runs[i].name);
  });

  test('a new UID under the same name continues as new for it, with none of the old state', async () => {
    const name = 'reborn';
    world.set(name, { uid: 'u-old' });
    // started by a signal, the run does not know its UID: it learns it from the first observation
    const h = await start(name, { publish: true, tuning: { resyncMs: 3_600_000 } });
    await eventually('the UID learned', async () => (await h.describe()).typedSearchAttributes.get(SA_UID) === 'u-old');
    await signalEvent(h, 'x');
    await eventually('the event applied', () => callsOf(name).some((c) => c.applied.includes('x')));

    world.set(name, { uid: 'u-new' });
    await signalEvent(h, 'y');
    const fresh = await eventually('the new object\'s run', () => callsOf(name).find((c) => c.runUid === 'u-new'));
    expect(fresh.applied).toEqual([]);

    const s = await eventually('the new run\'s state', async () => {
      const st = await state(h);
      return st.runId !== h.firstExecutionRunId && st.reconciles >= 1 ? st : undefined;
    });
    expect(s.view).toMatchObject({ uid: 'u-new', applied: [], generation: 0 });
    // handing over is not a failure
    expect(s.consecutiveFailures).toBe(0);
    // publish() points KcmUid at the new object (the run inherited the old one's attributes)
    expect((await h.describe()).typedSearchAttributes.get(SA_UID)).toBe('u-new');

    const first = await historyOf(h.workflowId, h.firstExecutionRunId);
    const last = first[first.length - 1];
    expect(last.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    expect(defaultPayloadConverter.fromPayload(last.workflowExecutionContinuedAsNewEventAttributes!.input!.payloads![0])).toEqual({
      name, uid: 'u-new', publish: true, tuning: { resyncMs: 3_600_000 },
    });
    // one of our upserts in the old run: KcmUid when it was learned; no KcmLastError (the hand-over
    // did not count as a failed reconcile). patched() adds TemporalChangeVersion upserts of its own.
    const upserted = ofType(first, EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
      .flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes!.indexedFields!))
      .filter((k) => k.startsWith('Kcm'));
    expect(upserted).toEqual(['KcmUid']);

    await finish(h, name);
  });

  test('a throw in apply or reconcile backs off that object alone, reported once per error, and no workflow task fails', async () => {
    const tuning = { backoffBaseMs: 100, backoffMaxMs: 200, resyncMs: 3_600_000 };
    const begin = (name: string) => {
      world.set(name, { uid: `u-${name}` });
      // the object the run is about, as the informer names it when it starts a run
      return env().client.workflow.start(objectLoopProbeWorkflow, {
        taskQueue,
        workflowId: `probe/${name}`,
        args: [{ name, uid: `u-${name}`, tuning }],
        typedSearchAttributes: [{ key: SA_KIND, value: 'Probe' }, { key: SA_NAME, value: name }],
      });
    };
    const poisoned = await begin('poisoned');
    const healthy = await begin('healthy');
    await eventually('both reconciled once', () => callsOf('poisoned').length >= 1 && callsOf('healthy').length >= 1);

    // an event the loop cannot fold in: dropped, the turn failed without a reconcile, retried after a backoff
    await poisoned.signal<[ProbeEvent]>(OBJECT_EVENT_SIGNAL, { note: 'bad', throws: 'cannot read properties of undefined' });
    const failing = await eventually('the event\'s failure recorded', async () => {
      const s = await state(poisoned);
      return s.consecutiveFailures >= 1 ? s : undefined;
    });
    expect(failing.lastError?.message).toBe('folding an event in threw: cannot read properties of undefined');
    expect(failing.view?.resyncs).toBe(1); // told to forget its view: the event is lost to it
    // the other object goes on meanwhile
    await signalEvent(healthy, 'fine');
    await eventually('the healthy object reconciled', () => callsOf('healthy').some((c) => c.applied.includes('fine')));
    // the backoff's wake reconciles, and succeeds
    await eventually('the poisoned object reconciled after its backoff', async () => (await state(poisoned)).consecutiveFailures === 0);
    expect(callsOf('poisoned')).toHaveLength(2);

    // a reconcile whose own code throws: a backed-off retry every time, one report for the same error
    world.set('poisoned', { uid: 'u-poisoned', throws: 'x.map is not a function' });
    await signalEvent(poisoned, 'again');
    await eventually('four throwing reconciles', () => callsOf('poisoned').length >= 6);
    const throwing = await state(poisoned);
    expect(throwing.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(throwing.lastError?.message).toBe('x.map is not a function');
    expect((await poisoned.describe()).typedSearchAttributes.get(SA_LAST_ERROR)).toBe('x.map is not a function');
    // a failed call is not a throw of the code: it gets no such report
    world.set('poisoned', { uid: 'u-poisoned', fail: 'the API said no' });
    await eventually('a failed call', async () => (await state(poisoned)).lastError?.message === 'the API said no');
    // an activity's own code throwing is reported, as the code's throw it is
    world.set('poisoned', { uid: 'u-poisoned', activityThrows: 'y is not iterable' });
    await eventually('an activity that threw', async () => (await state(poisoned)).lastError?.message === 'observeProbe: TypeError: y is not iterable');
    world.set('poisoned', { uid: 'u-poisoned' });
    await eventually('healed', async () => (await state(poisoned)).consecutiveFailures === 0);
    expect((await poisoned.describe()).typedSearchAttributes.get(SA_LAST_ERROR)).toBeUndefined();

    expect(thrownReports.map((r) => [r.object.kind, r.object.name, r.controller, r.stage, r.message])).toEqual([
      ['Probe', 'poisoned', PROBE_CONTROLLER, 'event', 'folding an event in threw: cannot read properties of undefined'],
      ['Probe', 'poisoned', PROBE_CONTROLLER, 'reconcile', 'x.map is not a function'],
      ['Probe', 'poisoned', PROBE_CONTROLLER, 'activity', 'observeProbe: TypeError: y is not iterable'],
    ]);
    await finish(poisoned, 'poisoned');
    await finish(healthy, 'healthy');
    // not one workflow task failed: before, the throwing apply failed every retry of its task
    const events = await historyOf(poisoned.workflowId, poisoned.firstExecutionRunId);
    expect(ofType(events, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toHaveLength(0);
  });

  test('a handed-over run points KcmUid at its own object even when the workflow never calls publish()', async () => {
    const name = 'reborn-unpublished';
    world.set(name, { uid: 'u-1' });
    const h = await start(name, { tuning: { resyncMs: 3_600_000 } });
    await eventually('the UID learned', async () => (await h.describe()).typedSearchAttributes.get(SA_UID) === 'u-1');
    world.set(name, { uid: 'u-2' });
    await signalEvent(h, 'z');
    await eventually('the new object\'s run', () => callsOf(name).find((c) => c.runUid === 'u-2'));
    // continue-as-new carries the predecessor's attributes over; the runtime's identity replaces them
    await eventually('KcmUid of the new object', async () => (await h.describe()).typedSearchAttributes.get(SA_UID) === 'u-2');
    await finish(h, name);
  });
});
