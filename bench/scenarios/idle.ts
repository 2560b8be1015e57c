import { warmUp } from '../lib/workloads';
import { sleep } from '../lib/util';
import { createFleet } from './fleet';
import { Mode, Scenario } from './types';

const size = (mode: Mode) => ({
  full: { deployments: 200, windowS: 300, baselineS: 30, settleS: 15 },
  quick: { deployments: 30, windowS: 60, baselineS: 15, settleS: 5 },
  smoke: { deployments: 5, windowS: 10, baselineS: 5, settleS: 2 },
})[mode];

export const idle: Scenario = {
  id: 6,
  slug: 'idle',
  title: 'Idle cost',
  method: (mode) => {
    const s = size(mode);
    return `${s.deployments} one-replica Deployments, complete and left alone for ${s.settleS} s; then a ${s.windowS} s window ` +
      'with nothing changing. CPU seconds and peak RSS of the manager process (ours: the `run` process; the Temporal dev ' +
      'server separately), API requests per minute from the API server\'s `apiserver_request_total` (all clients: the ' +
      `baseline row is the same counter over ${s.baselineS} s before the manager starts, kube-scheduler and kwok only), and ` +
      'Temporal history events per minute on the task queue. Controllers: deployment, replicaset.';
  },
  settings: () => ['default'],
  // five-minute windows: two repetitions already take half an hour
  reps: (mode) => ({ full: 2, quick: 1, smoke: 1 })[mode],
  subjects: ['upstream', 'ours'],
  metrics: [
    { key: 'cpuSeconds', label: 'manager CPU over the window', unit: 's' },
    { key: 'peakRssMiB', label: 'manager peak RSS', unit: 'MiB' },
    { key: 'apiPerMin', label: 'API requests per minute (all clients)', unit: '/min' },
    { key: 'baselineApiPerMin', label: 'API requests per minute, no manager running', unit: '/min', noRatio: true },
    { key: 'temporalCpuSeconds', label: 'Temporal server CPU over the window', unit: 's', only: 'ours' },
    { key: 'temporalPeakRssMiB', label: 'Temporal server peak RSS', unit: 'MiB', only: 'ours' },
    { key: 'historyPerMin', label: 'Temporal history events per minute', unit: '/min', only: 'ours' },
    { key: 'signalsPerMin', label: 'signals sent per minute', unit: '/min', only: 'ours' },
    { key: 'ourApiPerMin', label: 'API calls by temporal-kcm per minute (its own counter)', unit: '/min', only: 'ours' },
  ],
  async run(ctx) {
    const s = size(ctx.mode);
    const { rest } = ctx.stack;
    const baseline = await ctx.openWindow(() => []);
    await sleep(s.baselineS * 1000);
    const base = await baseline.close();

    const m = await ctx.startManager({ controllers: ['replicaset', 'deployment'] });
    await warmUp(rest, ctx.ns);
    await createFleet(rest, ctx.ns, s.deployments, 1);
    await sleep(s.settleS * 1000);
    const window = await ctx.openWindow(() => [m]);
    await sleep(s.windowS * 1000);
    const use = await window.close();
    const perMin = (n: number) => (n / use.seconds) * 60;
    const out: Record<string, number> = {
      cpuSeconds: use.cpuSeconds,
      peakRssMiB: use.peakRssMiB,
      apiPerMin: perMin(use.apiRequests),
      baselineApiPerMin: (base.apiRequests / base.seconds) * 60,
    };
    if (use.temporalCpuSeconds !== undefined) out.temporalCpuSeconds = use.temporalCpuSeconds;
    if (use.temporalPeakRssMiB !== undefined) out.temporalPeakRssMiB = use.temporalPeakRssMiB;
    if (use.historyEvents !== undefined) out.historyPerMin = perMin(use.historyEvents);
    if (use.counters) {
      out.signalsPerMin = perMin(use.counters.signalsSent);
      out.ourApiPerMin = perMin(use.counters.ourApiCalls);
    }
    return out;
  },
};
