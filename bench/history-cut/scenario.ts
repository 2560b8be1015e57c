import type { Client } from '@temporalio/client';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { createFleet, fleetNames, inParallel, perturbFleet, timeCatchUp } from '../scenarios/fleet';
import type { Sample, Scenario } from '../scenarios/types';
import { median } from '../lib/stats';
import { sleep, waitFor } from '../lib/util';
import { deploymentComplete, listDeployments, mergePatch, warmUp } from '../lib/workloads';
import { cutPlan } from './plan';

const CONTROLLERS = ['replicaset', 'deployment'];

/** Of the object workflows in `ns` on the queue: how many IDs, how many runs, and the open runs' history lengths. */
async function runLengths(client: Client, taskQueue: string, ns: string): Promise<{ ids: number; runs: number; open: number[] }> {
  const ids = new Set<string>();
  let runs = 0;
  const open: Array<{ workflowId: string; runId: string }> = [];
  for await (const w of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
    if (!w.workflowId.startsWith(`deployment/${ns}/`) && !w.workflowId.startsWith(`replicaset/${ns}/`)) continue;
    ids.add(w.workflowId);
    runs++;
    if (w.status.name === 'RUNNING') open.push({ workflowId: w.workflowId, runId: w.runId });
  }
  const lengths: number[] = [];
  await inParallel(open, 10, async (o) => lengths.push((await client.workflow.getHandle(o.workflowId, o.runId).describe()).historyLength));
  return { ids: ids.size, runs, open: lengths };
}

/**
 * One threshold (the runner passes `--max-history-events` as a flag, or none for the default):
 * a fleet of one-replica Deployments created; every Deployment's replicas flipped between 1 and
 * 2, all Deployments at once, `flips` times `gapMs` apart, and the fleet left complete (the churn
 * window); the runs per workflow ID and the open runs' history lengths read; then the manager
 * stopped, the fleet perturbed as in the curve's catch-up, and a fresh manager timed to converge.
 * That manager caches no run, so each object's first task replays its open run's whole history.
 */
export const historyCut: Scenario = {
  id: 104,
  slug: 'history-cut',
  title: 'The continue-as-new threshold: history length against replays',
  method: () => '',
  settings: () => ['lifted'],
  reps: () => 1,
  subjects: ['ours'],
  metrics: [],
  async run(ctx) {
    const plan = cutPlan(ctx.mode);
    const { rest } = ctx.stack;
    const out: Sample = {};
    const first = await ctx.startManager({ controllers: CONTROLLERS });
    await warmUp(rest, ctx.ns);
    await createFleet(rest, ctx.ns, plan.deployments, 1);

    const churn = await ctx.openWindow(() => [first]);
    const t0 = Date.now();
    // an even number of flips leaves every Deployment at 1 replica, as it was created
    const flips = plan.flips + (plan.flips % 2);
    await Promise.all(fleetNames(plan.deployments).map(async (name) => {
      for (let k = 1; k <= flips; k++) {
        await mergePatch(rest, `/apis/apps/v1/namespaces/${ctx.ns}/deployments/${name}`, { spec: { replicas: 1 + (k % 2) } });
        await sleep(plan.gapMs);
      }
    }));
    await waitFor('the churned fleet complete', async () => {
      const ds = await listDeployments(rest, ctx.ns);
      return ds.length === plan.deployments && ds.every((d) => deploymentComplete(d) && d.status?.observedGeneration === d.metadata.generation);
    }, 600_000, 1000);
    const use = await churn.close();
    Object.assign(out, { 'churn.ms': Date.now() - t0, 'churn.cpuSeconds': use.cpuSeconds, 'churn.peakRssMiB': use.peakRssMiB });
    if (use.temporalCpuSeconds !== undefined) out['churn.temporalCpuSeconds'] = use.temporalCpuSeconds;
    if (use.historyEvents !== undefined) out['churn.historyEvents'] = use.historyEvents;
    const runs = await runLengths(ctx.temporal, ctx.taskQueue, ctx.ns);
    Object.assign(out, {
      'runs.perWorkflow': runs.runs / Math.max(1, runs.ids),
      'history.p50': median(runs.open),
      'history.max': Math.max(0, ...runs.open),
    });
    await first.kill('SIGTERM');

    await perturbFleet(rest, ctx.ns, plan.deployments, 0);
    const running: Array<Awaited<ReturnType<typeof ctx.startManager>>> = [];
    const window = await ctx.openWindow(() => running);
    const cu = await timeCatchUp(rest, ctx.ns, plan.deployments, plan.quietMs, async () => {
      running.push(await ctx.startManager({ controllers: CONTROLLERS }, 1));
    }, 600_000);
    const after = await window.close();
    Object.assign(out, { 'catchUp.convergedMs': cu.convergedMs, 'catchUp.lastWriteMs': cu.lastWriteMs, 'catchUp.cpuSeconds': after.cpuSeconds });
    if (after.temporalCpuSeconds !== undefined) out['catchUp.temporalCpuSeconds'] = after.temporalCpuSeconds;
    ctx.log(`churn ${Math.round(out['churn.ms'] / 1000)} s, ${out['runs.perWorkflow'].toFixed(1)} runs per workflow, open history p50 ${out['history.p50']} max ${out['history.max']}, catch-up ${cu.convergedMs} ms`);
    return out;
  },
};
