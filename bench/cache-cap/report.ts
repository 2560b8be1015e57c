import { type BenchResults, num, withRatio } from '../lib/report';
import type { RunRecord } from '../lib/runner';
import { median } from '../lib/stats';
import { EVENT_DRIVEN_CACHED_RUNS } from '../../workers/workflow-cache';
import { uncapped, type CapPlan } from './plan';

/**
 * A run of the cache-cap bench: the cap ours ran with (absent: every run cached, or upstream), and
 * whether settled runs were left to their resync (`--unsettled`).
 */
export type CapRecord = RunRecord & { cap?: number; unsettled?: boolean };

export type CapResults = Omit<BenchResults, 'records'> & { records: CapRecord[] };

/** Who a column is: upstream, ours with every run cached, or ours with a cap (and settled runs left to their resync). */
type Column = { subject: 'upstream' } | { subject: 'ours'; cap?: number; unsettled?: boolean };

function figure(r: CapResults, c: Column, key: string): number {
  const cap = c.subject === 'ours' ? c.cap : undefined;
  const unsettled = c.subject === 'ours' && c.unsettled === true;
  return median(r.records.filter((x) => x.slug === 'cache-cap' && x.subject === c.subject && x.cap === cap && (x.unsettled === true) === unsettled && x.sample?.[key] !== undefined).map((x) => x.sample![key]));
}


/** The generated "The workflow cache cap" section of docs/BENCHMARKS.md. */
export function renderCacheCap(r: CapResults, plan: CapPlan, rawPath: string): string {
  const unsettledRun = r.records.some((x) => x.unsettled);
  const cols: Column[] = [{ subject: 'upstream' }, { subject: 'ours' }, ...plan.caps.flatMap((cap) => [
    { subject: 'ours' as const, cap },
    ...(unsettledRun ? [{ subject: 'ours' as const, cap, unsettled: true }] : []),
  ])];
  const label = (c: Column) => (c.subject === 'upstream' ? 'upstream' : c.cap === undefined ? 'ours, every run cached'
    : c.unsettled ? `ours, cap ${c.cap}, \`--settled-continue-as-new 0\`` : `ours, cap ${c.cap}${c.cap === EVENT_DRIVEN_CACHED_RUNS ? ' (the default)' : ''}`);
  const up = (key: string) => figure(r, { subject: 'upstream' }, key);
  const reps = Math.max(1, r.records.filter((x) => x.slug === 'cache-cap' && x.subject === 'upstream' && x.sample).length);
  const cmd = r.mode === 'full' ? '`npm run bench -- --cache-cap`' : `\`npm run bench -- --cache-cap --${r.mode}\``;
  const out: string[] = [];
  out.push(`## The workflow cache cap (${cmd}, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`, '');
  out.push(`${plan.size} one-replica Deployments (${plan.size} Deployment and ${plan.size} ReplicaSet runs, so ${plan.size} per controller), ` +
    'controllers deployment and replicaset, lifted rate limit, one replica; upstream once, ours with every run cached ' +
    `(\`--max-cached-workflows ${uncapped(plan.size)}\`, as the Temporal SDK's default of about 2,300 per controller did before ours became ${EVENT_DRIVEN_CACHED_RUNS}) and with \`--max-cached-workflows\` ${plan.caps.join(' and ')} ` +
    `(per controller)${unsettledRun ? ', each cap once more with `--settled-continue-as-new 0` (a settled run keeps its history until its resync, as before settled runs continued as new)' : ''}, in that order; ${reps} repetition${reps === 1 ? '' : 's'} (medians when more). For each: the fleet is created and settles ${plan.settleS} s; ` +
    `an idle window of ${plan.idleS} s; pods of ${plan.deletes} Deployments spread over the fleet deleted one at a time, each timed from the DELETE ` +
    'to the watch showing its replacement (with a cap below the fleet, most of these wake a run that is not cached, so it is replayed first); ' +
    `then the restart catch-up of the curve (every Deployment a new generation and one pod less, a fresh start timed until complete and ${plan.quietMs / 1000} s without a write). ` +
    `Ratios are to upstream. Raw samples: \`${rawPath}\`.`, '');
  const rows: Array<[string, (c: Column) => string]> = [
    ['runs in the workflow caches, idle', (c) => (c.subject === 'ours' ? num(figure(r, c, 'idle.cachedRuns')) : '-')],
    ['idle peak RSS, MiB', (c) => withRatio(figure(r, c, 'idle.peakRssMiB'), up('idle.peakRssMiB'), num(figure(r, c, 'idle.peakRssMiB')))],
    ['idle CPU per minute, s (ours: + Temporal server)', (c) => {
      const own = figure(r, c, 'idle.cpuPerMin');
      const t = c.subject === 'ours' ? figure(r, c, 'idle.temporalCpuPerMin') : 0;
      return withRatio(own + t, up('idle.cpuPerMin'), c.subject === 'ours' ? `${num(own, 2)} + ${num(t, 2)}` : num(own, 2));
    }],
    ['pod deleted -> replaced, p50, ms', (c) => withRatio(figure(r, c, 'reaction.p50Ms'), up('reaction.p50Ms'), num(figure(r, c, 'reaction.p50Ms')))],
    ['pod deleted -> replaced, worst, ms', (c) => withRatio(figure(r, c, 'reaction.maxMs'), up('reaction.maxMs'), num(figure(r, c, 'reaction.maxMs')))],
    [`CPU over the ${plan.deletes} replacements, s`, (c) => withRatio(figure(r, c, 'reaction.cpuSeconds'), up('reaction.cpuSeconds'), num(figure(r, c, 'reaction.cpuSeconds'), 1))],
    ['catch-up: every object reconciled, s', (c) => withRatio(figure(r, c, 'catchUp.convergedMs'), up('catchUp.convergedMs'), num(figure(r, c, 'catchUp.convergedMs') / 1000, 1))],
    ['catch-up: last write, s', (c) => withRatio(figure(r, c, 'catchUp.lastWriteMs'), up('catchUp.lastWriteMs'), num(figure(r, c, 'catchUp.lastWriteMs') / 1000, 1))],
    ['catch-up: manager CPU, s', (c) => withRatio(figure(r, c, 'catchUp.cpuSeconds'), up('catchUp.cpuSeconds'), num(figure(r, c, 'catchUp.cpuSeconds'), 1))],
    ['catch-up: Temporal server CPU, s', (c) => (c.subject === 'ours' ? num(figure(r, c, 'catchUp.temporalCpuSeconds'), 1) : '-')],
    ['catch-up: manager peak RSS, MiB', (c) => withRatio(figure(r, c, 'catchUp.peakRssMiB'), up('catchUp.peakRssMiB'), num(figure(r, c, 'catchUp.peakRssMiB')))],
    ['catch-up: history events', (c) => (c.subject === 'ours' ? num(figure(r, c, 'catchUp.historyEvents')) : '-')],
  ];
  out.push(`| | ${cols.map(label).join(' | ')} |`, `| --- | ${cols.map(() => '---:').join(' | ')} |`);
  for (const [name, cell] of rows) out.push(`| ${name} | ${cols.map(cell).join(' | ')} |`);
  out.push('');

  const replay = r.records.find((x) => x.slug === 'replay-cost' && x.sample)?.sample;
  if (replay) {
    out.push('### What a replay costs, by history length', '');
    out.push('One ReplicaSet\'s replicas flipped between 1 and 0 every 100 ms until its run\'s history was long (a run continues as new at 4,096 ' +
      'events, where the Temporal server suggests it, or at `--max-history-events`); prefixes of that history, each ending at a completed workflow task, replayed by one replay worker on ' +
      'the prebuilt bundle, as a worker rebuilds a run it did not keep (median of 3 replays each; the run\'s whole history is fetched from ' +
      'Temporal before that, not timed here).', '');
    out.push('| history events | replay, ms | per event, µs |', '| ---: | ---: | ---: |');
    for (let i = 0; replay[`events.${i}`] !== undefined; i++) {
      const n = replay[`events.${i}`];
      const ms = replay[`replayMs.${i}`];
      out.push(`| ${n} | ${num(ms)} | ${num((ms * 1000) / n)} |`);
    }
    out.push('');
  }
  const failed = r.records.filter((x) => x.error);
  if (failed.length) out.push('### Runs that failed', '', ...failed.map((x) => `- ${x.slug} ${x.subject}${x.cap !== undefined ? ` cap ${x.cap}` : ''}${x.unsettled ? ' unsettled' : ''}: ${x.error}`), '');
  return out.join('\n');
}
