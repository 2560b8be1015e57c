import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { type LoopState, OBJECT_EVENT_SIGNAL, STATE_QUERY } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { DATA_CONVERTER, ZLIB_ENCODING, unpackZlibPayload } from '../../workers/payload-codec';
import { projectWorkflowBundle } from '../support/shared-workflow-bundle';
import { SILENT_SINKS, eventually, recordingStubs, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The loops whose state comes only from signals carry the signals pending at their history
 * ceiling into the next run (ObjectLoop.carries), and that run folds them before its first
 * reconcile. For each, on the dev server and from a history recorded from a real run: the
 * recorded run's input and the signals it had folded when it first called an activity. One run
 * gets them as signals, as the watch sends them; another gets them as its input's carriedSignals,
 * as a continued run does; a third gets neither. The first two must ask the same first
 * activities, and the third other ones (or none): the carried signals are what the run acts on. A
 * workflow that carries nothing (its `carries` left out) starts as the third does, and fails here.
 */

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payload = temporal.api.common.v1.IPayload;
const EventType = temporal.api.enums.v1.EventType;
const dir = path.join(__dirname, '..', 'replay', 'histories');

/** One history per loop that carries its signals, and the loop's controller (its task queue's last part). */
const CASES: Array<[file: string, controller: string]> = [
  ['taint-eviction-countdown-0', 'taint-eviction'],
  ['nodelifecycle-zones-0', 'nodelifecycle'],
  ['attachdetach-move-1', 'attachdetach'],
  ['clusterrole-aggregation-edit-0', 'clusterrole-aggregation'],
  ['root-ca-repair-0', 'root-ca-cert-publisher'],
  ['disruption-drain-0', 'disruption'],
  ['gc-item-0', 'garbagecollector'],
];

const decode = (p: Payload): unknown => {
  const enc = p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString() : '';
  return defaultPayloadConverter.fromPayload(enc === ZLIB_ENCODING ? unpackZlibPayload(p.data!) : (p as never));
};

interface Recorded {
  workflowType: string;
  input: Record<string, unknown>;
  /** the object signals folded before the first activity */
  signals: unknown[];
  /** every activity type the history calls, local ones included */
  activityTypes: string[];
}

function recorded(file: string): Recorded {
  const events: HistoryEvent[] = historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, `${file}.json`), 'utf8'))).events ?? [];
  const started = events[0].workflowExecutionStartedEventAttributes!;
  const isActivity = (e: HistoryEvent) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    || (e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED && e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  const first = events.findIndex(isActivity);
  const signals = events.slice(0, first)
    .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === OBJECT_EVENT_SIGNAL)
    .map((e) => decode(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]));
  const activityTypes = new Set<string>(['reportThrown']);
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) activityTypes.add(scheduled);
    const local = e.markerRecordedEventAttributes?.markerName === 'core_local_activity' ? e.markerRecordedEventAttributes.details?.data?.payloads?.[0] : undefined;
    const type = local ? (decode(local) as { activityType?: string }).activityType : undefined;
    if (type) activityTypes.add(type);
  }
  return { workflowType: started.workflowType!.name!, input: decode(started.input!.payloads![0]) as Record<string, unknown>, signals, activityTypes: [...activityTypes] };
}

const cases = CASES.map(([file, controller]) => ({ file, controller, ...recorded(file) }));

/** Activity calls by workflow ID (see recordingStubs) */
const calls = new Map<string, string[]>();
/** JSON with the clock's figures (times, durations in reasons) left out: the runs start moments apart */
const timeless = (v: unknown) => JSON.stringify(v ?? null).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T').replace(/\d{4,}/g, 'N');
const activities = recordingStubs(cases.flatMap((c) => c.activityTypes), calls, (type, req) => `${type} ${timeless(req)}`);

// the suite's own worker polls another queue: these runs are started, and their signals sent,
// before a worker polls theirs, so each run's first task holds every signal it is sent
const env = workflowEnvPerSuite({ taskQueue: `idle-${randomUUID()}`, workflowsPath: require.resolve('../../workflows'), activities: {} });

test.each(cases.map((c) => [c.file, c] as const))('%s: a run given its signals as carriedSignals acts on them as the run sent them does', async (_file, c) => {
  expect(c.signals.length).toBeGreaterThan(0);
  const client = env().client;
  // the controller's own queue: a run on any other moves there at its first turn with nothing pending
  const taskQueue = controllerTaskQueue(`carried-${randomUUID()}`, c.controller);
  const runs = {
    signalled: `${c.file}/signalled/${randomUUID()}`,
    carried: `${c.file}/carried/${randomUUID()}`,
    bare: `${c.file}/bare/${randomUUID()}`,
  };
  const signalled = await client.workflow.start(c.workflowType, { taskQueue, workflowId: runs.signalled, args: [c.input] });
  for (const s of c.signals) await signalled.signal(OBJECT_EVENT_SIGNAL, s);
  const carried = await client.workflow.start(c.workflowType, { taskQueue, workflowId: runs.carried, args: [{ ...c.input, carriedSignals: c.signals }] });
  const bare = await client.workflow.start(c.workflowType, { taskQueue, workflowId: runs.bare, args: [c.input] });

  const worker = await Worker.create({
    connection: env().nativeConnection, namespace: env().namespace ?? 'default', taskQueue,
    workflowBundle: await projectWorkflowBundle(), activities, sinks: SILENT_SINKS, dataConverter: DATA_CONVERTER,
    shutdownGraceTime: '100ms', // see recordingStubs
  });
  /** what a user of the run sees of it: the activities it asked, and its `state` view */
  const seen = async (h: WorkflowHandle) => ({
    asked: [...(calls.get(h.workflowId) ?? [])].sort(),
    view: timeless(await h.query<LoopState>(STATE_QUERY).then((q) => q.view, () => 'no view')),
  });
  const [fromSignals, fromCarried, fromNothing] = await worker.runUntil(async () => {
    // the first reconcile has asked an activity, or ended without one (a timer to wait for)
    await eventually('the signalled run reconciles', async () => !!calls.get(runs.signalled)?.length || (await signalled.query<LoopState>(STATE_QUERY)).reconciles > 0);
    // the first reconcile's other calls (some go out in parallel) come within moments
    await new Promise((r) => setTimeout(r, 1500));
    const views = [await seen(signalled), await seen(carried), await seen(bare)];
    for (const h of [signalled, carried, bare]) await h.terminate('test done').catch(() => undefined);
    return views;
  });
  expect(fromCarried).toEqual(fromSignals);
  expect(fromNothing).not.toEqual(fromSignals);
}, 60_000);
