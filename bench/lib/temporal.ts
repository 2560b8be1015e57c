import { temporal } from '@temporalio/proto';
import { Client, Connection } from '@temporalio/client';
import { informerWorkflowIdOf } from '../../workflows/informer';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { DATA_CONVERTER } from '../../workers/payload-codec';
import { TEMPORAL_CHANNEL_ARGS } from '../../starter/run-options';

export interface TemporalHandle {
  client: Client;
  close(): Promise<void>;
}

export async function connectTemporal(address: string): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address, channelArgs: TEMPORAL_CHANNEL_ARGS });
  return { client: new Client({ connection, dataConverter: DATA_CONVERTER }), close: () => connection.close() };
}

/**
 * Events written so far by every run on a task queue. A closed run's length comes from the
 * visibility store; an open run's from describe, because visibility records of open runs are not
 * refreshed on every event. The difference of two calls is what a window wrote.
 */
export async function historyEvents(client: Client, taskQueue: string): Promise<number> {
  let sum = 0;
  const open: Array<{ workflowId: string; runId: string }> = [];
  for await (const w of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
    if (w.status.name === 'RUNNING') open.push({ workflowId: w.workflowId, runId: w.runId });
    else sum += w.historyLength;
  }
  // a handful at a time: hundreds of describes at once would be the load we measure
  for (let i = 0; i < open.length; i += 20) {
    const lens = await Promise.all(open.slice(i, i + 20).map(async (o) => {
      try {
        const d = await client.workflow.getHandle(o.workflowId, o.runId).describe();
        return d.historyLength;
      } catch {
        return 0;
      }
    }));
    sum += lens.reduce((a, b) => a + b, 0);
  }
  return sum;
}

/** The pid of the replica running the watch activity (worker identity is `<host>-<pid>`). */
export async function informerHolderPid(client: Client, taskQueue: string): Promise<number | undefined> {
  const id = await informerWorkflowIdOf(client, taskQueue);
  if (!id) return undefined;
  const d = await client.workflow.getHandle(id).describe();
  const identity = d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '';
  const pid = Number(/-(\d+)$/.exec(identity)?.[1]);
  return Number.isFinite(pid) ? pid : undefined;
}

/**
 * The watch activity's attempt number: it grows by one each time the watch moves to another
 * replica (a kill, or a heartbeat the server did not get in time), so its growth over a window
 * with no kill counts needless moves.
 */
export async function informerAttempt(client: Client, taskQueue: string): Promise<number | undefined> {
  const id = await informerWorkflowIdOf(client, taskQueue);
  if (!id) return undefined;
  const d = await client.workflow.getHandle(id).describe();
  return d.raw.pendingActivities?.[0]?.attempt ?? undefined;
}

/** Once no manager polls a bench task queue any more, its open runs (the informer above all) only linger: end them. */
export async function terminateQueue(client: Client, taskQueue: string): Promise<void> {
  for await (const w of client.workflow.list({ query: `${deploymentQueuesQuery(taskQueue)} AND ExecutionStatus = "Running"` })) {
    await client.workflow.getHandle(w.workflowId, w.runId).terminate('benchmark finished').catch(() => undefined);
  }
}

/** One history event of interest: its type's name, its time, and the activity it schedules if any. */
export interface TimedEvent {
  type: string;
  at: number;
  activity?: string;
  /** the run it belongs to */
  run?: string;
  /** a timed-out workflow task's timeout type (1 start-to-close, 2 schedule-to-start) */
  timeout?: string;
}

/** Every run's events of the workflows a visibility query finds, oldest first, with wall-clock times. */
/** Every event of every run a visibility query finds, with its run and wall-clock time (ms). */
async function* eachHistoryEvent(client: Client, query: string): AsyncGenerator<{ e: temporal.api.history.v1.IHistoryEvent; at: number; runId: string }> {
  for await (const w of client.workflow.list({ query })) {
    const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const t = e.eventTime;
      yield { e, at: t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0, runId: w.runId };
    }
  }
}

async function timedEvents(client: Client, query: string): Promise<TimedEvent[]> {
  const out: TimedEvent[] = [];
  for await (const { e, at, runId } of eachHistoryEvent(client, query)) {
    const type = String(e.eventType ?? '');
    const timeout = e.workflowTaskTimedOutEventAttributes?.timeoutType;
    out.push({ type, at, activity: e.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined, run: runId, ...(timeout != null ? { timeout: String(timeout) } : {}) });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** Every run's events of one workflow ID, oldest first, with wall-clock times (continue-as-new runs included). */
export function timedHistory(client: Client, workflowId: string): Promise<TimedEvent[]> {
  return timedEvents(client, `WorkflowId = "${workflowId}"`);
}


/**
 * One workflow ID's events from `lookbackMs` before `since` on, as one line for a run's log: each
 * event's type, seconds from `since` (negative before it), and for workflow tasks the queue kind
 * (sticky or not) and the worker that took it. The lookback shows a task already waiting at
 * `since`. For reading why a reaction was slow (a task left on a dead replica's queue, a backlog).
 */
export async function taskTimeline(client: Client, workflowId: string, since: number, lookbackMs = 60_000): Promise<string> {
  const { EventType, TaskQueueKind, TimeoutType } = temporal.api.enums.v1;
  const parts: Array<{ at: number; text: string }> = [];
  for await (const { e, at } of eachHistoryEvent(client, `WorkflowId = "${workflowId}"`)) {
    if (at < since - lookbackMs) continue;
    const type = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
    const scheduled = e.workflowTaskScheduledEventAttributes;
    const detail = scheduled
      ? ` ${TaskQueueKind[scheduled.taskQueue?.kind ?? 0]?.replace(/^TASK_QUEUE_KIND_/, '').toLowerCase()}`
      : e.workflowTaskStartedEventAttributes ? ` by ${e.workflowTaskStartedEventAttributes.identity ?? '?'}`
        : e.workflowTaskTimedOutEventAttributes ? ` ${TimeoutType[e.workflowTaskTimedOutEventAttributes.timeoutType ?? 0]?.replace(/^TIMEOUT_TYPE_/, '').toLowerCase()}`
          : '';
    parts.push({ at, text: `${((at - since) / 1000).toFixed(1)}s ${type}${detail}` });
  }
  return parts.sort((a, b) => a.at - b.at).map((p) => p.text).join('; ') || 'no events';
}

/** Workflow-task timeouts by kind, as "sticky 612 (4.0..8.2 s)": a count and when the first and last came. */
function timeoutsByKind(timeouts: TimedEvent[], since: number): string {
  const kinds = new Map<string, number[]>();
  for (const e of timeouts) {
    const kind = e.timeout === '2' ? 'sticky' : 'start-to-close';
    kinds.set(kind, [...(kinds.get(kind) ?? []), (e.at - since) / 1000]);
  }
  return [...kinds].map(([k, at]) => `${k} ${at.length} (${at[0].toFixed(1)}..${at[at.length - 1].toFixed(1)} s)`).join(', ') || 'none';
}

/**
 * Where the workflows of a task queue spent their time since `since`, for the run's log: when the
 * first and last signal and activity came (s after `since`), and the p50/p99 of workflow-task
 * queueing and run time and of activity queueing and run time, in ms. Pairs are matched per run
 * in order, which holds because a run has at most one workflow task at a time and activities are
 * matched by their order of scheduling (an approximation when several run at once).
 */
export async function queueProfile(client: Client, taskQueue: string, since: number): Promise<string> {
  const events = (await timedEvents(client, deploymentQueuesQuery(taskQueue))).filter((e) => e.at >= since);
  const pairs = (from: number, to: number) => {
    const open = new Map<string, number[]>();
    const out: number[] = [];
    for (const e of events) {
      if (isEvent(e, from)) open.set(e.run ?? '', [...(open.get(e.run ?? '') ?? []), e.at]);
      else if (isEvent(e, to)) {
        const q = open.get(e.run ?? '');
        const start = q?.shift();
        if (start !== undefined) out.push(e.at - start);
      }
    }
    return out.sort((a, b) => a - b);
  };
  const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] : 0);
  const show = (name: string, xs: number[]) => `${name} n=${xs.length} p50=${pct(xs, 50)} p99=${pct(xs, 99)}`;
  const at = (n: number, last = false) => {
    const xs = events.filter((e) => isEvent(e, n));
    const e = last ? xs[xs.length - 1] : xs[0];
    return e ? ((e.at - since) / 1000).toFixed(1) : '-';
  };
  return [
    `signals ${at(EV.signaled)}..${at(EV.signaled, true)} s`,
    `activities ${at(EV.actScheduled)}..${at(EV.actCompleted, true)} s`,
    `wft timed out: ${timeoutsByKind(events.filter((e) => isEvent(e, EV.wftTimedOut)), since)}, failed ${events.filter((e) => isEvent(e, EV.wftFailed)).length}`,
    show('wft queue', pairs(EV.wftScheduled, EV.wftStarted)),
    show('wft run', pairs(EV.wftStarted, EV.wftCompleted)),
    show('activity queue', pairs(EV.actScheduled, EV.actStarted)),
    show('activity run', pairs(EV.actStarted, EV.actCompleted)),
  ].join('; ');
}

/** History event types, as the proto enum numbers them (timedEvents keeps them as strings). */
const EV = { wftScheduled: 5, wftStarted: 6, wftCompleted: 7, wftTimedOut: 8, wftFailed: 9, actScheduled: 10, actStarted: 11, actCompleted: 12, signaled: 26 } as const;
const isEvent = (e: TimedEvent, n: number) => e.type === String(n);

/** Where one reaction's time went, as its workflow's history shows it, in ms. */
export interface ReactionStages {
  /** the trigger (a DELETE call) -> the signal recorded in the history: watch, route and signal send */
  toSignal: number;
  /** signal -> the workflow task that reads it starts on a worker: busy in an earlier step, or queued */
  toTask: number;
  /** that task started -> the named activity scheduled: workflow code and any activities before it */
  toActivity: number;
  /** activity scheduled -> started on a worker: the activity queue */
  activityQueue: number;
  /** activity started -> the reaction seen (by the benchmark's own watch) */
  activityToSeen: number;
}

/**
 * Splits a reaction (from `t0` to `seenAt`) into the stages its workflow's history records.
 * Undefined when the history has no such chain after t0.
 */
export function reactionStages(events: TimedEvent[], t0: number, seenAt: number, activity: string): ReactionStages | undefined {
  const after = events.filter((e) => e.at >= t0);
  const signal = after.find((e) => isEvent(e, EV.signaled));
  if (!signal) return undefined;
  const task = after.find((e) => e.at >= signal.at && isEvent(e, EV.wftStarted));
  const scheduled = after.find((e) => e.at >= signal.at && isEvent(e, EV.actScheduled) && e.activity === activity);
  if (!task || !scheduled) return undefined;
  const started = after.find((e) => e.at >= scheduled.at && isEvent(e, EV.actStarted));
  if (!started) return undefined;
  return {
    toSignal: signal.at - t0,
    toTask: task.at - signal.at,
    toActivity: scheduled.at - task.at,
    activityQueue: started.at - scheduled.at,
    activityToSeen: seenAt - started.at,
  };
}

/** What one workflow ID's runs asked of the workers, counted from their histories. */
export interface WorkflowWork {
  runs: number;
  events: number;
  /** workflow tasks completed, and those scheduled on the shared (not the sticky) queue */
  workflowTasks: number;
  nonStickyTasks: number;
  /** workflow tasks that timed out (a sticky queue whose worker did not take them, or a task past its timeout) */
  timedOutTasks: number;
  /**
   * workflow tasks that failed: among them completions the server refused because a signal came in
   * while the task ran (cause UNHANDLED_COMMAND), which a closing command such as continue-as-new
   * meets; the worker then drops the run from its cache and replays it from the first event
   */
  failedTasks: number;
  /** of them, completions refused for a signal that came in meanwhile */
  refusedTasks: number;
  signals: number;
  /** local activities (markers) and regular activities */
  markers: number;
  activities: number;
  timers: number;
  /** started to completed, summed over every task, and over each run's first task alone (ms) */
  taskMs: number;
  firstTaskMs: number;
}

/**
 * Counts of one workflow ID's work over all its runs (continue-as-new included), so that a cost
 * can be put per run or per workflow task. Reads every history: for after a measured window.
 */
export async function workflowWork(client: Client, workflowId: string): Promise<WorkflowWork> {
  const { TaskQueueKind, EventType: T, WorkflowTaskFailedCause } = temporal.api.enums.v1;
  const w: WorkflowWork = { runs: 0, events: 0, workflowTasks: 0, nonStickyTasks: 0, timedOutTasks: 0, failedTasks: 0, refusedTasks: 0, signals: 0, markers: 0, activities: 0, timers: 0, taskMs: 0, firstTaskMs: 0 };
  const runs = new Set<string>();
  const started = new Map<string, number>();
  const firstDone = new Set<string>();
  for await (const { e, at, runId } of eachHistoryEvent(client, `WorkflowId = "${workflowId}"`)) {
    runs.add(runId);
    w.events++;
    const type = e.eventType ?? T.EVENT_TYPE_UNSPECIFIED;
    if (type === T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && e.workflowTaskScheduledEventAttributes?.taskQueue?.kind !== TaskQueueKind.TASK_QUEUE_KIND_STICKY) w.nonStickyTasks++;
    else if (type === T.EVENT_TYPE_WORKFLOW_TASK_STARTED) started.set(runId, at);
    else if (type === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      w.workflowTasks++;
      const ms = at - (started.get(runId) ?? at);
      w.taskMs += ms;
      if (!firstDone.has(runId)) {
        firstDone.add(runId);
        w.firstTaskMs += ms;
      }
    } else if (type === T.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) w.timedOutTasks++;
    else if (type === T.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
      w.failedTasks++;
      if (e.workflowTaskFailedEventAttributes?.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND) w.refusedTasks++;
    }
    else if (type === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) w.signals++;
    else if (type === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) w.activities++;
    else if (type === T.EVENT_TYPE_MARKER_RECORDED) w.markers++;
    else if (type === T.EVENT_TYPE_TIMER_STARTED) w.timers++;
  }
  w.runs = runs.size;
  return w;
}
