/**
 * `temporal-kcm why`: turns the workflow histories of one object into a reconcile timeline that
 * reads like a controller log: what the controller saw (signals, reads), what it decided and wrote
 * (activities with their `reason`), what it is waiting for (timers), and whether it is failing.
 *
 * Pure: the input is decoded history JSON (see history.ts), and every value shown goes through
 * redaction.ts.
 */
import { FOLDED_FIELD, OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { LOCAL_ACTIVITY_MARKER, isLocalEcho } from '../../workflows/runtime/local-io';
import {
  attrsOf,
  decodePayload,
  durationMs,
  failureText,
  firstPayload,
  isoMs,
  searchAttribute,
  typeOf,
  type HistoryEventJson,
  type PayloadJson,
  type RunHistory,
} from './history';
import { MAX_VALUE_CHARS, isObj, safeString, summarizeFields, type Obj } from './redaction';
import { controllerOfWorkflowId } from '../../workflows/runtime/workflow-ids';

export type EntryKind =
  | 'started'
  | 'observed'
  | 'signal'
  | 'read'
  | 'decided+wrote'
  | 'waiting'
  | 'marker'
  | 'memo'
  | 'workflow-task-failed'
  | 'continued-as-new'
  | 'finished'
  | 'failed'
  | 'terminated'
  | 'cancelled'
  | 'timed-out';

export type ActivityStatus = 'ok' | 'failed' | 'timed-out' | 'cancelled' | 'pending';

export interface ActivityOutcome {
  status: ActivityStatus;
  /** compact result ('ok') or error text (otherwise) */
  summary?: string;
  /** attempts so far; 1 when it never had to be retried */
  attempts: number;
  /** the error of the attempt before the last, when there were retries */
  lastFailure?: string;
  closedAt?: string;
  nextAttemptAt?: string;
}

export interface TimerInfo {
  timerId: string;
  durationMs: number;
  firesAt: string;
  state: 'pending' | 'fired' | 'cancelled';
  endedAt?: string;
}

export interface TimelineEntry {
  time: string;
  workflowId: string;
  runId: string;
  eventId: number;
  controller: string;
  kind: EntryKind;
  /** one line, already compact */
  what: string;
  /** a failure a reader should notice */
  alert: boolean;
  activity?: { name: string; reason?: string; input: string; outcome: ActivityOutcome };
  timer?: TimerInfo;
  signal?: { name: string; summary: string };
}

export interface ObjectIdentity {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export type RunStatus = 'running' | 'completed' | 'continued-as-new' | 'failed' | 'terminated' | 'cancelled' | 'timed-out';

export interface RunSummary {
  workflowId: string;
  runId: string;
  workflowType: string;
  controller: string;
  object?: ObjectIdentity;
  startedAt?: string;
  closedAt?: string;
  status: RunStatus;
  events: number;
}

export interface NextTimer {
  workflowId: string;
  runId: string;
  controller: string;
  timerId: string;
  startedAt: string;
  durationMs: number;
  firesAt: string;
}

export interface ErrorNote {
  at: string;
  workflowId: string;
  runId: string;
  controller: string;
  source: 'activity' | 'retrying' | 'memo' | 'workflow-task' | 'workflow';
  message: string;
  activity?: string;
  attempts?: number;
}

export interface Timeline {
  objects: ObjectIdentity[];
  runs: RunSummary[];
  entries: TimelineEntry[];
  /** running while any of the object's workflows has an open latest run */
  state: 'running' | 'closed';
  nextTimer?: NextTimer;
  /** the latest run of some workflow is failing now */
  failing: boolean;
  /** the most recent error seen, current or healed */
  lastError?: ErrorNote;
}

/** The `reason` an activity input carries, at its top level or one level down (e.g. `action.reason`). */
export function reasonOf(input: unknown): string | undefined {
  if (!isObj(input)) return undefined;
  if (typeof input.reason === 'string') return input.reason;
  for (const v of Object.values(input)) if (isObj(v) && typeof v.reason === 'string') return v.reason;
  return undefined;
}

/** The owner / target object of an activity input: shown by name only, it is the object in the header. */
const TARGET_KEYS = new Set(['owner', 'job', 'cronJob', 'deployment', 'service', 'quota', 'target']);

function summarizeActivityInput(input: unknown, read: boolean): string {
  if (!isObj(input)) return summarizeFields(input);
  // a read names the object of the header; what it read matters, not where
  if (read && typeof input.name === 'string') {
    const { name, namespace: _ns, kind: _kind, ...rest } = input;
    const more = summarizeFields(rest);
    return [safeString(name), more].filter((x) => x).join(', ');
  }
  const reasonNested = typeof input.reason !== 'string';
  const parts: string[] = [];
  const rest: Obj = {};
  for (const [k, v] of Object.entries(input)) {
    // the namespace is the object's, already in the header
    if (k === 'reason' || k === 'namespace') continue;
    if (TARGET_KEYS.has(k) && isObj(v) && typeof v.name === 'string') continue;
    if (reasonNested && isObj(v) && typeof v.reason === 'string') {
      const { reason: _r, ...others } = v;
      rest[k] = others;
      continue;
    }
    rest[k] = v;
  }
  const s = summarizeFields(rest);
  if (s) parts.push(s);
  return parts.join(', ');
}

/** `{ok: true}` and `{updated: true}` say no more than the status 'ok' does (false is still shown). */
const SUCCESS_FLAGS: ReadonlySet<string> = new Set(['ok', 'updated']);

const READ_ACTIVITY = /^(observe|read|list|find|get|discover|verify)|Observe$/;

export function isReadActivity(name: string): boolean {
  return READ_ACTIVITY.test(name);
}

const CLOSE_STATUS: Record<string, RunStatus> = {
  WORKFLOW_EXECUTION_COMPLETED: 'completed',
  WORKFLOW_EXECUTION_CONTINUED_AS_NEW: 'continued-as-new',
  WORKFLOW_EXECUTION_FAILED: 'failed',
  WORKFLOW_EXECUTION_TERMINATED: 'terminated',
  WORKFLOW_EXECUTION_CANCELED: 'cancelled',
  WORKFLOW_EXECUTION_TIMED_OUT: 'timed-out',
};

const shortRun = (runId: string) => runId.slice(0, 8);

interface ActivityState {
  entry: TimelineEntry;
  activityId: string;
  startedAttempt?: number;
  startedLastFailure?: string;
}

interface RunResult {
  summary: RunSummary;
  entries: TimelineEntry[];
  activities: ActivityState[];
  timers: TimelineEntry[];
  errors: ErrorNote[];
  /** failing at the end of this run's history, by its own evidence */
  failingNow?: ErrorNote;
  lastErrorMemo?: string | null;
}

function readRun(run: RunHistory): RunResult {
  const started = run.events.find((e) => typeOf(e) === 'WORKFLOW_EXECUTION_STARTED');
  const startAttrs = started ? attrsOf(started) : {};
  const controller = searchAttribute(startAttrs, 'KcmController') ?? controllerOfWorkflowId(run.workflowId);
  const kind = searchAttribute(startAttrs, 'KcmKind');
  const object: ObjectIdentity | undefined = kind
    ? {
        kind,
        namespace: searchAttribute(startAttrs, 'KcmNamespace') ?? '',
        name: searchAttribute(startAttrs, 'KcmName') ?? '',
        uid: searchAttribute(startAttrs, 'KcmUid') ?? '',
      }
    : undefined;
  const summary: RunSummary = {
    workflowId: run.workflowId,
    runId: run.runId,
    workflowType: run.workflowType,
    controller,
    ...(object ? { object } : {}),
    ...(started ? { startedAt: isoMs(started.eventTime) } : {}),
    status: 'running',
    events: run.events.length,
  };

  const entries: TimelineEntry[] = [];
  const activities = new Map<string, ActivityState>();
  const timers = new Map<string, TimelineEntry>();
  const errors: ErrorNote[] = [];
  let lastErrorMemo: string | null | undefined;
  let pendingTaskFailure: ErrorNote | undefined;

  const add = (e: HistoryEventJson, kind: EntryKind, what: string, extra: Partial<TimelineEntry> = {}): TimelineEntry => {
    const entry: TimelineEntry = {
      time: isoMs(e.eventTime),
      workflowId: run.workflowId,
      runId: run.runId,
      eventId: Number(e.eventId),
      controller,
      kind,
      what,
      alert: false,
      ...extra,
    };
    entries.push(entry);
    return entry;
  };
  const note = (e: HistoryEventJson, source: ErrorNote['source'], message: string, extra: Partial<ErrorNote> = {}): ErrorNote => {
    const n: ErrorNote = { at: isoMs(e.eventTime), workflowId: run.workflowId, runId: run.runId, controller, source, message, ...extra };
    errors.push(n);
    return n;
  };

  /**
   * A local activity (workflows/runtime/local-io.ts) is one marker: its type and attempt in
   * `data`, and in `result` the input echoed with the result by the worker, or a failure.
   */
  const addLocalActivity = (e: HistoryEventJson, a: Record<string, unknown>, details: Record<string, { payloads?: PayloadJson[] }>) => {
    const data = decodePayload(details.data?.payloads?.[0]);
    const name = isObj(data) && typeof data.activity_type === 'string' ? data.activity_type : '?';
    const attempts = isObj(data) && typeof data.attempt === 'number' ? data.attempt : 1;
    const out = decodePayload(details.result?.payloads?.[0]);
    const echoed = isLocalEcho(out) ? out : undefined;
    const input = echoed?.input;
    const reason = reasonOf(input);
    const read = isReadActivity(name);
    const outcome: ActivityOutcome = { status: 'ok', attempts, closedAt: isoMs(e.eventTime) };
    const entry = add(e, read ? 'read' : 'decided+wrote', '', {
      activity: {
        name,
        ...(reason !== undefined ? { reason: safeString(reason, 'reason', MAX_VALUE_CHARS) } : {}),
        input: summarizeActivityInput(input, read),
        outcome,
      },
    });
    // with the regular ones: described with them, and the last of them says whether the object is failing
    activities.set(`local-${String(e.eventId)}`, { entry, activityId: '' });
    if (a.failure) {
      outcome.status = 'failed';
      outcome.summary = failureText(a.failure);
      entry.alert = true;
      note(e, 'activity', outcome.summary, { activity: name, attempts });
    } else {
      outcome.summary = summarizeFields(echoed ? echoed.result : out, SUCCESS_FLAGS);
    }
  };

  for (const e of run.events) {
    const a = attrsOf(e);
    const t = typeOf(e);
    switch (t) {
      case 'WORKFLOW_EXECUTION_STARTED': {
        const from = typeof a.continuedExecutionRunId === 'string' && a.continuedExecutionRunId ? ` (continued from ${shortRun(a.continuedExecutionRunId)})` : '';
        add(e, 'started', `started ${run.workflowType} run ${shortRun(run.runId)}${from}`);
        break;
      }
      case 'WORKFLOW_EXECUTION_SIGNALED': {
        const name = typeof a.signalName === 'string' ? a.signalName : '?';
        const payload = firstPayload(a, 'input');
        // the informer's count of watch events merged into this one signal, said in words
        const folded = isObj(payload) && typeof payload[FOLDED_FIELD] === 'number' ? payload[FOLDED_FIELD] : undefined;
        const s = summarizeFields(folded !== undefined && isObj(payload) ? Object.fromEntries(Object.entries(payload).filter(([k]) => k !== FOLDED_FIELD)) : payload);
        if (name === OBJECT_EVENT_SIGNAL) add(e, 'observed', `event${folded ? ` (${folded} watch events merged)` : ''}: ${s || '(empty)'}`, { signal: { name, summary: s } });
        else add(e, 'signal', `signal ${name}${s ? `: ${s}` : ''}`, { signal: { name, summary: s } });
        break;
      }
      case 'ACTIVITY_TASK_SCHEDULED': {
        const name = (a.activityType as { name?: string } | undefined)?.name ?? '?';
        const input = firstPayload(a, 'input');
        const reason = reasonOf(input);
        const read = isReadActivity(name);
        const entry = add(e, read ? 'read' : 'decided+wrote', '', {
          activity: {
            name,
            ...(reason !== undefined ? { reason: safeString(reason, 'reason', MAX_VALUE_CHARS) } : {}),
            input: summarizeActivityInput(input, read),
            outcome: { status: 'pending', attempts: 1 },
          },
        });
        activities.set(String(e.eventId), { entry, activityId: String(a.activityId ?? '') });
        break;
      }
      case 'ACTIVITY_TASK_STARTED': {
        const st = activities.get(String(a.scheduledEventId));
        if (!st) break;
        st.startedAttempt = typeof a.attempt === 'number' ? a.attempt : 1;
        if (a.lastFailure) st.startedLastFailure = failureText(a.lastFailure);
        break;
      }
      case 'ACTIVITY_TASK_COMPLETED':
      case 'ACTIVITY_TASK_FAILED':
      case 'ACTIVITY_TASK_TIMED_OUT':
      case 'ACTIVITY_TASK_CANCELED': {
        const st = activities.get(String(a.scheduledEventId));
        if (!st || !st.entry.activity) break;
        const attempts = st.startedAttempt ?? 1;
        const outcome: ActivityOutcome = { status: 'ok', attempts, closedAt: isoMs(e.eventTime) };
        if (st.startedLastFailure && attempts > 1) outcome.lastFailure = st.startedLastFailure;
        if (t === 'ACTIVITY_TASK_COMPLETED') {
          outcome.summary = summarizeFields(firstPayload(a, 'result'), SUCCESS_FLAGS);
          if (outcome.lastFailure) note(e, 'activity', outcome.lastFailure, { activity: st.entry.activity.name, attempts });
        } else if (t === 'ACTIVITY_TASK_CANCELED') {
          outcome.status = 'cancelled';
        } else {
          outcome.status = t === 'ACTIVITY_TASK_FAILED' ? 'failed' : 'timed-out';
          outcome.summary = failureText(a.failure);
          st.entry.alert = true;
          note(e, 'activity', outcome.summary, { activity: st.entry.activity.name, attempts });
        }
        st.entry.activity.outcome = outcome;
        break;
      }
      case 'TIMER_STARTED': {
        const ms = durationMs(a.startToFireTimeout);
        const timerId = String(a.timerId ?? '');
        const entry = add(e, 'waiting', '', {
          timer: { timerId, durationMs: ms, firesAt: new Date(Date.parse(e.eventTime) + ms).toISOString(), state: 'pending' },
        });
        timers.set(timerId, entry);
        break;
      }
      case 'TIMER_FIRED':
      case 'TIMER_CANCELED': {
        const entry = timers.get(String(a.timerId ?? ''));
        if (entry?.timer) {
          entry.timer.state = t === 'TIMER_FIRED' ? 'fired' : 'cancelled';
          entry.timer.endedAt = isoMs(e.eventTime);
        }
        break;
      }
      case 'MARKER_RECORDED': {
        const details = (a.details ?? {}) as Record<string, { payloads?: PayloadJson[] }>;
        if (a.markerName === LOCAL_ACTIVITY_MARKER) {
          addLocalActivity(e, a, details);
          break;
        }
        const patch = decodePayload(details['patch-data']?.payloads?.[0] ?? details['patch_id']?.payloads?.[0]);
        const id = isObj(patch) && typeof patch.id === 'string' ? patch.id : typeof patch === 'string' ? patch : undefined;
        add(e, 'marker', a.markerName === 'core_patch' && id ? `patched ${safeString(id)}` : `marker ${safeString(String(a.markerName ?? '?'))}`);
        break;
      }
      case 'WORKFLOW_PROPERTIES_MODIFIED': {
        const fields = (a.upsertedMemo as { fields?: Record<string, PayloadJson> } | undefined)?.fields ?? {};
        for (const [key, p] of Object.entries(fields)) {
          const v = decodePayload(p);
          const text = typeof v === 'string' ? safeString(v, key, MAX_VALUE_CHARS) : v === undefined || v === null ? undefined : summarizeFields(v);
          const entry = add(e, 'memo', text === undefined ? `${key} cleared` : `${key}: ${text}`);
          if (key === 'LastError') {
            lastErrorMemo = text ?? null;
            if (text !== undefined) {
              entry.alert = true;
              note(e, 'memo', text);
            }
          }
        }
        break;
      }
      case 'WORKFLOW_TASK_FAILED': {
        const cause = typeof a.cause === 'string' ? a.cause.replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '') : 'UNKNOWN';
        // Temporal's way of saying "a signal came in while you were completing": the task just runs again
        if (cause === 'UNHANDLED_COMMAND') {
          add(e, 'workflow-task-failed', 'workflow task re-run: a signal arrived while it was completing');
          break;
        }
        const message = `${cause}: ${failureText(a.failure)}`;
        add(e, 'workflow-task-failed', `workflow task failed: ${message}`, { alert: true });
        pendingTaskFailure = note(e, 'workflow-task', message);
        break;
      }
      case 'WORKFLOW_TASK_COMPLETED':
        pendingTaskFailure = undefined;
        break;
      default: {
        const status = CLOSE_STATUS[t];
        if (!status) break;
        summary.status = status;
        summary.closedAt = isoMs(e.eventTime);
        if (status === 'continued-as-new') {
          const next = typeof a.newExecutionRunId === 'string' ? ` -> run ${shortRun(a.newExecutionRunId)}` : '';
          add(e, 'continued-as-new', `continued as new${next}`);
        } else if (status === 'completed') add(e, 'finished', 'finished (the object is gone or its work is done)');
        else {
          const why =
            status === 'terminated'
              ? safeString(String(a.reason || 'no reason given'), 'reason', MAX_VALUE_CHARS)
              : status === 'failed'
                ? failureText(a.failure)
                : status;
          const kind = status as Extract<RunStatus, EntryKind>;
          add(e, kind, `workflow ${status}: ${why}`, { alert: status !== 'cancelled' });
          note(e, 'workflow', `workflow ${status}: ${why}`);
        }
      }
    }
  }

  // What Temporal is retrying right now is not in the history yet: fold it into the open activity.
  for (const p of run.pendingActivities ?? []) {
    const st = [...activities.values()].find((s) => s.activityId === p.activityId && s.entry.activity?.outcome.status === 'pending');
    if (!st?.entry.activity) continue;
    const outcome = st.entry.activity.outcome;
    outcome.attempts = p.attempt;
    if (p.lastFailure) {
      outcome.lastFailure = safeString(p.lastFailure, 'message', MAX_VALUE_CHARS);
      st.entry.alert = true;
    }
    if (p.nextAttemptTime) outcome.nextAttemptAt = p.nextAttemptTime;
  }

  const acts = [...activities.values()];
  for (const st of acts) st.entry.what = describeActivity(st.entry);
  for (const entry of timers.values()) entry.what = describeTimer(entry.timer as TimerInfo);

  // Failing now, judged from this run alone (the caller only asks the latest run of each workflow).
  let failingNow: ErrorNote | undefined;
  const lastAct = acts[acts.length - 1]?.entry;
  const lastOutcome = lastAct?.activity?.outcome;
  if (pendingTaskFailure) failingNow = pendingTaskFailure;
  else if (lastAct?.activity && lastOutcome && (lastOutcome.status === 'failed' || lastOutcome.status === 'timed-out')) {
    failingNow = errors.filter((n) => n.source === 'activity').pop();
  } else if (lastAct?.activity && lastOutcome?.status === 'pending' && lastOutcome.lastFailure) {
    failingNow = {
      at: lastAct.time,
      workflowId: run.workflowId,
      runId: run.runId,
      controller,
      source: 'retrying',
      message: lastOutcome.lastFailure,
      activity: lastAct.activity.name,
      attempts: lastOutcome.attempts,
    };
    errors.push(failingNow);
  }
  const memoError = run.memo && 'LastError' in run.memo ? run.memo.LastError : undefined;
  const memoText = typeof memoError === 'string' && memoError ? safeString(memoError, 'message', MAX_VALUE_CHARS) : undefined;
  if (run.memo && 'LastError' in run.memo) lastErrorMemo = memoText ?? null;
  if (!failingNow && lastErrorMemo) {
    const current = lastErrorMemo;
    failingNow = errors.filter((n) => n.source === 'memo' && n.message === current).pop() ?? {
      at: summary.startedAt ?? '',
      workflowId: run.workflowId,
      runId: run.runId,
      controller,
      source: 'memo',
      message: lastErrorMemo,
    };
    if (!errors.includes(failingNow)) errors.push(failingNow);
  }
  if (!failingNow && ['failed', 'terminated', 'timed-out'].includes(summary.status)) failingNow = errors[errors.length - 1];

  return { summary, entries, activities: acts, timers: [...timers.values()], errors, failingNow, lastErrorMemo };
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))}s`;
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  let rest = Math.round(ms / 1000) * 1000;
  const parts: string[] = [];
  for (const [u, size] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${u}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join('');
}

function describeActivity(entry: TimelineEntry): string {
  const act = entry.activity;
  if (!act) return entry.what;
  const o = act.outcome;
  const head = entry.kind === 'read' ? `read ${act.name}(${act.input})` : `${act.name}${act.reason ? ` "${act.reason}"` : ''}${act.input ? ` ${act.input}` : ''}`;
  const retries = o.attempts > 1 ? ` (retried ${o.attempts - 1} time${o.attempts === 2 ? '' : 's'})` : '';
  let result: string;
  switch (o.status) {
    case 'ok':
      result = `ok${o.summary ? ` ${o.summary}` : ''}${retries}`;
      break;
    case 'pending':
      result = o.lastFailure ? `retrying, attempt ${o.attempts}: ${o.lastFailure}` : 'in progress';
      break;
    case 'cancelled':
      result = 'cancelled';
      break;
    default:
      result = `${o.status === 'timed-out' ? 'timed out' : 'failed'}: ${o.summary ?? ''}${retries}`;
  }
  return `${head} -> ${result}`;
}

function describeTimer(t: TimerInfo): string {
  const end = t.state === 'pending' ? `pending, fires ${t.firesAt}` : t.state;
  return `waiting ${formatDuration(t.durationMs)} (timer ${t.timerId}, ${end})`;
}

// ---------------------------------------------------------------------------------------------
// merging runs

/**
 * Each run's entries stay in event order (event times can run a few ms backwards, e.g. a signal
 * recorded while a workflow task was in flight); runs are interleaved by time.
 */
function mergeByTime(lists: TimelineEntry[][]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const idx = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (idx[i] >= lists[i].length) continue;
      if (best < 0 || lists[i][idx[i]].time < lists[best][idx[best]].time) best = i;
    }
    if (best < 0) return out;
    out.push(lists[best][idx[best]++]);
  }
}

export function buildTimeline(runs: RunHistory[]): Timeline {
  const results = runs.map(readRun);
  results.sort((a, b) => (a.summary.startedAt ?? '').localeCompare(b.summary.startedAt ?? ''));

  const objects: ObjectIdentity[] = [];
  for (const r of results) {
    const o = r.summary.object;
    if (o && !objects.some((x) => x.kind === o.kind && x.namespace === o.namespace && x.name === o.name && x.uid === o.uid)) objects.push(o);
  }

  // the latest run of each workflow ID says where that controller stands now
  const latest = new Map<string, RunResult>();
  for (const r of results) latest.set(r.summary.workflowId, r);
  const open = [...latest.values()].filter((r) => r.summary.status === 'running');

  let nextTimer: NextTimer | undefined;
  for (const r of open) {
    for (const e of r.timers) {
      const t = e.timer as TimerInfo;
      if (t.state !== 'pending' || (nextTimer && nextTimer.firesAt <= t.firesAt)) continue;
      nextTimer = { workflowId: e.workflowId, runId: e.runId, controller: e.controller, timerId: t.timerId, startedAt: e.time, durationMs: t.durationMs, firesAt: t.firesAt };
    }
  }

  const current = [...latest.values()].map((r) => r.failingNow).filter((n): n is ErrorNote => n !== undefined);
  const all = results.flatMap((r) => r.errors).sort((a, b) => a.at.localeCompare(b.at));
  const lastError = [...current].sort((a, b) => a.at.localeCompare(b.at)).pop() ?? all.pop();

  return {
    objects,
    runs: results.map((r) => r.summary),
    entries: mergeByTime(results.map((r) => r.entries)),
    state: open.length ? 'running' : 'closed',
    ...(nextTimer ? { nextTimer } : {}),
    failing: current.length > 0,
    ...(lastError ? { lastError } : {}),
  };
}
