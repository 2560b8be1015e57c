import { KubeRest } from '../../activities/kube/rest';
import { requestCounts } from '../lib/apiserver';
import type { ManagedProcess } from '../lib/managers';
import type { ResourceUse } from '../lib/measure';
import { createDeployment, deploymentComplete, listDeployments, mergePatch, warmUp } from '../lib/workloads';
import { probeSecurePort } from '../../starter/local/http-probe';
import { sumMetric } from '../lib/prom';
import type { Sample, ScenarioContext } from './types';
import { sleep, waitFor } from '../lib/util';

/** Run `fn` over `items`, `width` at a time. */
export async function inParallel<T>(items: T[], width: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

export const fleetNames = (count: number) => Array.from({ length: count }, (_, i) => `d${String(i).padStart(4, '0')}`);

/** Many Deployments at once, waited for until all are complete. */
export async function createFleet(rest: KubeRest, ns: string, count: number, replicas: number): Promise<void> {
  await inParallel(fleetNames(count), 10, (name) => createDeployment(rest, ns, name, replicas));
  await waitFor(`${count} Deployments complete`, async () => {
    const ds = await listDeployments(rest, ns);
    return ds.length === count && ds.every(deploymentComplete);
  }, 300_000 + count * replicas * 500, 1000);
}

/**
 * What a manager finds to do after it was away: every Deployment (or the first `changed` of the
 * `count`) gets a spec change that touches no pod (progressDeadlineSeconds, so a new generation to
 * observe) and loses one pod (so every ReplicaSet has work). `round` makes each call's spec change a
 * new one.
 */
export async function perturbFleet(rest: KubeRest, ns: string, count: number, round = 0, changed = count): Promise<void> {
  const names = fleetNames(count).slice(0, changed);
  await inParallel(names, 10, (name) => mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/deployments/${name}`, { spec: { progressDeadlineSeconds: 601 + round } }));
  const pods = (await rest.request<{ items: Array<{ metadata: { name: string; labels?: Record<string, string> } }> }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
  const apps = new Set(names);
  const onePerApp = new Map<string, string>();
  for (const p of pods) {
    const app = p.metadata.labels?.app;
    if (app && apps.has(app) && !onePerApp.has(app)) onePerApp.set(app, p.metadata.name);
  }
  await inParallel([...onePerApp.values()], 10, (pod) => rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${pod}`, { body: { gracePeriodSeconds: 0 } }));
}

export interface CatchUp {
  /** from the start call until every Deployment observed its generation and is complete */
  convergedMs: number;
  /** from the start call until the last write to pods, ReplicaSets or Deployments before `quietMs` without one */
  lastWriteMs: number;
}

/**
 * Times a catch-up: `start` starts the manager(s); then every second the API server's write count
 * and the fleet's Deployments are read until the fleet is complete and no workload write came for
 * `quietMs`. `onTick` runs once a second meanwhile (a scenario's own sampling).
 */
export async function timeCatchUp(
  rest: KubeRest, ns: string, count: number, quietMs: number, start: () => Promise<unknown>, deadlineMs: number, onTick?: () => Promise<void>,
): Promise<CatchUp> {
  let writes = (await requestCounts(rest)).workloadWrites;
  const t0 = Date.now();
  await start();
  let lastWriteAt = t0;
  let convergedAt: number | undefined;
  for (;;) {
    await sleep(1000);
    await onTick?.();
    const now = Date.now();
    const w = (await requestCounts(rest)).workloadWrites;
    if (w !== writes) { writes = w; lastWriteAt = now; }
    if (convergedAt === undefined) {
      const ds = await listDeployments(rest, ns);
      if (ds.length === count && ds.every((d) => deploymentComplete(d) && d.status?.observedGeneration === d.metadata.generation)) convergedAt = now;
    }
    if (convergedAt !== undefined && now - lastWriteAt >= quietMs) return { convergedMs: convergedAt - t0, lastWriteMs: lastWriteAt - t0 };
    if (now - t0 > deadlineMs) throw new Error(`catch-up of ${count} Deployments did not settle in ${Math.round(deadlineMs / 1000)} s (converged: ${convergedAt !== undefined})`);
  }
}

/**
 * The start of every fleet measurement: a manager of the context's subject with `controllers`, a
 * fleet of `size` one-replica Deployments created (timed) and left `settleS` to settle, then an
 * idle window of `idleS` over that manager, which is left running.
 */
export async function idleFleet(
  ctx: ScenarioContext, controllers: string[], size: number, settleS: number, idleS: number,
): Promise<{ manager: ManagedProcess; setupMs: number; idle: ResourceUse }> {
  const manager = await ctx.startManager({ controllers });
  await warmUp(ctx.stack.rest, ctx.ns);
  const setupAt = Date.now();
  await createFleet(ctx.stack.rest, ctx.ns, size, 1);
  const setupMs = Date.now() - setupAt;
  await sleep(settleS * 1000);
  const window = await ctx.openWindow(() => [manager]);
  await sleep(idleS * 1000);
  return { manager, setupMs, idle: await window.close() };
}

/** An idle window's peak RSS and its CPU a minute (ours: the Temporal server's too), under `idle.` keys. */
export function idleFigures(idle: ResourceUse): Sample {
  const perMin = (s: number) => (s / idle.seconds) * 60;
  return {
    'idle.peakRssMiB': idle.peakRssMiB,
    'idle.cpuPerMin': perMin(idle.cpuSeconds),
    ...(idle.temporalCpuSeconds !== undefined ? { 'idle.temporalCpuPerMin': perMin(idle.temporalCpuSeconds) } : {}),
  };
}

/** Runs held in the workflow caches of one replica of ours (kcm_workflow_cache_runs, every controller). */
export async function cachedRuns(port: number): Promise<number> {
  const r = await probeSecurePort(port, '/metrics');
  return r.status === 200 ? sumMetric(r.body, 'kcm_workflow_cache_runs') : NaN;
}
