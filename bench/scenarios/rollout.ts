import { createDeployment, deploymentComplete, listDeployments, mergePatch, warmUp } from '../lib/workloads';
import { waitFor } from '../lib/util';
import { Mode, RESOURCE_METRICS, Scenario, resourceSample } from './types';

const size = (mode: Mode) => ({ full: 200, quick: 40, smoke: 10 })[mode];

export const rollout: Scenario = {
  id: 3,
  slug: 'rollout',
  title: 'Rolling update',
  method: (mode) => `A ${size(mode)}-replica Deployment (RollingUpdate, maxSurge 25%, maxUnavailable 25%), complete; its image ` +
    'changed; timed until its status shows the new generation observed and every replica updated and available, with ' +
    'no old replica left. Controllers: deployment, replicaset.',
  settings: (mode) => (mode === 'full' ? ['default', 'lifted'] : ['default']),
  reps: (mode) => ({ full: 3, quick: 1, smoke: 1 })[mode],
  subjects: ['upstream', 'ours'],
  metrics: [{ key: 'rolloutMs', label: 'time to complete the rollout', unit: 'ms' }, ...RESOURCE_METRICS],
  async run(ctx) {
    const n = size(ctx.mode);
    const { rest } = ctx.stack;
    const m = await ctx.startManager({ controllers: ['replicaset', 'deployment'] });
    await warmUp(rest, ctx.ns);
    await createDeployment(rest, ctx.ns, 'web', n);
    const timeout = 180_000 + n * 2000;
    const complete = async () => {
      const d = (await listDeployments(rest, ctx.ns)).find((x) => x.metadata.name === 'web');
      return !!d && deploymentComplete(d);
    };
    await waitFor('Deployment complete before the change', complete, timeout, 250);
    const window = await ctx.openWindow(() => [m]);
    const t0 = Date.now();
    await mergePatch(rest, `/apis/apps/v1/namespaces/${ctx.ns}/deployments/web`, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'registry.invalid/app:2' }] } } },
    });
    await waitFor('rollout complete', complete, timeout, 250);
    const rolloutMs = Date.now() - t0;
    return { rolloutMs, ...resourceSample(await window.close()) };
  },
};
