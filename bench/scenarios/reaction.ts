import { PodWatch } from '../lib/pods';
import { percentile } from '../lib/stats';
import { createReplicaSet, getReplicaSet, replicaSetSettled, warmUp } from '../lib/workloads';
import { waitFor } from '../lib/util';
import { Mode, RESOURCE_METRICS, Scenario, resourceSample } from './types';

const size = (mode: Mode) => ({ full: { replicas: 100, deletes: 100 }, quick: { replicas: 20, deletes: 20 }, smoke: { replicas: 5, deletes: 3 } })[mode];

export const reaction: Scenario = {
  id: 2,
  slug: 'reaction',
  title: 'Reaction to pod deletion',
  method: (mode) => `A ${size(mode).replicas}-replica ReplicaSet, settled; ${size(mode).deletes} of its pods deleted one at a time, each ` +
    'after the previous one was replaced; latency from the DELETE call to the watch showing the replacement pod. ' +
    'p50/p99 are over the deletions of one repetition; the table shows their median over repetitions. Controllers: replicaset.',
  settings: () => ['default'],
  reps: (mode) => ({ full: 3, quick: 1, smoke: 1 })[mode],
  subjects: ['upstream', 'ours'],
  metrics: [
    { key: 'p50Ms', label: 'delete -> replacement created, p50', unit: 'ms' },
    { key: 'p99Ms', label: 'delete -> replacement created, p99', unit: 'ms' },
    { key: 'maxMs', label: 'delete -> replacement created, max', unit: 'ms' },
    ...RESOURCE_METRICS,
  ],
  async run(ctx) {
    const { replicas, deletes } = size(ctx.mode);
    const { rest } = ctx.stack;
    const m = await ctx.startManager({ controllers: ['replicaset'] });
    await warmUp(rest, ctx.ns);
    await createReplicaSet(rest, ctx.ns, 'web', replicas);
    await waitFor('ReplicaSet settled', async () => replicaSetSettled(await getReplicaSet(rest, ctx.ns, 'web')), 120_000 + replicas * 1000, 250);
    const watch = await PodWatch.start(ctx.stack, ctx.ns);
    const latencies: number[] = [];
    try {
      const window = await ctx.openWindow(() => [m]);
      for (let i = 0; i < deletes; i++) {
        const victim = watch.live('web')[0];
        if (!victim) throw new Error('no live pod to delete');
        const t0 = Date.now();
        await rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods/${victim.name}`, {
          body: { preconditions: { uid: victim.uid }, gracePeriodSeconds: 0 },
        });
        const at = await watch.until(`replacement ${i + 1}`, () => watch.seenSince(t0, 'web').some((p) => p.uid !== victim.uid), 60_000);
        latencies.push(Math.min(at, ...watch.seenSince(t0, 'web').map((p) => p.seenAt)) - t0);
      }
      const use = await window.close();
      return { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: Math.max(...latencies), ...resourceSample(use) };
    } finally {
      watch.stop();
    }
  },
};
