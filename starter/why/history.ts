/**
 * Workflow histories as `temporal workflow show -o json` prints them (and as historyToJSON produces,
 * so recorded fixtures and live histories go through the same code): the shapes of events and payloads,
 * and the decoding of payloads, event attributes, durations, failures and search attributes.
 */
import { MAX_VALUE_CHARS, isObj, safeString } from './redaction';
import { ZLIB_ENCODING, unpackZlibPayload } from '../../workers/payload-codec';

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

export type Attrs = Record<string, unknown>;

/** The attributes of an event, whatever its type. */
export function attrsOf(e: HistoryEventJson): Attrs {
  for (const [k, v] of Object.entries(e)) if (k.endsWith('EventAttributes') && isObj(v)) return v;
  return {};
}

export const typeOf = (e: HistoryEventJson) => e.eventType.replace(/^EVENT_TYPE_/, '');

const b64 = (s: string | undefined) => (s === undefined ? '' : Buffer.from(s, 'base64').toString('utf8'));

/** undefined for a null payload; a placeholder string for encodings other than plain JSON. */
export function decodePayload(p: PayloadJson | undefined): unknown {
  if (!p) return undefined;
  const encoding = b64(p.metadata?.encoding);
  if (encoding === 'binary/null') return undefined;
  if (encoding === ZLIB_ENCODING) {
    // a large payload, compressed by the project's codec: the payload it holds, decoded as any other
    try {
      const inner = unpackZlibPayload(Buffer.from(p.data ?? '', 'base64'));
      const b64of = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array()).toString('base64');
      return decodePayload({ metadata: Object.fromEntries(Object.entries(inner.metadata ?? {}).map(([k, v]) => [k, b64of(v)])), data: b64of(inner.data) });
    } catch {
      return '<undecodable payload>';
    }
  }
  if (encoding !== 'json/plain') return `<${encoding || 'unknown'} payload>`;
  try {
    return JSON.parse(b64(p.data)) as unknown;
  } catch {
    return '<undecodable payload>';
  }
}

export function firstPayload(attrs: Attrs, field: string): unknown {
  const payloads = (attrs[field] as { payloads?: PayloadJson[] } | undefined)?.payloads;
  return decodePayload(payloads?.[0]);
}

/** Proto-JSON durations are seconds with a fraction: "43200s", "14.813s". */
export function durationMs(text: unknown): number {
  const m = typeof text === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(text) : null;
  return m ? Math.round(Number(m[1]) * 1000) : 0;
}

export const isoMs = (t: string) => new Date(Date.parse(t)).toISOString();

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

export function searchAttribute(attrs: Attrs, key: string): string | undefined {
  const fields = (attrs.searchAttributes as { indexedFields?: Record<string, PayloadJson> } | undefined)?.indexedFields;
  const v = decodePayload(fields?.[key]);
  return typeof v === 'string' ? v : undefined;
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
