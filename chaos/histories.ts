/**
 * Invariants read from the Temporal histories of a pass of ours: no Secret's bytes in any history
 * or manager log, and no run over its history budget. Histories are what Temporal keeps for as
 * long as its retention says, readable by whoever reads the namespace; a Secret's value there
 * would leak past the API server's access control.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { KubeRest } from '../activities/kube/rest';
import { connectTemporal } from '../bench/lib/temporal';
import { RUN_DEFAULTS } from '../starter/run-options';
import { deploymentQueuesQuery } from '../workflows/runtime/task-queues';
import { unpackZlibPayload, ZLIB_ENCODING } from '../workers/payload-codec';

/**
 * The value every Secret the chaos run makes carries (the planted one and the namespace
 * scenario's): 32 random bytes, hex, new for each run, so no text outside this run can hold it.
 */
export const CHAOS_SECRET_VALUE = randomBytes(32).toString('hex');
export const PLANTED_SECRET_NAME = 'chaos-planted';

/** One form the value may take where it leaked. */
export interface Needle {
  form: 'raw' | 'base64';
  text: string;
}

/**
 * The value as written, and as base64 however it is aligned inside a longer base64 text: a
 * Secret's `data` holds base64 of the value alone, but an object holding the Secret may itself be
 * base64-encoded whole, and there the value's encoding depends on its offset mod 3. For each
 * offset the needle is the run of characters that encode the value's bytes only (the first group,
 * shared with what comes before, and the last, shared with what comes after, are left out).
 */
export function secretNeedles(value: string): Needle[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: Needle[] = [{ form: 'raw', text: value }];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const whole = Math.floor((shift + bytes.length) / 3) * 4;
    out.push({ form: 'base64', text: b64.slice(shift ? 4 : 0, whole) });
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

/** A payload (metadata and data) compressed by our codec: its data is the zlib of another payload. */
function zlibPayloadData(node: Record<string, unknown>): Uint8Array | undefined {
  const meta = node.metadata;
  if (!isRecord(meta) || !isBytes(meta.encoding) || !isBytes(node.data)) return undefined;
  if (Buffer.from(meta.encoding).toString() !== ZLIB_ENCODING) return undefined;
  return unpackZlibPayload(node.data).data ?? new Uint8Array();
}

/**
 * Every text in one history event, as it would read decoded: each payload's data (JSON, and
 * inflated first when our codec compressed it), every other byte field, and every string (failure
 * messages, memo and search attribute keys, identities). Walks the event's fields, whatever its
 * type, so a payload in an attribute added later is not missed.
 */
export function eventTexts(event: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string') out.push(v);
    else if (isBytes(v)) out.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (isRecord(v)) {
      const inflated = zlibPayloadData(v);
      if (inflated) out.push(Buffer.from(inflated).toString('utf8'));
      for (const x of Object.values(v)) walk(x, depth + 1);
    }
  };
  walk(event, 0);
  return out;
}

/** The forms of the value found in the texts, each once. */
export function needlesIn(texts: Iterable<string>, needles: Needle[]): Array<Needle['form']> {
  const found = new Set<Needle['form']>();
  for (const t of texts) for (const n of needles) if (t.includes(n.text)) found.add(n.form);
  return [...found].sort();
}

/** One run's events as the checks read them: the event type's name, and the event itself for its texts. */
export interface RunHistory {
  workflowId: string;
  runId: string;
  events: Array<{ type: string; event: unknown }>;
}

/** Where a run's history holds the value: one line per event that does (without the value). */
export function secretLeaks(run: RunHistory, needles: Needle[]): string[] {
  return run.events.flatMap((e, i) => {
    const forms = needlesIn(eventTexts(e.event), needles);
    return forms.length ? [`history of ${run.workflowId} (run ${run.runId}) event ${i + 1} (${e.type}) holds the planted Secret's value (${forms.join(', ')})`] : [];
  });
}

/** Where a log's text holds the value, by line number. */
export function logLeaks(name: string, text: string, needles: Needle[]): string[] {
  return text.split('\n').flatMap((line, i) => {
    const forms = needlesIn([line], needles);
    return forms.length ? [`manager log ${name} line ${i + 1} holds the planted Secret's value (${forms.join(', ')})`] : [];
  });
}

/**
 * How far past `--max-history-events` a run may go. The object loop compares the length with the
 * threshold after each reconcile and continues as new at the first comparison that reaches it
 * (workflows/runtime/object-loop.ts), so a run passes the threshold by what it wrote since the
 * comparison before: the one reconcile that crosses it and the task that continues as new. That
 * reconcile is at most 5 activities in sequence in the scenarios' controllers (an endpointslice
 * sync reads the pods and the slices, then creates, updates and deletes), 6 events each
 * (scheduled, started, completed, and the workflow task that takes the result: scheduled,
 * started, completed), 30; the task that continues as new is 6 (the 1 ms timer started and fired,
 * its workflow task, the continued-as-new event). The rest, 64, is for what arrives meanwhile:
 * one event per signal from the watch, three per workflow task a killed replica held (timed out,
 * scheduled again, started). A run past this did more than one reconcile's work past its
 * threshold, or one reconcile whose history grows with the size of what it works on.
 */
export const HISTORY_MARGIN = 100;

/** Runs longer than threshold + margin, each with what its events past the threshold were. */
export function overBudget(runs: Array<{ workflowId: string; runId: string; types: string[] }>, threshold: number, margin: number): string[] {
  const budget = threshold + margin;
  return runs.filter((r) => r.types.length > budget).map((r) => {
    const past = new Map<string, number>();
    for (const t of r.types.slice(threshold)) past.set(t, (past.get(t) ?? 0) + 1);
    const top = [...past].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 4).map(([t, n]) => `${n} ${t}`).join(', ');
    return `history of ${r.workflowId} (run ${r.runId}): ${r.types.length} events, over the budget of ${budget} (--max-history-events ${threshold} + ${margin}); past the threshold: ${top}`;
  });
}

const EVENT_PREFIX = 'EVENT_TYPE_';
const eventTypeName = (t: temporal.api.enums.v1.EventType | null | undefined) =>
  (temporal.api.enums.v1.EventType[t ?? 0] ?? String(t)).replace(EVENT_PREFIX, '');

/** The Secret the check looks for, in the scenario's namespace before anything else is made there. */
export async function plantSecret(rest: KubeRest, ns: string): Promise<void> {
  await rest.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name: PLANTED_SECRET_NAME }, type: 'Opaque', stringData: { token: CHAOS_SECRET_VALUE } },
  });
}

/**
 * Both checks over one pass of ours: every run (open and closed, every continue-as-new) of every
 * workflow on the pass's task queue and the per-controller queues under it, and the replicas'
 * log files. A check that cannot run says so as a violation rather than passing unread.
 */
export async function historyViolations(o: { temporalAddress: string; taskQueue: string; logFiles: string[]; threshold?: number; log?: (line: string) => void }): Promise<string[]> {
  const needles = secretNeedles(CHAOS_SECRET_VALUE);
  const out: string[] = [];
  for (const f of [...new Set(o.logFiles)]) {
    try {
      out.push(...logLeaks(path.basename(f), fs.readFileSync(f, 'utf8'), needles));
    } catch (e) {
      out.push(`manager log ${f} could not be read: ${String(e)}`);
    }
  }
  let handle: Awaited<ReturnType<typeof connectTemporal>> | undefined;
  try {
    handle = await connectTemporal(o.temporalAddress);
    const lengths: Array<{ workflowId: string; runId: string; types: string[] }> = [];
    let runs = 0;
    for await (const w of handle.client.workflow.list({ query: deploymentQueuesQuery(o.taskQueue) })) {
      runs++;
      const history = await handle.client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      const events = (history.events ?? []).map((e) => ({ type: eventTypeName(e.eventType), event: e }));
      out.push(...secretLeaks({ workflowId: w.workflowId, runId: w.runId, events }, needles));
      lengths.push({ workflowId: w.workflowId, runId: w.runId, types: events.map((e) => e.type) });
    }
    // a pass always has runs (the informer's at least): none means the query missed them
    if (!runs) out.push(`no workflow run found on task queue ${o.taskQueue}: the history check read nothing`);
    const longest = lengths.reduce<(typeof lengths)[number] | undefined>((a, b) => (a && a.types.length >= b.types.length ? a : b), undefined);
    o.log?.(`history check: ${runs} runs and ${new Set(o.logFiles).size} logs read; longest run ${longest ? `${longest.types.length} events (${longest.workflowId})` : '-'}`);
    out.push(...overBudget(lengths, o.threshold ?? RUN_DEFAULTS.maxHistoryEvents, HISTORY_MARGIN));
  } catch (e) {
    out.push(`the history check could not finish: ${String(e)}`);
  } finally {
    await handle?.close();
  }
  return out;
}
