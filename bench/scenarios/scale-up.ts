import { PodWatch } from '../lib/pods';
import { getReplicaSet, createReplicaSet, mergePatch, warmUp } from '../lib/workloads';
import { waitFor } from '../lib/util';
import { Mode, RESOURCE_METRICS, Scenario, resourceSample } from './types';

export const scaleUpSize = (mode: Mode) => ({ full: 1000, quick: 200, smoke: 20 })[mode];

export const scaleUp: Scenario = {
  id: 1,
  slug: 'scale-up',
  title: 'Scale-up',
  method: (mode) => `A ReplicaSet with 0 replicas is patched to ${scaleUpSize(mode)}; timed from the patch until a pod watch has shown ` +
    `${scaleUpSize(mode)} pods, and until \`status.readyReplicas\` is ${scaleUpSize(mode)} (kwok marks pods Ready). ` +
    'Controllers: replicaset. CPU/RSS/API/Temporal figures cover that interval.',
  // quick keeps to one setting to stay within its 10 minutes
  settings: (mode) => (mode === 'full' ? ['default', 'lifted'] : ['default']),
  reps: (mode) => ({ full: 3, quick: 2, smoke: 1 })[mode],
  subjects: ['upstream', 'ours'],
  metrics: [
    { key: 'podsExistMs', label: 'time until all pods exist', unit: 'ms' },
    { key: 'readyMs', label: 'time until readyReplicas = N', unit: 'ms' },
    ...RESOURCE_METRICS,
  ],
  async run(ctx) {
    const n = ctx.size ?? scaleUpSize(ctx.mode);
    const { rest } = ctx.stack;
    const m = await ctx.startManager({ controllers: ['replicaset'] });
    await warmUp(rest, ctx.ns);
    await createReplicaSet(rest, ctx.ns, 'web', 0);
    const watch = await PodWatch.start(ctx.stack, ctx.ns);
    try {
      const window = await ctx.openWindow(() => [m]);
      const t0 = Date.now();
      await mergePatch(rest, `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/web`, { spec: { replicas: n } });
      const timeout = 120_000 + n * 1000;
      await watch.until(`${n} pods`, () => watch.seenSince(t0, 'web').length >= n, timeout);
      const podsAt = Math.max(...watch.seenSince(t0, 'web').map((p) => p.seenAt));
      await waitFor(`readyReplicas ${n}`, async () => (await getReplicaSet(rest, ctx.ns, 'web')).status?.readyReplicas === n, timeout, 250);
      const readyAt = Date.now();
      const use = await window.close();
      return { podsExistMs: podsAt - t0, readyMs: readyAt - t0, ...resourceSample(use) };
    } finally {
      watch.stop();
    }
  },
};
