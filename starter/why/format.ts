/**
 * The terminal form of a reconcile timeline. The JSON form is the Timeline itself.
 * Times are UTC, as Temporal records them, so a timeline reads the same on every machine.
 */
import { formatDuration, type ErrorNote, type RunSummary, type Timeline, type TimelineEntry } from './timeline';

export interface FormatOptions {
  color?: boolean;
  /** when given, the footer says how far off the next timer is */
  now?: number;
}

const RED = '\x1b[31m';
const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

const clock = (iso: string) => iso.slice(11, 23);
const day = (iso: string) => iso.slice(0, 10);
const stamp = (iso: string) => `${day(iso)} ${clock(iso)}`;

/** One line per object name; several UIDs under one name are objects deleted and made again. */
function objectLines(t: Timeline): string[] {
  if (!t.objects.length) return ['(unknown object)'];
  const byName = new Map<string, string[]>();
  for (const o of t.objects) {
    const where = !o.name ? '(controller-wide)' : o.namespace && o.namespace !== o.name ? `${o.namespace}/${o.name}` : o.name;
    const key = `${o.kind} ${where}`;
    byName.set(key, [...(byName.get(key) ?? []), ...(o.uid ? [o.uid] : [])]);
  }
  return [...byName].map(([key, uids]) =>
    uids.length === 0 ? key : uids.length === 1 ? `${key}  uid ${uids[0]}` : `${key}  (${uids.length} objects by this name over time: uid ${uids.join(', ')})`,
  );
}

function workflowLines(runs: RunSummary[]): string[] {
  const byId = new Map<string, RunSummary[]>();
  for (const r of runs) byId.set(r.workflowId, [...(byId.get(r.workflowId) ?? []), r]);
  const lines: string[] = [];
  for (const [id, rs] of byId) {
    const last = rs[rs.length - 1];
    const since = rs[0].startedAt ? ` since ${stamp(rs[0].startedAt)}` : '';
    const closed = last.closedAt && last.status !== 'running' ? ` at ${stamp(last.closedAt)}` : '';
    lines.push(
      `  ${id}  ${last.workflowType}  ${rs.length} run${rs.length === 1 ? '' : 's'}${since}, latest ${last.runId.slice(0, 8)} ${last.status}${closed}`,
    );
  }
  return lines;
}

function errorLine(e: ErrorNote, failing: boolean): string {
  const where = e.activity ? `${e.activity}${e.attempts && e.attempts > 1 ? ` (attempt ${e.attempts})` : ''}: ` : '';
  const when = `${stamp(e.at)} ${e.controller}`;
  return failing ? `failing (${e.source}, ${when}): ${where}${e.message}` : `last error (since healed; ${e.source}, ${when}): ${where}${e.message}`;
}

export function formatTimeline(t: Timeline, opts: FormatOptions = {}): string {
  const paint = (code: string, s: string) => (opts.color ? `${code}${s}${RESET}` : s);
  const out: string[] = [];
  for (const line of objectLines(t)) out.push(paint(BOLD, line));
  out.push(...workflowLines(t.runs));
  out.push(`state: ${t.state}${t.failing ? ', failing' : ''}`);
  out.push('');

  const width = Math.max(0, ...t.entries.map((e) => e.controller.length));
  let currentDay = '';
  for (const e of t.entries) {
    if (day(e.time) !== currentDay) {
      currentDay = day(e.time);
      out.push(paint(DIM, `-- ${currentDay} (UTC) --`));
    }
    out.push(entryLine(e, width, paint));
  }
  if (!t.entries.length) out.push('(no events)');

  out.push('');
  if (t.nextTimer) {
    const n = t.nextTimer;
    const inText = opts.now !== undefined ? `, in ${formatDuration(Math.max(0, Date.parse(n.firesAt) - opts.now))}` : '';
    out.push(`next timer: ${n.controller} timer ${n.timerId} (${formatDuration(n.durationMs)}) fires at ${stamp(n.firesAt)} UTC${inText}`);
  } else out.push(`next timer: none${t.state === 'running' ? ' (waiting for an event)' : ''}`);
  if (t.lastError) {
    const line = errorLine(t.lastError, t.failing);
    out.push(t.failing ? paint(RED, `! ${line}`) : line);
  } else out.push('last error: none');
  return out.join('\n') + '\n';
}

function entryLine(e: TimelineEntry, width: number, paint: (code: string, s: string) => string): string {
  const mark = e.alert ? '!' : ' ';
  const line = `${mark}${clock(e.time)}  ${e.controller.padEnd(width)}  ${e.what}`;
  if (e.alert) return paint(RED, line);
  if (e.kind === 'waiting' && e.timer?.state === 'cancelled') return paint(DIM, line);
  return line;
}
