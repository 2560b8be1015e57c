import { ManagedProcess } from '../lib/managers';
import { apiCallsByVerb } from '../lib/prom';
import { queueProfile } from '../lib/temporal';
import { warmUp } from '../lib/workloads';
import { createFleet, perturbFleet, timeCatchUp } from './fleet';
import { Mode, RESOURCE_METRICS, Scenario, resourceSample } from './types';

const size = (mode: Mode) => ({
  full: { deployments: 200, replicas: 10, quietMs: 10_000 },
  quick: { deployments: 20, replicas: 5, quietMs: 5_000 },
  smoke: { deployments: 5, replicas: 2, quietMs: 3_000 },
})[mode];

/**
 * The restart catch-up, with every Deployment changed while the manager was down (`restart`) or a
 * tenth of them (`restartPartial`): upstream's informers relist and it syncs every object again;
 * ours resumes the watch and hears only of the changes.
 */
function restartScenario(o: { id: number; slug: string; title: string; share: number }): Scenario {
  const changedOf = (n: number) => Math.max(1, Math.round(n * o.share));
  return {
    id: o.id,
    slug: o.slug,
    title: o.title,
    method: (mode) => {
      const s = size(mode);
      const changed = changedOf(s.deployments);
      const which = changed === s.deployments ? 'every Deployment gets' : `${changed} of them (${Math.round(o.share * 100)}%) get`;
      return `${s.deployments} Deployments of ${s.replicas} replicas (${s.deployments * s.replicas} pods), complete; the manager stopped; ` +
        `while it is down ${which} a spec change that touches no pod (progressDeadlineSeconds, so a new ` +
        'generation to observe) and lose one pod (so their ReplicaSets have work). Then the manager is started cold (ours: ' +
        'same task queue, so its workflows are still there). Timed from the process start until every Deployment has ' +
        `observed its generation and is complete, and the API server has seen no write to pods, ReplicaSets or ` +
        `Deployments for ${s.quietMs / 1000} s (the time reported is that of the last such write). Controllers: deployment, replicaset.`;
    },
    // the setup alone writes thousands of objects; one setting keeps a full run within the hour
    settings: () => ['default'],
    reps: (mode) => ({ full: 2, quick: 1, smoke: 1 })[mode],
    subjects: ['upstream', 'ours'],
    metrics: [
      { key: 'convergedMs', label: 'start -> every object reconciled', unit: 'ms' },
      { key: 'quietMs', label: 'start -> last write (then quiet)', unit: 'ms' },
      ...RESOURCE_METRICS,
    ],
    async run(ctx) {
      const s = size(ctx.mode);
      const { rest } = ctx.stack;
      const controllers = ['replicaset', 'deployment'];
      const first = await ctx.startManager({ controllers });
      await warmUp(rest, ctx.ns);
      await createFleet(rest, ctx.ns, s.deployments, s.replicas);
      const stopping = Date.now();
      await first.kill('SIGTERM');
      ctx.log(`first manager stopped in ${Date.now() - stopping} ms`);

      await perturbFleet(rest, ctx.ns, s.deployments, 0, changedOf(s.deployments));

      const current: ManagedProcess[] = [];
      const window = await ctx.openWindow(() => current);
      const t0 = Date.now();
      const { convergedMs, lastWriteMs } = await timeCatchUp(rest, ctx.ns, s.deployments, s.quietMs, async () => {
        current.push(await ctx.startManager({ controllers }, 1));
      }, 300_000 + s.deployments * s.replicas * 500);
      const use = await window.close();
      if (ctx.subject === 'ours') {
        ctx.log(`API calls by verb and resource: ${await apiCallsByVerb(current[0].port)}`);
        ctx.log(`workflows since the start: ${await queueProfile(ctx.temporal, ctx.taskQueue, t0)}`);
      }
      return { convergedMs, quietMs: lastWriteMs, ...resourceSample(use) };
    },
  };
}

export const restart = restartScenario({ id: 5, slug: 'restart', title: 'Restart catch-up', share: 1 });
export const restartPartial = restartScenario({ id: 9, slug: 'restart-partial', title: 'Restart catch-up, a tenth changed', share: 0.1 });
