/**
 * `temporal-kcm why`: turns the workflow histories of one object into a reconcile timeline that
 * reads like a controller log: what the controller saw (signals, reads), what it decided and wrote
 * (activities with their `reason`), what it is waiting for (timers), and whether it is failing.
 *
 * Pure: the input is history JSON as `temporal workflow show -o json` prints it (and as
 * historyToJSON produces), so recorded fixtures and live histories go through the same code.
 */
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';

export interface PayloadJson {
  metadata?: Record<string, string>;
  data?: string;
}

/** One history event in proto-JSON form; the attributes sit under `<camelCaseType>EventAttributes`. */
export interface HistoryEventJson {
  eventId: string;
  eventTime: string;
  eventType: string;
  [attributes: string]: unknown;
}

/** An activity Temporal is still retrying, from DescribeWorkflowExecution (not in the history). */
export interface PendingActivityJson {
  activityId: string;
  activityType: string;
  attempt: number;
  maximumAttempts?: number;
  state?: string;
  lastFailure?: string;
  nextAttemptTime?: string;
}

export interface RunHistory {
  workflowId: string;
  runId: string;
  workflowType: string;
  events: HistoryEventJson[];
  /** the run's memo as visibility reports it now (LastError, Paused) */
  memo?: Record<string, unknown>;
  pendingActivities?: PendingActivityJson[];
}

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

// ---------------------------------------------------------------------------------------------
// values: decoding, redaction, compact summaries

/** No value longer than this reaches the output; long opaque strings are not shown at all. */
export const MAX_VALUE_CHARS = 200;
const FIELD_CHARS = 60;
const SUMMARY_CHARS = 160;

const SENSITIVE_KEY = /token|password|passwd|credential|bearer|private|^data$|^stringData$/i;
const TOKEN_LIKE = /eyJ[\w-]{8,}\.[\w-]{8,}|-----BEGIN|\bBearer\s+\S{8,}/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function clip(text: string, max = MAX_VALUE_CHARS): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** A string fit for display, or a placeholder when it could be a credential or an opaque blob. */
function safeString(value: string, key = '', max = FIELD_CHARS): string {
  if (SENSITIVE_KEY.test(key) || TOKEN_LIKE.test(value)) return '<redacted>';
  // a UID is recognisable by its first block; the header carries the object's full UID
  if (UUID.test(value)) return `${value.slice(0, 8)}…`;
  if (value.length > 100 && !/\s/.test(value)) return `<${value.length} chars>`;
  return clip(value, max);
}

const b64 = (s: string | undefined) => (s === undefined ? '' : Buffer.from(s, 'base64').toString('utf8'));

/** undefined for a null payload; a placeholder string for encodings other than plain JSON. */
export function decodePayload(p: PayloadJson | undefined): unknown {
  if (!p) return undefined;
  const encoding = b64(p.metadata?.encoding);
  if (encoding === 'binary/null') return undefined;
  if (encoding !== 'json/plain') return `<${encoding || 'unknown'} payload>`;
  try {
    return JSON.parse(b64(p.data)) as unknown;
  } catch {
    return '<undecodable payload>';
  }
}

function firstPayload(attrs: Attrs, field: string): unknown {
  const payloads = (attrs[field] as { payloads?: PayloadJson[] } | undefined)?.payloads;
  return decodePayload(payloads?.[0]);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Scalar fields that tell one version of an object from another in a signal or write. */
const REF_FIELDS = ['replicas', 'parallelism', 'completions', 'phase', 'generation', 'resourceVersion'] as const;
const REF_LABEL: Record<string, string> = { resourceVersion: 'rv', generation: 'gen' };

/** `web-6f987 replicas=2 rv=11256`, for anything that looks like a Kubernetes object or ref. */
function describeRef(v: Obj): string {
  const parts: string[] = [];
  if (typeof v.type === 'string') parts.push(safeString(v.type));
  if (typeof v.name === 'string') parts.push(safeString(v.name));
  else if (typeof v.resource === 'string') parts.push(`${typeof v.group === 'string' && v.group ? `${v.group}/` : ''}${safeString(v.resource)}`);
  else if (typeof v.uid === 'string') parts.push(`uid ${v.uid.slice(0, 8)}`);
  for (const f of REF_FIELDS) {
    const x = v[f];
    if (typeof x === 'number' || (typeof x === 'string' && x !== '')) parts.push(`${REF_LABEL[f] ?? f}=${safeString(String(x), f, 24)}`);
  }
  if (v.suspend === true) parts.push('suspended');
  if (typeof v.deletionTimestamp === 'string') parts.push('deleting');
  if (typeof v.message === 'string') parts.push(safeString(v.message, 'message', 80));
  return parts.join(' ');
}

const looksLikeRef = (v: Obj) => ['name', 'uid', 'type', 'resource'].some((k) => typeof v[k] === 'string');

function itemLabel(item: unknown): string | undefined {
  if (typeof item === 'string') return UUID.test(item) ? undefined : safeString(item, '', 40);
  if (isObj(item)) {
    if (typeof item.name === 'string') return safeString(item.name, '', 40);
    if (isObj(item.pod) && typeof item.pod.name === 'string') return safeString(item.pod.name, '', 40);
  }
  return undefined;
}

/** `pods 3 (a, b, c)`: the count always, a few names when the items have names. */
function describeList(key: string, items: unknown[]): string {
  const labels = items.slice(0, 3).map(itemLabel);
  const named = labels.every((l) => l !== undefined) && items.length > 0;
  let text = `${key} ${items.length}`;
  if (named) text += ` (${labels.join(', ')}${items.length > 3 ? ', …' : ''})`;
  // a per-item write failure is the answer to "why" more often than not: show the first one
  const firstError = items.find((i) => isObj(i) && typeof i.message === 'string') as Obj | undefined;
  if (firstError) text += `: ${safeString(String(firstError.message), 'message', 100)}`;
  return text;
}

/** `status{replicas=4, readyReplicas=3, conditions 2}`: a plain nested object, its first few fields. */
function describeNested(key: string, v: Obj): string {
  const shown: string[] = [];
  const entries = Object.entries(v).filter(([, x]) => x !== undefined && x !== null);
  for (const [k, x] of entries.slice(0, 5)) {
    if (typeof x === 'number' || typeof x === 'boolean') shown.push(`${k}=${x}`);
    else if (typeof x === 'string') shown.push(`${k}=${safeString(x, k, 30)}`);
    else if (Array.isArray(x)) shown.push(`${k} ${x.length}`);
    else shown.push(k);
  }
  return `${key}{${shown.join(', ')}${entries.length > 5 ? ', …' : ''}}`;
}

/** `owner churn rv=7064 replicas=1, podsDeleted 3, relist`, at most SUMMARY_CHARS long. */
export function summarizeFields(value: unknown, hideWhenTrue: ReadonlySet<string> = new Set()): string {
  if (value === undefined || value === null) return '';
  if (!isObj(value)) {
    if (Array.isArray(value)) return describeList('items', value);
    return typeof value === 'string' ? safeString(value) : String(value);
  }
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if ((v === true && hideWhenTrue.has(k)) || v === undefined || v === null) continue;
    if (Array.isArray(v)) {
      if (v.length === 0 && /^(failed|errors|skipped|gone|unknown)$/.test(k)) continue;
      parts.push(describeList(k, v));
    } else if (typeof v === 'boolean') parts.push(v ? k : `${k}=false`);
    else if (typeof v === 'number') parts.push(`${k}=${v}`);
    else if (typeof v === 'string') {
      if (v !== '') parts.push(`${k}=${safeString(v, k)}`);
    }
    else if (isObj(v)) {
      if (looksLikeRef(v)) parts.push(`${k} ${describeRef(v)}`.trimEnd());
      else if (Object.keys(v).length) parts.push(describeNested(k, v));
    }
  }
  return clip(parts.join(', '), SUMMARY_CHARS);
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

// ---------------------------------------------------------------------------------------------
// history events

type Attrs = Record<string, unknown>;

function attrsOf(e: HistoryEventJson): Attrs {
  for (const [k, v] of Object.entries(e)) if (k.endsWith('EventAttributes') && isObj(v)) return v;
  return {};
}

const typeOf = (e: HistoryEventJson) => e.eventType.replace(/^EVENT_TYPE_/, '');

/** Proto-JSON durations are seconds with a fraction: "43200s", "14.813s". */
export function durationMs(text: unknown): number {
  const m = typeof text === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(text) : null;
  return m ? Math.round(Number(m[1]) * 1000) : 0;
}

const isoMs = (t: string) => new Date(Date.parse(t)).toISOString();

/** The root cause of a Temporal failure, prefixed by the outer messages that add something. */
export function failureText(f: unknown): string {
  const parts: string[] = [];
  let cur: unknown = f;
  for (let depth = 0; isObj(cur) && depth < 5; depth++) {
    const msg = typeof cur.message === 'string' ? cur.message : '';
    const app = isObj(cur.applicationFailureInfo) ? cur.applicationFailureInfo : undefined;
    const type = app && typeof app.type === 'string' && app.type !== 'Error' ? `${app.type}: ` : '';
    if (msg && !parts.some((p) => p.includes(msg))) parts.push(type + msg);
    cur = cur.cause;
  }
  return safeString(parts.join(': ') || 'unknown failure', 'message', MAX_VALUE_CHARS);
}

function searchAttribute(attrs: Attrs, key: string): string | undefined {
  const fields = (attrs.searchAttributes as { indexedFields?: Record<string, PayloadJson> } | undefined)?.indexedFields;
  const v = decodePayload(fields?.[key]);
  return typeof v === 'string' ? v : undefined;
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
  const controller = searchAttribute(startAttrs, 'KcmController') ?? run.workflowId.split('/')[0];
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
        const s = summarizeFields(payload);
        if (name === OBJECT_EVENT_SIGNAL) add(e, 'observed', `event: ${s || '(empty)'}`, { signal: { name, summary: s } });
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

/**
 * The identity of a run from its own first event, for histories read from files (the CLI's
 * `workflow show` output carries no run ID outside the events).
 */
export function runFromHistory(history: { events: HistoryEventJson[] }, fallback: Partial<Pick<RunHistory, 'workflowId' | 'runId'>> = {}): RunHistory {
  const first = history.events[0];
  const a = first ? attrsOf(first) : {};
  const workflowType = (a.workflowType as { name?: string } | undefined)?.name ?? '?';
  const workflowId = typeof a.workflowId === 'string' ? a.workflowId : fallback.workflowId ?? '?';
  const runId = typeof a.originalExecutionRunId === 'string' ? a.originalExecutionRunId : fallback.runId ?? '?';
  return { workflowId, runId, workflowType, events: history.events };
}
