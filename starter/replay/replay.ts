import * as fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, InjectedSinks, Logger, ReplayError, Worker, WorkflowBundleWithSourceMap, bundleWorkflowCode } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { KcmSinks } from '../../workflows/runtime/sinks';
import { DATA_CONVERTER } from '../../workers/payload-codec';

/*
 * Replays one recorded workflow history against workflow code, the way a worker would after a
 * deploy, and when it does not fit, narrows the failure down to the first workflow task whose
 * commands the code no longer reproduces. Nothing here talks to the cluster; fetchHistory is the
 * only call that needs a Temporal server.
 */

type IHistory = temporal.api.history.v1.IHistory;
type IHistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

export interface TaskEvent {
  eventId: number;
  /** PascalCase, as the Web UI and Temporal core's messages spell it (`ActivityTaskScheduled`) */
  eventType: string;
  /** what the event records: activity type, timer, marker, signal name; never payload contents */
  summary: string;
}

export interface Divergence {
  eventId: number;
  eventType: string;
  /** what the history recorded at that point, i.e. what the code that wrote it did */
  detail: string;
}

export type ReplayReport =
  | { ok: true; workflowType: string; events: number }
  | {
      ok: false;
      workflowType: string;
      events: number;
      /** what the SDK reported for the whole history: what the code under test did instead */
      error: string;
      divergedAt?: Divergence;
      /** the first failing workflow task: what woke it, the task itself, and the commands it recorded */
      taskEvents?: TaskEvent[];
    };

export interface ReplayHistoryOptions {
  history: IHistory;
  /** histories do not carry their workflow ID, and our workflows derive their key from it */
  workflowId: string;
  /** module exporting the workflow functions; default: this project's workflows/index */
  workflowsPath?: string;
  /** receives the bundler's and replayer's messages; default: warnings and errors only */
  logger?: Logger;
  /** workflow code bundled already (see bundleWorkflows): many histories then cost one webpack run */
  bundle?: WorkflowBundleWithSourceMap;
}

/** Bundles the workflow code once, for replaying many histories against it (ReplayHistoryOptions.bundle). */
export function bundleWorkflows(opts: { workflowsPath?: string; logger?: Logger } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: opts.workflowsPath ?? defaultWorkflowsPath(), logger: opts.logger ?? new DefaultLogger('WARN') });
}

/** The workflows the manager registers, resolved from dist/ when compiled and from sources under ts-jest. */
export function defaultWorkflowsPath(): string {
  return require.resolve('../../workflows');
}

export class HistoryFileError extends Error {}

/**
 * Reads a history as `temporal workflow show -o json` writes it, or as the Web UI's Download
 * button saves it: `{ events: [...] }`; a bare array of events and a GetWorkflowExecutionHistory
 * response (`{ history: { events } }`) are accepted too.
 */
export function loadHistoryFile(file: string): IHistory {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new HistoryFileError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new HistoryFileError(`${file} is not JSON: ${(e as Error).message}`);
  }
  const events = eventsOf(json);
  if (!events) throw new HistoryFileError(`${file} holds no workflow history (expected {"events": [...]} or an array of events)`);
  if (events.length === 0) throw new HistoryFileError(`${file} holds an empty history`);
  try {
    return historyFromJSON({ events });
  } catch (e) {
    throw new HistoryFileError(`${file} is not a valid workflow history: ${(e as Error).message}`);
  }
}

function eventsOf(json: unknown): unknown[] | undefined {
  if (Array.isArray(json)) return json;
  if (typeof json !== 'object' || json === null) return undefined;
  const o = json as { events?: unknown; history?: unknown };
  if (Array.isArray(o.events)) return o.events;
  return o.history !== undefined ? eventsOf(o.history) : undefined;
}

/** The history of a run (the latest run of the ID when runId is omitted). */
export async function fetchHistory(client: Client, workflowId: string, runId?: string): Promise<IHistory> {
  return client.workflow.getHandle(workflowId, runId).fetchHistory();
}

// Metrics sinks are not called on replay, but a workflow referencing an unregistered sink logs an error each time.
export const noopSinks: InjectedSinks<KcmSinks> = {
  kcm: {
    reconciled: { fn: () => undefined },
    signals: { fn: () => undefined },
    thrown: { fn: () => undefined },
    shadowOutcomes: { fn: () => undefined },
  },
};

export async function replayHistory(opts: ReplayHistoryOptions): Promise<ReplayReport> {
  const events = opts.history.events ?? [];
  const workflowType = workflowTypeOf(events);
  const logger = opts.logger ?? new DefaultLogger('WARN');
  // bundled once: every probe below reuses it, so a search costs milliseconds per probe, not a webpack run
  const bundle = opts.bundle ?? (await bundleWorkflowCode({ workflowsPath: opts.workflowsPath ?? defaultWorkflowsPath(), logger }));
  const replay = (upTo: number) => replayPrefix(bundle, events, upTo, opts.workflowId);

  const failure = await replay(events.length);
  if (!failure) return { ok: true, workflowType, events: events.length };

  const tasks = workflowTasks(events);
  // Task k fails in every prefix that contains it, so the first failing cut is found by bisection.
  let lo = 0;
  let hi = tasks.length; // tasks.length stands for "only the whole history fails"
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const cut = tasks[mid].cut;
    const failed = cut === events.length ? failure : await replay(cut);
    if (failed) hi = mid;
    else lo = mid + 1;
  }

  const window = lo < tasks.length ? tasks[lo] : trailingTask(events, tasks);
  const taskEvents = events.slice(window.start, window.cut).map((e) => describeEvent(e, events));
  return {
    ok: false,
    workflowType,
    events: events.length,
    error: failure.message,
    divergedAt: divergence(events, window, failure.message, lo >= tasks.length),
    taskEvents,
  };
}

/**
 * Many whole histories through one replay worker (a worker per history costs a fresh workflow
 * context each): by workflow ID, the replay failure, or undefined when the code fits. Use
 * replayHistory on a failed one for the task and event it diverged at.
 */
export async function replayMany(bundle: WorkflowBundleWithSourceMap, histories: Array<{ workflowId: string; history: temporal.api.history.v1.IHistory }>):
  Promise<Map<string, Error | undefined>> {
  const out = new Map<string, Error | undefined>();
  const results = Worker.runReplayHistories({ workflowBundle: bundle, sinks: noopSinks, replayName: 'temporal-kcm-replay', dataConverter: DATA_CONVERTER }, histories);
  for await (const r of results) out.set(r.workflowId, r.error);
  return out;
}

/** Replays events[0, upTo); resolves to the replay failure, or undefined when the code fits. */
async function replayPrefix(
  bundle: WorkflowBundleWithSourceMap,
  events: IHistoryEvent[],
  upTo: number,
  workflowId: string,
): Promise<Error | undefined> {
  try {
    await Worker.runReplayHistory({ workflowBundle: bundle, sinks: noopSinks, replayName: 'temporal-kcm-replay', dataConverter: DATA_CONVERTER }, { events: events.slice(0, upTo) }, workflowId);
    return undefined;
  } catch (e) {
    // anything else (a bad bundle, a malformed history) is not an answer about this history
    if (e instanceof DeterminismViolationError || e instanceof ReplayError) return e;
    throw e;
  }
}

/** One completed workflow task, as positions in the event list. */
export interface TaskWindow {
  /** first event that belongs to this task: the inputs that woke it (signals, activity results, timers) */
  start: number;
  /** index of its WorkflowTaskCompleted, or -1 for a task still in flight */
  completed: number;
  /** one past its last command event */
  commandsEnd: number;
  /**
   * a prefix length that replays this task and checks its commands. Cutting right after
   * WorkflowTaskCompleted is not enough: the replayer only compares the commands against the
   * events that follow it, so the cut goes just before the next WorkflowTaskScheduled.
   */
  cut: number;
}

// Events the server writes in the same transaction as the WorkflowTaskCompleted that carried the command.
const COMMAND_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
  EventType.EVENT_TYPE_TIMER_STARTED,
  EventType.EVENT_TYPE_TIMER_CANCELED,
  EventType.EVENT_TYPE_MARKER_RECORDED,
  EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
  EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
  EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
  EventType.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
  EventType.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED,
  EventType.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
]);

/** The completed workflow tasks of a history, in order. */
export function workflowTasks(events: IHistoryEvent[]): TaskWindow[] {
  const tasks: TaskWindow[] = [];
  let start = 0;
  for (let i = 0; i < events.length; i++) {
    if (typeOf(events[i]) !== EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) continue;
    let commandsEnd = i + 1;
    while (commandsEnd < events.length && COMMAND_EVENTS.has(typeOf(events[commandsEnd]))) commandsEnd++;
    let cut = commandsEnd;
    while (cut < events.length && typeOf(events[cut]) !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) cut++;
    tasks.push({ start, completed: i, commandsEnd, cut });
    start = commandsEnd;
  }
  return tasks;
}

function trailingTask(events: IHistoryEvent[], tasks: TaskWindow[]): TaskWindow {
  const start = tasks.length ? tasks[tasks.length - 1].commandsEnd : 0;
  return { start, completed: -1, commandsEnd: events.length, cut: events.length };
}

function divergence(events: IHistoryEvent[], task: TaskWindow, message: string, inFlight: boolean): Divergence {
  // Core names the event it could not match in most, not all, of its messages; trust it when it points into this task.
  const named = eventIdInMessage(message);
  const firstId = idOf(events[task.start]);
  const lastId = idOf(events[task.cut - 1]);
  let at: IHistoryEvent | undefined;
  if (named !== undefined && named >= firstId && named <= lastId) at = events.find((e) => idOf(e) === named);
  const commands = task.completed >= 0 ? events.slice(task.completed + 1, task.commandsEnd) : [];
  at ??= commands[0] ?? (task.completed >= 0 ? events[task.completed] : events[task.cut - 1]);

  const recorded = commands.map((e) => describeEvent(e, events).summary);
  const detail = inFlight
    ? `the workflow task in flight when the history was taken fails: ${describeEvent(at, events).summary}`
    : `history has ${describeEvent(at, events).summary}; ` +
      `workflow task completed at event ${idOf(events[task.completed])} recorded ${recorded.length ? recorded.join(', ') : 'no commands'}`;
  return { eventId: idOf(at), eventType: typeName(at), detail };
}

export function eventIdInMessage(message: string): number | undefined {
  const m = /HistoryEvent\(id: (\d+)/.exec(message) ?? /event_id: (\d+)/.exec(message) ?? /\bevent (?:id )?#?(\d+)\b/i.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** Temporal core wraps its own message in a Rust debug dump; this digs the readable part out. */
export function coreMessage(error: string): string {
  const m = /message: "((?:[^"\\]|\\.)*)"/.exec(error);
  return m ? m[1].replace(/\\"/g, '"') : error;
}

export function workflowTypeOf(events: IHistoryEvent[]): string {
  return events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

/** Recent servers record the workflow ID in the start event; older histories do not carry it at all. */
export function workflowIdOf(history: IHistory): string | undefined {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId || undefined;
}

function typeOf(e: IHistoryEvent): number {
  const t: unknown = e.eventType;
  if (typeof t === 'number') return t;
  if (typeof t === 'string') return (EventType as unknown as Record<string, number>)[t] ?? EventType.EVENT_TYPE_UNSPECIFIED;
  return EventType.EVENT_TYPE_UNSPECIFIED;
}

function idOf(e: IHistoryEvent | undefined): number {
  return Number(String(e?.eventId ?? 0));
}

export function typeName(e: IHistoryEvent): string {
  const constant = EventType[typeOf(e)] ?? 'EVENT_TYPE_UNSPECIFIED';
  return constant
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __: string, c: string) => c.toUpperCase());
}

function seconds(d: { seconds?: unknown; nanos?: number | null } | null | undefined): string {
  if (!d) return '?';
  const s = Number(String(d.seconds ?? 0)) + (d.nanos ?? 0) / 1e9;
  return `${s}s`;
}

function scheduledActivity(events: IHistoryEvent[], scheduledEventId: unknown): string {
  const id = Number(String(scheduledEventId ?? 0));
  const e = events.find((x) => idOf(x) === id);
  return e?.activityTaskScheduledEventAttributes?.activityType?.name ?? `scheduled at event ${id}`;
}

function timerOf(events: IHistoryEvent[], startedEventId: unknown, timerId: string | null | undefined): string {
  const id = Number(String(startedEventId ?? 0));
  const started = events.find((x) => idOf(x) === id)?.timerStartedEventAttributes;
  return `timer ${timerId ?? '?'}${started ? ` (${seconds(started.startToFireTimeout)})` : ''}`;
}

function markerSummary(a: temporal.api.history.v1.IMarkerRecordedEventAttributes): string {
  const name = a.markerName ?? '?';
  // a patched() marker says which patch ID the old code took; its payload is a tiny JSON record, not user data
  const patch = a.details?.['patch_data']?.payloads?.[0];
  if (patch) {
    try {
      const { id } = defaultPayloadConverter.fromPayload<{ id?: string }>(patch);
      if (id) return `marker ${name} (patch ${id})`;
    } catch {
      // not the shape we know; the name alone still helps
    }
  }
  return `marker ${name}`;
}

/** One line per event: what it records, without payloads (which may hold anything). */
export function describeEvent(e: IHistoryEvent, events: IHistoryEvent[]): TaskEvent {
  const eventId = idOf(e);
  const eventType = typeName(e);
  const T = EventType;
  let summary: string;
  switch (typeOf(e)) {
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      summary = `start ${e.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '?'}`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
      summary = `activity ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?'} scheduled`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_STARTED:
      summary = `activity ${scheduledActivity(events, e.activityTaskStartedEventAttributes?.scheduledEventId)} started (attempt ${e.activityTaskStartedEventAttributes?.attempt ?? 1})`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      summary = `activity ${scheduledActivity(events, e.activityTaskCompletedEventAttributes?.scheduledEventId)} completed`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      summary = `activity ${scheduledActivity(events, e.activityTaskFailedEventAttributes?.scheduledEventId)} failed`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      summary = `activity ${scheduledActivity(events, e.activityTaskTimedOutEventAttributes?.scheduledEventId)} timed out`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
      summary = `cancel of activity ${scheduledActivity(events, e.activityTaskCancelRequestedEventAttributes?.scheduledEventId)} requested`;
      break;
    case T.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      summary = `activity ${scheduledActivity(events, e.activityTaskCanceledEventAttributes?.scheduledEventId)} canceled`;
      break;
    case T.EVENT_TYPE_TIMER_STARTED:
      summary = `timer ${e.timerStartedEventAttributes?.timerId ?? '?'} started (${seconds(e.timerStartedEventAttributes?.startToFireTimeout)})`;
      break;
    case T.EVENT_TYPE_TIMER_FIRED:
      summary = `${timerOf(events, e.timerFiredEventAttributes?.startedEventId, e.timerFiredEventAttributes?.timerId)} fired`;
      break;
    case T.EVENT_TYPE_TIMER_CANCELED:
      summary = `${timerOf(events, e.timerCanceledEventAttributes?.startedEventId, e.timerCanceledEventAttributes?.timerId)} canceled`;
      break;
    case T.EVENT_TYPE_MARKER_RECORDED:
      summary = markerSummary(e.markerRecordedEventAttributes ?? {});
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      summary = `signal ${e.workflowExecutionSignaledEventAttributes?.signalName ?? '?'}`;
      break;
    case T.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      summary = `search attributes ${Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).join(', ')} set`;
      break;
    case T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
      const a = e.startChildWorkflowExecutionInitiatedEventAttributes;
      summary = `child ${a?.workflowType?.name ?? '?'} ${a?.workflowId ?? ''} started`.replace('  ', ' ');
      break;
    }
    case T.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: {
      const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      summary = `signal ${a?.signalName ?? '?'} sent to ${a?.workflowExecution?.workflowId ?? '?'}`;
      break;
    }
    case T.EVENT_TYPE_WORKFLOW_TASK_FAILED:
      summary = `workflow task failed (${temporal.api.enums.v1.WorkflowTaskFailedCause[e.workflowTaskFailedEventAttributes?.cause ?? 0] ?? '?'})`;
      break;
    case T.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
      summary = `continued as new ${e.workflowExecutionContinuedAsNewEventAttributes?.workflowType?.name ?? ''}`.trimEnd();
      break;
    default:
      summary = eventType.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  }
  return { eventId, eventType, summary };
}
