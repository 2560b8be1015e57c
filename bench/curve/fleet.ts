import { ManagedProcess } from '../lib/managers';
import { PodWatch } from '../lib/pods';
import { apiCallsByVerb, openWatches, ourCounters } from '../lib/prom';
import { informerAttempt, informerHolderPid, queueProfile, taskTimeline } from '../lib/temporal';
import { median } from '../lib/stats';
import type { KubeObject } from '../../activities/kube/projections';
import { sleep, waitFor } from '../lib/util';
import { fleetNames, idleFleet, perturbFleet, timeCatchUp } from '../scenarios/fleet';
import type { Sample, Scenario, ScenarioContext } from '../scenarios/types';
import { curvePlan } from './plan';

const CONTROLLERS = ['replicaset', 'deployment'];

/** Keys of one catch-up round's figures: `r1.convergedMs`, `r3.cpuSeconds`, ... */
export const roundKey = (replicas: number, what: string) => `r${replicas}.${what}`;

/** Kills per failover measurement: the figures are medians, the worst is kept beside them. */
export const FAILOVER_KILLS = 3;

/** A replacement slower than this gets the victim's owner's workflow timeline in the run's log. */
const SLOW_REPLACEMENT_MS = 15_000;

/**
 * After the last catch-up, with every replica alive and the fleet settled: kill -9 the replica
 * running the watch and delete a pod at once. Times, from the kill: the watch activity running on
 * another replica (its heartbeat timed out and the retry started), that replica watching every
 * resource again (its relist done), and the pod's replacement. Done FAILOVER_KILLS times, a new
 * replica started after each kill so the count of replicas stays; figures are medians and worsts.
 */
async function failoverAtSize(ctx: ScenarioContext, running: ManagedProcess[]): Promise<Sample> {
  const samples: Array<{ movedMs: number; watchingMs: number; replacedMs: number; quietMs: number; reconciles: number }> = [];
  for (let k = 0; k < FAILOVER_KILLS; k++) {
    const kill = await killWatchHolder(ctx, running, k);
    running.push(await ctx.startManager({ controllers: CONTROLLERS }, 90 + k));
    // The new watch lists and sends every object's workflow its state, as a new leader resyncs
    // every object; the next kill waits until those reconciles are done.
    const quiet = await reconcilesQuiet(running.filter((r) => r.alive()));
    ctx.log(`failover ${k + 1}: quiet ${quiet.ms + kill.replacedMs} ms after the kill, ${quiet.reconciles} reconciles after the replacement`);
    samples.push({ ...kill, quietMs: quiet.ms + kill.replacedMs, reconciles: quiet.reconciles });
  }
  // each measure as `failover.<name>` (median) and `failover.<name>Worst` (largest), `Ms` last for times
  const keys = { watchMoved: 'movedMs', watching: 'watchingMs', replaced: 'replacedMs', quiet: 'quietMs', reconciles: 'reconciles' } as const;
  const out: Sample = {};
  for (const [name, field] of Object.entries(keys)) {
    const xs = samples.map((s) => s[field]);
    const unit = field.endsWith('Ms') ? 'Ms' : '';
    out[`failover.${name}${unit}`] = median(xs);
    out[`failover.${name}Worst${unit}`] = Math.max(...xs);
  }
  return out;
}

/** Waits until the replicas' reconcile counters stand still for QUIET_MS; how long that took, and how many reconciles came meanwhile. */
async function reconcilesQuiet(replicas: ManagedProcess[]): Promise<{ ms: number; reconciles: number }> {
  const QUIET_MS = 5_000;
  const total = async () => (await Promise.all(replicas.map((r) => ourCounters(r.port)))).reduce((n, c) => n + (c?.reconciles ?? 0), 0);
  const t0 = Date.now();
  const start = await total();
  let last = start;
  let stillSince = Date.now();
  while (Date.now() - stillSince < QUIET_MS) {
    if (Date.now() - t0 > 600_000) throw new Error('reconciles did not stop within 10 minutes of a failover');
    await sleep(500);
    const now = await total();
    if (now !== last) {
      last = now;
      stillSince = Date.now();
    }
  }
  return { ms: stillSince - t0, reconciles: last - start };
}

async function killWatchHolder(ctx: ScenarioContext, running: ManagedProcess[], k: number): Promise<{ movedMs: number; watchingMs: number; replacedMs: number }> {
  const { rest } = ctx.stack;
  const pidOf = async () => informerHolderPid(ctx.temporal, ctx.taskQueue).catch(() => undefined);
  const holderPid = await waitFor('a replica running the watch', async () => {
    const p = await pidOf();
    return running.some((r) => r.pid === p && r.alive()) ? p : undefined;
  }, 60_000, 250);
  const holder = running.find((r) => r.pid === holderPid)!;
  const watches = (await openWatches(holder.port)) ?? 0;
  const app = fleetNames(k + 1)[k];
  const watch = await PodWatch.start(ctx.stack, ctx.ns);
  try {
    const victim = watch.live(app)[0];
    if (!victim) throw new Error(`no pod of ${app} to delete`);
    const owner = (await rest.request<KubeObject>('GET', `/api/v1/namespaces/${ctx.ns}/pods/${victim.name}`)).body.metadata?.ownerReferences?.[0]?.name;
    await holder.kill('SIGKILL');
    const t0 = Date.now();
    await rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods/${victim.name}`, { body: { preconditions: { uid: victim.uid }, gracePeriodSeconds: 0 } });
    const replaced = watch.until('replacement pod', () => watch.seenSince(t0, app).some((p) => p.uid !== victim.uid), 180_000);
    const newPid = await waitFor('the watch on another replica', async () => {
      const p = await pidOf();
      return p !== undefined && p !== holderPid && running.some((r) => r.pid === p && r.alive()) ? p : undefined;
    }, 120_000, 100);
    const movedAt = Date.now();
    const next = running.find((r) => r.pid === newPid)!;
    await waitFor('the new holder watching again', async () => ((await openWatches(next.port)) ?? 0) >= watches, 120_000, 100);
    const watchingAt = Date.now();
    await replaced;
    const replacedAt = Math.min(...watch.seenSince(t0, app).filter((p) => p.uid !== victim.uid).map((p) => p.seenAt));
    ctx.log(`failover ${k + 1}: killed pid ${holderPid}; watch moved after ${movedAt - t0} ms, watching ${watches} resources again after ${watchingAt - t0} ms, pod replaced after ${replacedAt - t0} ms`);
    if (replacedAt - t0 > SLOW_REPLACEMENT_MS && owner) {
      ctx.log(`failover ${k + 1}: replicaset/${ctx.ns}/${owner} from the kill: ${await taskTimeline(ctx.temporal, `replicaset/${ctx.ns}/${owner}`, t0)}`);
    }
    return { movedMs: movedAt - t0, watchingMs: watchingAt - t0, replacedMs: replacedAt - t0 };
  } finally {
    watch.stop();
  }
}

/** One catch-up of the curve: how many replicas start, and whether every Deployment changed or a tenth of them. */
interface Round {
  replicas: number;
  changed: 'all' | 'tenth';
}

/** Keys of the tenth-changed round's figures: `p10.convergedMs`, ... */
export const TENTH_PREFIX = 'p10';

/**
 * One size of the curve, one manager: a fleet of one-replica Deployments is created and settles;
 * an idle window; then the manager is stopped, the fleet perturbed, and a fresh start catches up;
 * then the same with a tenth of the Deployments perturbed (what a restart costs when little
 * changed: upstream resyncs every object, ours need not). Ours then catches up again after each
 * further perturbation of all of them with 2, 3, ... replicas on the same task queue (the curve's
 * largest size only), and ends with a failover of the replica running the watch.
 */
export const fleetCurve: Scenario = {
  id: 101,
  slug: 'curve-fleet',
  title: 'Scale curve: idle cost and restart catch-up',
  method: () => '',
  settings: () => ['lifted'],
  reps: () => 1,
  subjects: ['upstream', 'ours'],
  metrics: [],
  async run(ctx) {
    const plan = curvePlan(ctx.mode);
    const size = ctx.size;
    if (!size) throw new Error('the curve runs at a given size');
    const { rest } = ctx.stack;
    const out: Sample = {};

    const { manager: first, setupMs, idle } = await idleFleet(ctx, CONTROLLERS, size, plan.settleS, plan.idleS);
    out.setupMs = setupMs;
    const perMin = (n: number) => (n / idle.seconds) * 60;
    Object.assign(out, {
      'idle.cpuSeconds': idle.cpuSeconds,
      'idle.peakRssMiB': idle.peakRssMiB,
      'idle.apiPerMin': perMin(idle.apiRequests),
      ...(idle.temporalCpuSeconds !== undefined ? { 'idle.temporalCpuSeconds': idle.temporalCpuSeconds } : {}),
      ...(idle.temporalPeakRssMiB !== undefined ? { 'idle.temporalPeakRssMiB': idle.temporalPeakRssMiB } : {}),
      ...(idle.historyEvents !== undefined ? { 'idle.historyPerMin': perMin(idle.historyEvents) } : {}),
    });
    await first.kill('SIGTERM');

    const rounds: Round[] = [
      { replicas: 1, changed: 'all' },
      { replicas: 1, changed: 'tenth' },
      ...(ctx.subject === 'ours' ? (ctx.replicaRounds ?? []).map((replicas): Round => ({ replicas, changed: 'all' })) : []),
    ];
    let previous: ManagedProcess[] = [];
    for (const [i, { replicas, changed }] of rounds.entries()) {
      await Promise.all(previous.map((p) => p.kill('SIGTERM')));
      await perturbFleet(rest, ctx.ns, size, i, changed === 'all' ? size : Math.ceil(size / 10));
      const running: ManagedProcess[] = [];
      const window = await ctx.openWindow(() => running);
      const windowAt = Date.now();
      const attempt0 = ctx.subject === 'ours' ? await informerAttempt(ctx.temporal, ctx.taskQueue).catch(() => undefined) : undefined;
      let mostWatching = 0;
      const sampleWatchers = async () => {
        const open = await Promise.all(running.map((p) => openWatches(p.port)));
        mostWatching = Math.max(mostWatching, open.filter((n) => (n ?? 0) > 0).length);
      };
      const cu = await timeCatchUp(rest, ctx.ns, size, plan.quietMs, async () => {
        running.push(...await Promise.all(Array.from({ length: replicas }, (_, k) => ctx.startManager({ controllers: CONTROLLERS }, 1 + i * 10 + k))));
      }, 600_000 + size * 1000, ctx.subject === 'ours' ? sampleWatchers : undefined);
      const use = await window.close();
      const key = (what: string) => (changed === 'tenth' ? `${TENTH_PREFIX}.${what}` : roundKey(replicas, what));
      Object.assign(out, {
        [key('convergedMs')]: cu.convergedMs,
        [key('lastWriteMs')]: cu.lastWriteMs,
        [key('cpuSeconds')]: use.cpuSeconds,
        [key('peakRssMiB')]: use.peakRssMiB,
        [key('apiRequests')]: use.apiRequests,
      });
      if (use.temporalCpuSeconds !== undefined) out[key('temporalCpuSeconds')] = use.temporalCpuSeconds;
      if (use.temporalPeakRssMiB !== undefined) out[key('temporalPeakRssMiB')] = use.temporalPeakRssMiB;
      if (use.historyEvents !== undefined) out[key('historyEvents')] = use.historyEvents;
      if (use.counters) {
        out[key('ourApiCalls')] = use.counters.ourApiCalls;
        out[key('signalsSent')] = use.counters.signalsSent;
        out[key('reconciles')] = use.counters.reconciles;
      }
      if (ctx.subject === 'ours') {
        const attempt1 = await informerAttempt(ctx.temporal, ctx.taskQueue).catch(() => undefined);
        // read after the previous replicas stopped (their attempt already failed): any growth is a needless move
        if (attempt0 !== undefined && attempt1 !== undefined) out[key('watchMoves')] = attempt1 - attempt0;
        out[key('mostReplicasWatching')] = mostWatching;
      }
      ctx.log(`${replicas} replica(s), ${changed === 'all' ? 'every' : 'a tenth of the'} Deployment(s) changed: converged ${cu.convergedMs} ms, last write ${cu.lastWriteMs} ms, CPU ${use.cpuSeconds.toFixed(1)} s`);
      if (ctx.subject === 'ours') {
        ctx.log(`API calls by verb and resource: ${(await Promise.all(running.map((p) => apiCallsByVerb(p.port)))).join(' / ')}`);
        ctx.log(`workflows since the start: ${await queueProfile(ctx.temporal, ctx.taskQueue, windowAt)}`);
      }
      if (ctx.subject === 'ours' && i === rounds.length - 1 && replicas >= 2) Object.assign(out, await failoverAtSize(ctx, running));
      previous = running;
    }
    return out;
  },
};

