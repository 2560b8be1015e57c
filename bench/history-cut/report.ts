import { type BenchResults, num } from '../lib/report';
import type { RunRecord } from '../lib/runner';
import { median } from '../lib/stats';
import type { CutPlan } from './plan';

/** A run of the history-cut bench: the threshold ours ran with (absent: the default). */
export type CutRecord = RunRecord & { maxHistoryEvents?: number };

export type CutResults = Omit<BenchResults, 'records'> & { records: CutRecord[] };

/** Temporal's limit.historyCount.suggestContinueAsNew default: a run continues there when the threshold is higher */
const SERVER_SUGGESTION = 4096;


function figure(r: CutResults, threshold: number | undefined, key: string): number {
  return median(r.records.filter((x) => x.maxHistoryEvents === threshold && x.sample?.[key] !== undefined).map((x) => x.sample![key]));
}

/** The generated "The continue-as-new threshold" section of docs/BENCHMARKS.md. */
export function renderHistoryCut(r: CutResults, plan: CutPlan, defaultThreshold: number, rawPath: string): string {
  const cols: Array<number | undefined> = [undefined, ...plan.cuts];
  const label = (t: number | undefined) => {
    const v = t ?? defaultThreshold;
    const name = t === undefined ? `default (${v})` : `--max-history-events ${t}`;
    return v > SERVER_SUGGESTION ? `${name}: the server suggests continuing at ${SERVER_SUGGESTION}` : name;
  };
  const vs = (t: number | undefined, key: string, digits: number, scale = 1) => {
    const v = figure(r, t, key) / scale;
    const base = figure(r, undefined, key) / scale;
    return t === undefined || !Number.isFinite(base) || base <= 0 ? num(v, digits) : `${num(v, digits)} (${(v / base).toFixed(2)}x)`;
  };
  // samples from before the task counts have none: the row shows '-'
  const perTask = (t: number | undefined) => {
    const v = (1000 * figure(r, t, 'churn.cpuSeconds')) / figure(r, t, 'churn.workflowTasks');
    const base = (1000 * figure(r, undefined, 'churn.cpuSeconds')) / figure(r, undefined, 'churn.workflowTasks');
    return t === undefined || !Number.isFinite(base) || base <= 0 ? num(v, 1) : `${num(v, 1)} (${(v / base).toFixed(2)}x)`;
  };
  const reps = Math.max(1, r.records.filter((x) => x.maxHistoryEvents === undefined && x.sample).length);
  const cmd = r.mode === 'full' ? '`npm run bench -- --history-cut`' : `\`npm run bench -- --history-cut --${r.mode}\``;
  const out: string[] = [];
  out.push(`## The continue-as-new threshold (${cmd}, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`, '');
  out.push(`${plan.replicaSets} one-replica ReplicaSets, controller replicaset, lifted rate limit, one replica of ours; ` +
    `once with the default threshold and once with each cut, ${reps} repetition${reps === 1 ? '' : 's'} (medians when more). ` +
    `Each ReplicaSet's replicas flipped between 1 and 0 every ${plan.gapMs} ms, all at once, until its runs together held ${plan.events} history events ` +
    '(the same work at every threshold, and just under a multiple of each, so that every threshold\'s open runs are near their longest: the worst case at a restart; the churn); then its runs and its open run\'s history length; then the manager stopped, one pod of each ' +
    'ReplicaSet deleted, and a fresh manager started (no run cached: each ReplicaSet\'s first task replays its open run), timed until every pod is ' +
    `replaced and until every ReplicaSet's status says so. Ratios are to the default. Raw samples: \`${rawPath}\`.`, '');
  const rows: Array<[string, (t: number | undefined) => string]> = [
    ['runs per ReplicaSet after the churn', (t) => num(figure(r, t, 'runs.perReplicaSet'), 1)],
    ['open run history length, median', (t) => vs(t, 'history.p50', 0)],
    ['open run history length, longest', (t) => vs(t, 'history.max', 0)],
    ['churn: time, s', (t) => vs(t, 'churn.ms', 1, 1000)],
    ['churn: manager CPU, s', (t) => vs(t, 'churn.cpuSeconds', 1)],
    ['churn: Temporal server CPU, s', (t) => vs(t, 'churn.temporalCpuSeconds', 1)],
    ['churn: history events, all runs', (t) => vs(t, 'churn.historyEvents', 0)],
    ['churn: manager peak RSS, MiB', (t) => vs(t, 'churn.peakRssMiB', 0)],
    ['churn: workflow tasks, all runs', (t) => vs(t, 'churn.workflowTasks', 0)],
    ['churn: of them on the shared (not sticky) queue', (t) => vs(t, 'churn.nonStickyTasks', 0)],
    ['churn: workflow tasks failed', (t) => vs(t, 'churn.failedTasks', 0)],
    ['churn: of them refused (a signal came in while the task closed the run)', (t) => vs(t, 'churn.refusedTasks', 0)],
    ['churn: manager CPU per workflow task, ms', (t) => perTask(t)],
    ['restart: every deleted pod replaced, s', (t) => vs(t, 'restart.replacedMs', 2, 1000)],
    ['restart: every ReplicaSet settled, s', (t) => vs(t, 'restart.settledMs', 2, 1000)],
    ['restart: manager CPU, s', (t) => vs(t, 'restart.cpuSeconds', 1)],
    ['restart: Temporal server CPU, s', (t) => vs(t, 'restart.temporalCpuSeconds', 1)],
  ];
  out.push(`| | ${cols.map(label).join(' | ')} |`, `| --- | ${cols.map(() => '---:').join(' | ')} |`);
  for (const [name, cell] of rows) out.push(`| ${name} | ${cols.map(cell).join(' | ')} |`);
  out.push('');
  const failed = r.records.filter((x) => x.error);
  if (failed.length) out.push('### Runs that failed', '', ...failed.map((x) => `- ${label(x.maxHistoryEvents)}: ${x.error}`), '');
  return out.join('\n');
}
