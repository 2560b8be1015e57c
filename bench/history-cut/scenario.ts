import type { Client } from '@temporalio/client';
import { inParallel } from '../scenarios/fleet';
import type { Sample, Scenario } from '../scenarios/types';
import { median } from '../lib/stats';
import { WorkflowWork, workflowWork } from '../lib/temporal';
import { sleep, waitFor } from '../lib/util';
import { createReplicaSet, listReplicaSets, mergePatch, replicaSetSettled, warmUp } from '../lib/workloads';
import { cutPlan } from './plan';

/** Every run of one workflow ID: how many, their events together, and the open run's length. */
async function runsOf(client: Client, workflowId: string): Promise<{ runs: number; events: number; open: number }> {
  let runs = 0;
  let events = 0;
  let open = 0;
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs++;
    if (w.status.name !== 'RUNNING') {
      events += w.historyLength;
      continue;
    }
    // an open run's visibility record is not refreshed on every event
    open = (await client.workflow.getHandle(workflowId, w.runId).describe()).historyLength;
    events += open;
  }
  return { runs, events, open };
}

type Pod = { metadata: { name: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string } };

/**
 * One threshold (the runner passes `--max-history-events`, or nothing for the default): one-replica
 * ReplicaSets, each with its replicas flipped between 1 and 0 every `gapMs` until its runs
 * together hold `events` history events (so every threshold does the same work); then the number
 * of runs and the open runs' lengths; then the manager stopped, one pod of each ReplicaSet
 * deleted, and a fresh manager (no run cached: each ReplicaSet's first task replays its open run)
 * timed until every pod is replaced and every ReplicaSet's status says so.
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
    const rsPath = (name: string) => `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/${name}`;
    const names = Array.from({ length: plan.replicaSets }, (_, i) => `churn${i}`);
    const out: Sample = {};
    // under --profile the churn's manager and the restart's write profiles apart, per repetition
    const first = await ctx.startManager({ controllers: ['replicaset'], cpuProfileName: `churn-${ctx.rep}` });
    await warmUp(rest, ctx.ns);
    for (const name of names) await createReplicaSet(rest, ctx.ns, name, 1);

    const churn = await ctx.openWindow(() => [first]);
    const t0 = Date.now();
    const until = t0 + plan.churnS * 1000;
    const reached: number[] = [];
    await Promise.all(names.map(async (name) => {
      const id = `replicaset/${ctx.ns}/${name}`;
      for (let k = 1; Date.now() < until; k++) {
        await mergePatch(rest, rsPath(name), { spec: { replicas: k % 2 } });
        await sleep(plan.gapMs);
        if (k % 20 === 0 && (await runsOf(ctx.temporal, id)).events >= plan.events) break;
      }
      await mergePatch(rest, rsPath(name), { spec: { replicas: 1 } });
      reached.push((await runsOf(ctx.temporal, id)).events);
    }));
    await waitFor('the churned ReplicaSets settled', async () => {
      const rss = (await listReplicaSets(rest, ctx.ns)).filter((r) => names.includes(r.metadata.name));
      return rss.length === names.length && rss.every(replicaSetSettled);
    }, 300_000, 500);
    await sleep(2000);
    const use = await churn.close();
    Object.assign(out, { 'churn.ms': Date.now() - t0, 'churn.cpuSeconds': use.cpuSeconds, 'churn.peakRssMiB': use.peakRssMiB, 'churn.eventsPerReplicaSet': median(reached) });
    if (use.temporalCpuSeconds !== undefined) out['churn.temporalCpuSeconds'] = use.temporalCpuSeconds;
    if (use.historyEvents !== undefined) out['churn.historyEvents'] = use.historyEvents;
    if (use.counters) Object.assign(out, { 'churn.reconciles': use.counters.reconciles, 'churn.signalsSent': use.counters.signalsSent, 'churn.apiCalls': use.counters.ourApiCalls });
    const runs = await Promise.all(names.map((n) => runsOf(ctx.temporal, `replicaset/${ctx.ns}/${n}`)));
    Object.assign(out, {
      'runs.perReplicaSet': median(runs.map((r) => r.runs)),
      'history.p50': median(runs.map((r) => r.open)),
      'history.max': Math.max(...runs.map((r) => r.open)),
    });
    // the churned workflows' tasks, signals and writes, all runs together (creation's first tasks
    // included): whether a threshold's extra CPU comes per run or per workflow task
    const work = await Promise.all(names.map((n) => workflowWork(ctx.temporal, `replicaset/${ctx.ns}/${n}`)));
    const total = (k: keyof WorkflowWork) => work.reduce((sum, w) => sum + w[k], 0);
    Object.assign(out, {
      'churn.runs': total('runs'), 'churn.workflowTasks': total('workflowTasks'), 'churn.nonStickyTasks': total('nonStickyTasks'),
      'churn.timedOutTasks': total('timedOutTasks'), 'churn.failedTasks': total('failedTasks'), 'churn.refusedTasks': total('refusedTasks'), 'churn.signals': total('signals'), 'churn.markers': total('markers'),
      'churn.activities': total('activities'), 'churn.timers': total('timers'), 'churn.taskMs': total('taskMs'), 'churn.firstTaskMs': total('firstTaskMs'),
    });
    await first.kill('SIGTERM');

    const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods`)).body.items;
    const deleted = new Set<string>();
    await inParallel(names, 10, async (name) => {
      const pod = pods.find((p) => p.metadata.labels?.app === name && !p.metadata.deletionTimestamp);
      if (!pod) throw new Error(`no pod of ${name} to delete`);
      deleted.add(pod.metadata.uid);
      await rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods/${pod.metadata.name}`, { body: { gracePeriodSeconds: 0 } });
    });
    const running: Array<Awaited<ReturnType<typeof ctx.startManager>>> = [];
    const window = await ctx.openWindow(() => running);
    const t1 = Date.now();
    running.push(await ctx.startManager({ controllers: ['replicaset'], cpuProfileName: `restart-${ctx.rep}` }, 1));
    let replacedMs: number | undefined;
    await waitFor('every pod replaced and every ReplicaSet settled', async () => {
      if (replacedMs === undefined) {
        const live = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods`)).body.items
          .filter((p) => !p.metadata.deletionTimestamp && !deleted.has(p.metadata.uid));
        if (names.every((n) => live.some((p) => p.metadata.labels?.app === n))) replacedMs = Date.now() - t1;
        else return false;
      }
      const rss = (await listReplicaSets(rest, ctx.ns)).filter((r) => names.includes(r.metadata.name));
      return rss.every(replicaSetSettled);
    }, 300_000, 100);
    const settledMs = Date.now() - t1;
    const after = await window.close();
    Object.assign(out, { 'restart.replacedMs': replacedMs!, 'restart.settledMs': settledMs, 'restart.cpuSeconds': after.cpuSeconds });
    if (after.temporalCpuSeconds !== undefined) out['restart.temporalCpuSeconds'] = after.temporalCpuSeconds;
    ctx.log(`churn ${Math.round(out['churn.ms'] / 1000)} s to ${out['churn.eventsPerReplicaSet']} events each, ${out['runs.perReplicaSet']} runs, `
      + `open history p50 ${out['history.p50']} max ${out['history.max']}; after the restart every pod replaced in ${replacedMs} ms, settled in ${settledMs} ms`);
    return out;
  },
};
