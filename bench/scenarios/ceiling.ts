import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { adminKubeConfig } from '../../starter/local/stack';
import { PodWatch } from '../lib/pods';
import { scaleUpSize } from './scale-up';
import { Scenario } from './types';

/** The largest batch a ReplicaSet controller sends at once in its slow start (upstream's burstReplicas). */
const MAX_BATCH = 500;

export const ceiling: Scenario = {
  id: 7,
  slug: 'ceiling',
  title: 'Ceiling: a plain client',
  method: (mode) => `No controller manager: our own REST client, with the same --kube-api-qps/--kube-api-burst token bucket, ` +
    `creates ${scaleUpSize(mode)} pods in slow-start batches (1, 2, 4, ... up to ${MAX_BATCH} at once, as both ReplicaSet ` +
    'controllers do); timed until the watch has shown them all, and until all are Ready. This bounds scenario 1 from below.',
  // quick keeps to one setting to stay within its 10 minutes
  settings: (mode) => (mode === 'full' ? ['default', 'lifted'] : ['default']),
  reps: (mode) => ({ full: 3, quick: 2, smoke: 1 })[mode],
  subjects: ['client'],
  metrics: [
    { key: 'podsExistMs', label: 'time until all pods exist', unit: 'ms' },
    { key: 'readyMs', label: 'time until all pods Ready', unit: 'ms' },
  ],
  async run(ctx) {
    const n = scaleUpSize(ctx.mode);
    const client = new KubeRest(adminKubeConfig(ctx.stack.dataDir), new TokenBucket(ctx.setting.qps, ctx.setting.burst));
    const watch = await PodWatch.start(ctx.stack, ctx.ns);
    try {
      const t0 = Date.now();
      let made = 0;
      for (let batch = 1; made < n; batch = Math.min(batch * 2, MAX_BATCH)) {
        const size = Math.min(batch, n - made);
        await Promise.all(Array.from({ length: size }, (_, i) => client.request('POST', `/api/v1/namespaces/${ctx.ns}/pods`, {
          body: {
            metadata: { name: `plain-${made + i}`, labels: { app: 'plain' } },
            spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], terminationGracePeriodSeconds: 0 },
          },
        })));
        made += size;
      }
      const timeout = 120_000 + n * 1000;
      await watch.until(`${n} pods`, () => watch.seenSince(t0, 'plain').length >= n, timeout);
      const podsAt = Math.max(...watch.seenSince(t0, 'plain').map((p) => p.seenAt));
      const readyAt = await watch.until(`${n} pods Ready`, () => watch.live('plain').filter((p) => p.ready).length >= n, timeout);
      return { podsExistMs: podsAt - t0, readyMs: readyAt - t0 };
    } finally {
      watch.stop();
    }
  },
};
