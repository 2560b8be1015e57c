import * as path from 'node:path';
import { temporal as proto } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { repoRoot } from '../../starter/local/paths';
import { noopSinks } from '../../starter/replay/replay';
import { DATA_CONVERTER } from '../../workers/payload-codec';
import { skipStackTraceHookInThisThread } from '../../workers/shared-workflow-threads';
import { PodWatch } from '../lib/pods';
import { median, percentile } from '../lib/stats';
import { sleep, waitFor } from '../lib/util';
import { createReplicaSet, getReplicaSet, mergePatch, replicaSetSettled, warmUp } from '../lib/workloads';
import { cachedRuns, fleetNames, idleFigures, idleFleet, perturbFleet, timeCatchUp } from '../scenarios/fleet';
import type { Sample, Scenario } from '../scenarios/types';
import { capPlan } from './plan';

const CONTROLLERS = ['replicaset', 'deployment'];

/**
 * One size, one manager (ours with the cap the runner passes as a flag): the fleet of one-replica
 * Deployments is created and settles; an idle window; pods of `deletes` different Deployments,
 * spread over the fleet, deleted one at a time, each timed to its replacement (with a cap below the
 * fleet most of these wake an evicted run); then a restart catch-up, as in the curve.
 */
export const cacheCapFleet: Scenario = {
  id: 102,
  slug: 'cache-cap',
  title: 'The workflow cache cap: memory against replays',
  method: () => '',
  settings: () => ['lifted'],
  reps: () => 1,
  subjects: ['upstream', 'ours'],
  metrics: [],
  async run(ctx) {
    const plan = capPlan(ctx.mode);
    const size = ctx.size ?? plan.size;
    const { rest } = ctx.stack;
    const { manager: first, idle } = await idleFleet(ctx, CONTROLLERS, size, plan.settleS, plan.idleS);
    const out: Sample = idleFigures(idle);
    if (ctx.subject === 'ours') out['idle.cachedRuns'] = await cachedRuns(first.port);

    const watch = await PodWatch.start(ctx.stack, ctx.ns);
    const latencies: number[] = [];
    try {
      const window = await ctx.openWindow(() => [first]);
      const names = fleetNames(size);
      const stride = Math.max(1, Math.floor(size / plan.deletes));
      for (let i = 0; i < plan.deletes; i++) {
        const app = names[(i * stride + 7) % size];
        const victim = watch.live(app)[0];
        if (!victim) throw new Error(`no live pod of ${app} to delete`);
        const t0 = Date.now();
        await rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods/${victim.name}`, { body: { preconditions: { uid: victim.uid }, gracePeriodSeconds: 0 } });
        await watch.until(`replacement of ${victim.name}`, () => watch.seenSince(t0, app).some((p) => p.uid !== victim.uid), 120_000);
        latencies.push(Math.min(...watch.seenSince(t0, app).filter((p) => p.uid !== victim.uid).map((p) => p.seenAt)) - t0);
        // the Deployment's own run wakes too (its ReplicaSet's status): let that settle before the next
        await sleep(500);
      }
      const use = await window.close();
      out['reaction.p50Ms'] = percentile(latencies, 50);
      out['reaction.maxMs'] = Math.max(...latencies);
      out['reaction.cpuSeconds'] = use.cpuSeconds;
    } finally {
      watch.stop();
    }
    await first.kill('SIGTERM');

    await perturbFleet(rest, ctx.ns, size, 0);
    const running: Array<Awaited<ReturnType<typeof ctx.startManager>>> = [];
    const window = await ctx.openWindow(() => running);
    const cu = await timeCatchUp(rest, ctx.ns, size, plan.quietMs, async () => {
      running.push(await ctx.startManager({ controllers: CONTROLLERS }, 1));
    }, 600_000 + size * 1000);
    const use = await window.close();
    Object.assign(out, {
      'catchUp.convergedMs': cu.convergedMs,
      'catchUp.lastWriteMs': cu.lastWriteMs,
      'catchUp.cpuSeconds': use.cpuSeconds,
      'catchUp.peakRssMiB': use.peakRssMiB,
    });
    if (use.temporalCpuSeconds !== undefined) out['catchUp.temporalCpuSeconds'] = use.temporalCpuSeconds;
    if (use.historyEvents !== undefined) out['catchUp.historyEvents'] = use.historyEvents;
    ctx.log(`idle RSS ${idle.peakRssMiB.toFixed(0)} MiB, reaction p50 ${out['reaction.p50Ms']} ms, catch-up ${cu.convergedMs} ms`);
    return out;
  },
};

type IHistory = proto.api.history.v1.IHistory;
type IHistoryEvent = proto.api.history.v1.IHistoryEvent;
/** a replay may stop after any one of these */
const WORKFLOW_TASK_COMPLETED = proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;

/** The shortest prefix of `events` ending with a completed workflow task and holding at least `n` events. */
export function prefixAtTaskBoundary(events: IHistoryEvent[], n: number): IHistoryEvent[] {
  for (let i = Math.max(0, n - 1); i < events.length; i++) {
    if (events[i].eventType === WORKFLOW_TASK_COMPLETED) return events.slice(0, i + 1);
  }
  return events;
}

/** Fractions of the churned history whose replay is timed. */
const PREFIXES = [1 / 16, 1 / 8, 1 / 4, 1 / 2, 1];
const REPLAYS_EACH = 3;

/**
 * What a cache miss costs against history length: one ReplicaSet whose replicas flip between 1
 * and 0 every 100 ms until its run's history reaches the plan's length (or its time is up); then
 * prefixes of that real history, each ending at a completed workflow task, are replayed in this
 * process by one replay worker on the prebuilt workflow bundle, as a worker rebuilds an evicted run
 * (without the SDK's stack-trace hook, as a replica runs).
 * Keys: `events.<i>` and `replayMs.<i>` (median of REPLAYS_EACH) per prefix.
 */
export const replayCost: Scenario = {
  id: 103,
  slug: 'replay-cost',
  title: 'Replay cost against history length',
  method: () => '',
  settings: () => ['lifted'],
  reps: () => 1,
  subjects: ['ours'],
  metrics: [],
  async run(ctx) {
    const plan = capPlan(ctx.mode);
    const { rest } = ctx.stack;
    await ctx.startManager({ controllers: ['replicaset'] });
    await warmUp(rest, ctx.ns);
    await createReplicaSet(rest, ctx.ns, 'churn', 1);
    const workflowId = `replicaset/${ctx.ns}/churn`;
    const handle = ctx.temporal.workflow.getHandle(workflowId);
    const length = async () => Number((await handle.describe()).historyLength);
    const until = Date.now() + plan.replayChurnS * 1000;
    for (let k = 1; Date.now() < until; k++) {
      await mergePatch(rest, `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/churn`, { spec: { replicas: k % 2 } });
      await sleep(100);
      if (k % 20 === 0 && (await length()) >= plan.replayEvents) break;
    }
    await mergePatch(rest, `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/churn`, { spec: { replicas: 1 } });
    await waitFor('the churned ReplicaSet settled', async () => replicaSetSettled(await getReplicaSet(rest, ctx.ns, 'churn')), 120_000, 250);
    await sleep(2000);
    const history: IHistory = await handle.fetchHistory();
    const events = history.events ?? [];
    ctx.log(`churned history: ${events.length} events`);

    const prefixes = PREFIXES.map((f) => prefixAtTaskBoundary(events, Math.round(events.length * f)));
    // the first replay also starts the worker's thread and loads the bundle: a warm-up, not timed
    const queue = [prefixes[0], ...prefixes.flatMap((p) => Array<IHistoryEvent[]>(REPLAYS_EACH).fill(p))];
    const times: number[] = [];
    let pushedAt = 0;
    async function* histories() {
      for (const [i, evs] of queue.entries()) {
        pushedAt = Date.now();
        yield { workflowId: `${workflowId}#replay-${i}`, history: { events: evs } };
      }
    }
    // a replica's workflow thread runs without the SDK's stack-trace hook; the replay worker here, unless told
    skipStackTraceHookInThisThread();
    const bundle = path.join(repoRoot, 'dist', 'workflow-bundle.js');
    for await (const r of Worker.runReplayHistories({ workflowBundle: { codePath: bundle }, sinks: noopSinks, dataConverter: DATA_CONVERTER, replayName: 'bench-replay-cost' }, histories())) {
      if (r.error) throw new Error(`replay of ${r.workflowId} failed: ${String(r.error)}`);
      times.push(Date.now() - pushedAt);
    }
    const out: Sample = {};
    prefixes.forEach((p, i) => {
      out[`events.${i}`] = p.length;
      out[`replayMs.${i}`] = median(times.slice(1 + i * REPLAYS_EACH, 1 + (i + 1) * REPLAYS_EACH));
    });
    ctx.log(`replays: ${prefixes.map((p, i) => `${p.length} events ${out[`replayMs.${i}`]} ms`).join(', ')}`);
    return out;
  },
};
