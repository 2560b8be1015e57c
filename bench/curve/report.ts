import type { BenchResults } from '../lib/report';
import { median } from '../lib/stats';
import type { Subject } from '../scenarios/types';
import type { Chart, Series } from './charts';
import { FAILOVER_KILLS, TENTH_PREFIX, roundKey } from './fleet';
import { CurvePlan, OBJECTS_PER_DEPLOYMENT } from './plan';

type Source = 'curve-fleet' | 'scale-up';

/** Median over the repetitions of one figure of one subject at one size; NaN when never measured. */
function figure(r: BenchResults, slug: Source, subject: Subject, size: number, key: string): number {
  return median(r.records.filter((x) => x.slug === slug && x.subject === subject && x.size === size && x.sample?.[key] !== undefined).map((x) => x.sample![key]));
}

const fmt = (v: number, unit: 's' | 'ms' | 'MiB' | 'KiB' | 'x' | 'n' | '/min') => {
  if (!Number.isFinite(v)) return '-';
  switch (unit) {
    case 'ms': return `${Math.round(v)} ms`;
    case 's': return `${v >= 100 ? Math.round(v) : v.toFixed(v >= 10 ? 1 : 2)} s`;
    case 'MiB': return `${Math.round(v)} MiB`;
    case 'KiB': return `${v >= 10 ? Math.round(v) : v.toFixed(1)} KiB`;
    case 'x': return v.toFixed(2);
    case '/min': return v.toFixed(1);
    case 'n': return Number.isInteger(v) || v >= 100 ? String(Math.round(v)) : v.toFixed(v >= 10 ? 1 : 2);
  }
};

const table = (head: string[], rows: string[][]) => [
  `| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i ? '---:' : '---')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`),
];

/** The figure at every size, as a chart line (x = objects). */
function line(r: BenchResults, plan: CurvePlan, name: string, y: (size: number) => number): Series {
  return { name, points: plan.sizes.map((s) => ({ x: s * OBJECTS_PER_DEPLOYMENT, y: y(s) })) };
}

export function curveCharts(r: BenchResults, plan: CurvePlan): Chart[] {
  const f = (slug: Source, who: Subject, key: string) => (s: number) => figure(r, slug, who, s, key);
  const sum = (...fs: Array<(s: number) => number>) => (s: number) => fs.reduce((a, g) => a + g(s), 0);
  const r1 = (k: string) => roundKey(1, k);
  const scaleUp = (who: Subject, key: string) => (s: number) => figure(r, 'scale-up', who, s * OBJECTS_PER_DEPLOYMENT, key);
  return [
    { file: 'curve-catchup-time', title: 'Restart catch-up: start to every object reconciled', yTitle: 'seconds', series: [
      line(r, plan, 'upstream', (s) => f('curve-fleet', 'upstream', r1('convergedMs'))(s) / 1000),
      line(r, plan, 'temporal-kcm', (s) => f('curve-fleet', 'ours', r1('convergedMs'))(s) / 1000),
    ] },
    { file: 'curve-catchup-cpu', title: 'Restart catch-up: CPU', yTitle: 'CPU seconds', series: [
      line(r, plan, 'upstream', f('curve-fleet', 'upstream', r1('cpuSeconds'))),
      line(r, plan, 'temporal-kcm', f('curve-fleet', 'ours', r1('cpuSeconds'))),
      line(r, plan, 'temporal-kcm + Temporal server', sum(f('curve-fleet', 'ours', r1('cpuSeconds')), f('curve-fleet', 'ours', r1('temporalCpuSeconds')))),
    ] },
    { file: 'curve-rss', title: 'Peak RSS, idle and during catch-up', yTitle: 'MiB', series: [
      line(r, plan, 'upstream idle', f('curve-fleet', 'upstream', 'idle.peakRssMiB')),
      line(r, plan, 'upstream catch-up', f('curve-fleet', 'upstream', r1('peakRssMiB'))),
      line(r, plan, 'temporal-kcm idle', f('curve-fleet', 'ours', 'idle.peakRssMiB')),
      line(r, plan, 'temporal-kcm catch-up', f('curve-fleet', 'ours', r1('peakRssMiB'))),
      line(r, plan, 'Temporal server catch-up', f('curve-fleet', 'ours', r1('temporalPeakRssMiB'))),
    ] },
    { file: 'curve-idle-cpu', title: 'Idle CPU per minute', yTitle: 'CPU seconds per minute', series: [
      line(r, plan, 'upstream', (s) => perMinute(r, 'upstream', s, 'idle.cpuSeconds', plan)),
      line(r, plan, 'temporal-kcm', (s) => perMinute(r, 'ours', s, 'idle.cpuSeconds', plan)),
      line(r, plan, 'temporal-kcm + Temporal server', (s) => perMinute(r, 'ours', s, 'idle.cpuSeconds', plan) + perMinute(r, 'ours', s, 'idle.temporalCpuSeconds', plan)),
    ] },
    { file: 'curve-api-calls', title: 'Restart catch-up: API requests (all clients)', yTitle: 'requests', series: [
      line(r, plan, 'upstream', f('curve-fleet', 'upstream', r1('apiRequests'))),
      line(r, plan, 'temporal-kcm', f('curve-fleet', 'ours', r1('apiRequests'))),
    ] },
    { file: 'curve-history', title: 'Restart catch-up: Temporal history events', yTitle: 'events', series: [
      line(r, plan, 'temporal-kcm', f('curve-fleet', 'ours', r1('historyEvents'))),
    ] },
    { file: 'curve-scale-up', title: 'Scale-up of one ReplicaSet: all pods exist', yTitle: 'seconds', series: [
      line(r, plan, 'upstream', (s) => scaleUp('upstream', 'podsExistMs')(s) / 1000),
      line(r, plan, 'temporal-kcm', (s) => scaleUp('ours', 'podsExistMs')(s) / 1000),
    ] },
  ];
}

function perMinute(r: BenchResults, who: Subject, size: number, key: string, plan: CurvePlan): number {
  return (figure(r, 'curve-fleet', who, size, key) / plan.idleS) * 60;
}

/** The generated "Scale curve" section of docs/BENCHMARKS.md. */
export function renderCurve(r: BenchResults, plan: CurvePlan, rawPath: string, chartFiles: string[]): string {
  const up = (size: number, key: string, slug: Source = 'curve-fleet') => figure(r, slug, 'upstream', size, key);
  const ours = (size: number, key: string, slug: Source = 'curve-fleet') => figure(r, slug, 'ours', size, key);
  const objects = (size: number) => size * OBJECTS_PER_DEPLOYMENT;
  const reps = Math.max(1, ...plan.sizes.map((s) => r.records.filter((x) => x.slug === 'curve-fleet' && x.subject === 'ours' && x.size === s && x.sample).length));
  const r1 = (k: string) => roundKey(1, k);
  const kib = (mib: number, size: number) => (mib * 1024) / objects(size);
  const out: string[] = [];
  const cmd = r.mode === 'full' ? '`npm run bench -- --curve`' : `\`npm run bench -- --curve --${r.mode}\``;
  out.push(`## Scale curve (${cmd}, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`, '');
  out.push(`Sizes of ${plan.sizes.join(', ')} one-replica Deployments, so ${plan.sizes.map(objects).join(', ')} objects ` +
    '(each Deployment, its ReplicaSet and its pod), both managers in the same run, alternating which goes first, at the ' +
    `**lifted** client rate limit (qps 1000, burst 2000) so that CPU, not the client's token bucket, bounds both; ${reps} ` +
    `repetition${reps === 1 ? '' : 's'} (medians when more). Controllers: deployment, replicaset. At each size and for each manager: the fleet is created and settles ` +
    `${plan.settleS} s; an idle window of ${plan.idleS} s; the manager is stopped, every Deployment gets a new generation ` +
    'and loses its pod, and a fresh start catches up (timed as in scenario 5, until every Deployment is complete at its ' +
    `generation and no workload write came for ${plan.quietMs / 1000} s), then again with a tenth of the Deployments changed. Ours then repeats the catch-up at the largest size with ` +
    `${plan.replicas.join(' and ')} replicas on one task queue, and ends with a failover. The scale-up is scenario 1 at the same ` +
    `object counts (a ReplicaSet patched from 0 to ${plan.sizes.map(objects).join(', ')} pods). Raw samples: \`${rawPath}\`.`, '');

  out.push('### Idle', '');
  out.push(...table(['objects', 'upstream RSS', 'ours RSS', 'ratio', 'ours RSS per object', 'Temporal RSS', 'upstream CPU/min', 'ours CPU/min', 'ours + Temporal CPU/min', 'ratio (with Temporal)'],
    plan.sizes.map((s) => {
      const cpuUp = (up(s, 'idle.cpuSeconds') / plan.idleS) * 60;
      const cpuOurs = (ours(s, 'idle.cpuSeconds') / plan.idleS) * 60;
      const cpuT = (ours(s, 'idle.temporalCpuSeconds') / plan.idleS) * 60;
      return [String(objects(s)), fmt(up(s, 'idle.peakRssMiB'), 'MiB'), fmt(ours(s, 'idle.peakRssMiB'), 'MiB'), fmt(ours(s, 'idle.peakRssMiB') / up(s, 'idle.peakRssMiB'), 'x'),
        fmt(kib(ours(s, 'idle.peakRssMiB'), s), 'KiB'), fmt(ours(s, 'idle.temporalPeakRssMiB'), 'MiB'), fmt(cpuUp, 's'), fmt(cpuOurs, 's'), fmt(cpuOurs + cpuT, 's'), fmt((cpuOurs + cpuT) / cpuUp, 'x')];
    })), '');
  out.push('Growth of peak RSS per added object, between consecutive sizes (idle):', '');
  out.push(...table(['from -> to objects', 'upstream', 'temporal-kcm'], plan.sizes.slice(1).map((s, i) => {
    const a = plan.sizes[i];
    const g = (who: typeof up) => ((who(s, 'idle.peakRssMiB') - who(a, 'idle.peakRssMiB')) * 1024) / (objects(s) - objects(a));
    return [`${objects(a)} -> ${objects(s)}`, fmt(g(up), 'KiB'), fmt(g(ours), 'KiB')];
  })), '');

  out.push('### Restart catch-up, one replica', '');
  out.push(...table(['objects', 'every object reconciled: upstream', 'ours', 'ratio', 'last write: upstream', 'ours', 'ratio',
    'CPU: upstream', 'ours', 'Temporal', 'peak RSS: upstream', 'ours', 'ratio', 'Temporal RSS'],
  plan.sizes.map((s) => [String(objects(s)),
    fmt(up(s, r1('convergedMs')) / 1000, 's'), fmt(ours(s, r1('convergedMs')) / 1000, 's'), fmt(ours(s, r1('convergedMs')) / up(s, r1('convergedMs')), 'x'),
    fmt(up(s, r1('lastWriteMs')) / 1000, 's'), fmt(ours(s, r1('lastWriteMs')) / 1000, 's'), fmt(ours(s, r1('lastWriteMs')) / up(s, r1('lastWriteMs')), 'x'),
    fmt(up(s, r1('cpuSeconds')), 's'), fmt(ours(s, r1('cpuSeconds')), 's'), fmt(ours(s, r1('temporalCpuSeconds')), 's'),
    fmt(up(s, r1('peakRssMiB')), 'MiB'), fmt(ours(s, r1('peakRssMiB')), 'MiB'), fmt(ours(s, r1('peakRssMiB')) / up(s, r1('peakRssMiB')), 'x'), fmt(ours(s, r1('temporalPeakRssMiB')), 'MiB')])), '');
  out.push('Per object, same catch-up:', '');
  out.push(...table(['objects', 'CPU ms: upstream', 'ours', 'ours + Temporal', 'API requests: upstream', 'ours', 'ours: own API calls', 'ours: history events', 'ours: signals', 'ours: reconciles'],
    plan.sizes.map((s) => {
      const per = (v: number) => v / objects(s);
      return [String(objects(s)), fmt(per(up(s, r1('cpuSeconds')) * 1000), 'n'), fmt(per(ours(s, r1('cpuSeconds')) * 1000), 'n'),
        fmt(per((ours(s, r1('cpuSeconds')) + ours(s, r1('temporalCpuSeconds'))) * 1000), 'n'),
        fmt(per(up(s, r1('apiRequests'))), 'n'), fmt(per(ours(s, r1('apiRequests'))), 'n'), fmt(per(ours(s, r1('ourApiCalls'))), 'n'),
        fmt(per(ours(s, r1('historyEvents'))), 'n'), fmt(per(ours(s, r1('signalsSent'))), 'n'), fmt(per(ours(s, r1('reconciles'))), 'n')];
    })), '');

  const p10 = (k: string) => `${TENTH_PREFIX}.${k}`;
  out.push('### Restart catch-up, a tenth of the objects changed, one replica', '');
  out.push('The same restart with a tenth of the Deployments given a new generation and one pod less. Upstream resyncs every object it lists; ' +
    'ours resumes its watch where it stopped and signals the objects that changed (after a relist, its signal gates hold the events that need no work). CPU with Temporal is ours plus the Temporal server\'s.', '');
  out.push(...table(['objects', 'every object reconciled: upstream', 'ours', 'ratio', 'last write: upstream', 'ours', 'ratio',
    'CPU: upstream', 'ours', 'ours + Temporal', 'ratio (with Temporal)', 'ours: signals', 'ours: reconciles', 'ours: history events'],
  plan.sizes.map((s) => {
    const cpu = ours(s, p10('cpuSeconds')) + ours(s, p10('temporalCpuSeconds'));
    return [String(objects(s)),
      fmt(up(s, p10('convergedMs')) / 1000, 's'), fmt(ours(s, p10('convergedMs')) / 1000, 's'), fmt(ours(s, p10('convergedMs')) / up(s, p10('convergedMs')), 'x'),
      fmt(up(s, p10('lastWriteMs')) / 1000, 's'), fmt(ours(s, p10('lastWriteMs')) / 1000, 's'), fmt(ours(s, p10('lastWriteMs')) / up(s, p10('lastWriteMs')), 'x'),
      fmt(up(s, p10('cpuSeconds')), 's'), fmt(ours(s, p10('cpuSeconds')), 's'), fmt(cpu, 's'), fmt(cpu / up(s, p10('cpuSeconds')), 'x'),
      fmt(ours(s, p10('signalsSent')), 'n'), fmt(ours(s, p10('reconciles')), 'n'), fmt(ours(s, p10('historyEvents')), 'n')];
  })), '');

  out.push('### Scale-up, lifted rate limit', '');
  out.push(...table(['pods', 'all exist: upstream', 'ours', 'ratio', 'all Ready: upstream', 'ours', 'ratio', 'CPU: upstream', 'ours', 'Temporal', 'peak RSS: upstream', 'ours'],
    plan.sizes.map(objects).map((n) => [String(n),
      fmt(up(n, 'podsExistMs', 'scale-up') / 1000, 's'), fmt(ours(n, 'podsExistMs', 'scale-up') / 1000, 's'), fmt(ours(n, 'podsExistMs', 'scale-up') / up(n, 'podsExistMs', 'scale-up'), 'x'),
      fmt(up(n, 'readyMs', 'scale-up') / 1000, 's'), fmt(ours(n, 'readyMs', 'scale-up') / 1000, 's'), fmt(ours(n, 'readyMs', 'scale-up') / up(n, 'readyMs', 'scale-up'), 'x'),
      fmt(up(n, 'cpuSeconds', 'scale-up'), 's'), fmt(ours(n, 'cpuSeconds', 'scale-up'), 's'), fmt(ours(n, 'temporalCpuSeconds', 'scale-up'), 's'),
      fmt(up(n, 'peakRssMiB', 'scale-up'), 'MiB'), fmt(ours(n, 'peakRssMiB', 'scale-up'), 'MiB')])), '');

  const largest = plan.sizes[plan.sizes.length - 1];
  out.push(`### Horizontal scaling at ${objects(largest)} objects (ours only; upstream runs one leader)`, '');
  out.push('Each row is one more catch-up of the same fleet, after a fresh perturbation, in this order; CPU and RSS are summed over the replicas. ' +
    '"Watch moves" counts how often the watch activity started again on another replica during the catch-up, after the stopped replicas\' attempt had already failed (so any is a needless move); ' +
    '"replicas watching" is the most replicas seen with a watch open at once, sampled every second.', '');
  out.push(...table(['replicas', 'every object reconciled', 'speed-up', 'last write', 'manager CPU', 'Temporal CPU', 'peak RSS (sum)', 'watch moves', 'replicas watching'],
    [1, ...plan.replicas].map((n) => [String(n), fmt(ours(largest, roundKey(n, 'convergedMs')) / 1000, 's'),
      fmt(ours(largest, roundKey(1, 'convergedMs')) / ours(largest, roundKey(n, 'convergedMs')), 'x'),
      fmt(ours(largest, roundKey(n, 'lastWriteMs')) / 1000, 's'), fmt(ours(largest, roundKey(n, 'cpuSeconds')), 's'), fmt(ours(largest, roundKey(n, 'temporalCpuSeconds')), 's'),
      fmt(ours(largest, roundKey(n, 'peakRssMiB')), 'MiB'), fmt(ours(largest, roundKey(n, 'watchMoves')), 'n'), fmt(ours(largest, roundKey(n, 'mostReplicasWatching')), 'n')])), '');
  out.push(`### Failover at ${objects(largest)} objects, default flags`, '');
  out.push(`After the last catch-up, the replica running the watch is killed with \`kill -9\` and a pod deleted at once, ${FAILOVER_KILLS} times, ` +
    'a new replica started after each kill; from the kill:', '');
  out.push(...table(['measure', 'median', 'worst'], [
    ['the watch activity running on another replica', 'watchMoved'],
    ['that replica watching every resource again (resumed at the last position, or relisted)', 'watching'],
    ['the deleted pod replaced', 'replaced'],
    ['every reconcile after the move done (reconcile counters still for 5 s)', 'quiet'],
  ].map(([label, k]) => [label, fmt(ours(largest, `failover.${k}Ms`), 'ms'), fmt(ours(largest, `failover.${k}WorstMs`), 'ms')])
    .concat([['reconciles from the replacement until quiet', fmt(ours(largest, 'failover.reconciles'), 'n'), fmt(ours(largest, 'failover.reconcilesWorst'), 'n')]])), '');
  if (chartFiles.length) {
    out.push('### Charts', '', ...chartFiles.map((f) => `![${f}](${f})`), '');
  }
  const failed = r.records.filter((x) => x.error);
  if (failed.length) out.push('### Runs that failed', '', ...failed.map((x) => `- ${x.slug} ${x.subject} size ${x.size}: ${x.error}`), '');
  return out.join('\n');
}
