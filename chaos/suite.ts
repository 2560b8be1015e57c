/**
 * The chaos suite on a running stack: each scenario once under upstream kube-controller-manager
 * without faults, then once under ours per kind of fault, each pass checked against the invariants
 * and its end state set beside upstream's. `npm run chaos` (chaos/run.ts) runs it on a stack of its
 * own; test/e2e/chaos-subset.test.ts runs a part of it on the test stack.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AuditLog } from '../bench/lib/audit';
import { SETTINGS, killAllStarted, startOurs, startUpstream, type ManagedProcess } from '../bench/lib/managers';
import { type BenchStack, freshNamespace } from '../bench/lib/stack';
import { sleep, waitFor } from '../bench/lib/util';
import { pkiPaths } from '../starter/local/pki';
import { auditLogPath } from '../starter/local/stack';
import type { ChaosArgs } from './args';
import { controllerWritesBetween, diffOutcomes, preconditionViolations, staleAttemptWrites } from './checks';
import { historyViolations, plantSecret } from './histories';
import { pauseOf, planOutages, runOutages, type Outage, type OutagePlan, type OutageRecord } from './outages';
import { startFaultProxy, proxiedKubeconfig, type FaultPlan, type FaultProxy } from './proxy';
import { TcpProxy } from '../bench/lib/tcp-proxy';
import { PortAllocator } from '../starter/local/ports';
import { injected, passPassed, type ChaosResults, type FaultName, type FaultedPass, type PassRecord, type ScenarioRecord } from './report';
import { restartPlan, runRestarts, temporalOutagePlan, type RestartRecord } from './restarts';
import { drainScenario } from './scenarios/drain';
import { endpointsScenario } from './scenarios/endpoints';
import { foregroundScenario } from './scenarios/foreground';
import { hostileScenario } from './scenarios/hostile';
import { jobsScenario } from './scenarios/jobs';
import { namespaceScenario } from './scenarios/namespace';
import { rolloutScenario } from './scenarios/rollout';
import type { ChaosContext, ChaosScenario } from './scenarios/types';
import { pause, planStorm, runStorm, seededRandom, type KillRecord, type StormPlan } from './storm';

export const SCENARIOS: ChaosScenario[] = [rolloutScenario, drainScenario, foregroundScenario, jobsScenario, namespaceScenario, endpointsScenario, hostileScenario];
/** kills, pauses and partitions need replicas to move work between; API faults and restarts hit one replica alone, the plain case */
const replicasFor = (fault: FaultName) => (fault === 'kills' || fault === 'pauses' || fault === 'partitions' ? 3 : 1);
/** restarts: the pause before each, from the change and then from the previous one's end */
const RESTART_GAP_MS = 3_000;
/** how long the end state may take after the change (upstream) or after the storm (ours) */
const CONVERGE_TIMEOUT_MS = 600_000;
/** the pause before the end state is checked again: a late write would show by then */
const SETTLE_MS = 10_000;

export type Log = (line: string) => void;

/** Runs `step` and logs how long it took: where a pass's time goes besides converging. */
async function timed(what: string, step: () => Promise<void>, log: Log): Promise<void> {
  const t0 = Date.now();
  await step();
  log(`${what} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function stormPlan(args: ChaosArgs): StormPlan {
  return { kills: args.kills ?? (args.mode === 'full' ? 20 : 6), minGapMs: 5_000, maxGapMs: 20_000 };
}

/**
 * pauses and partitions: a replica out past its workflow tasks' 10 s timeout and its activities'
 * heartbeat timeouts, so its work moves while it is away; one after another, 5 to 15 s apart
 */
function outagePlan(args: ChaosArgs): OutagePlan {
  return { outages: args.mode === 'full' ? 4 : 2, minGapMs: 5_000, maxGapMs: 15_000, minOutMs: 20_000, maxOutMs: 60_000 };
}

const relayPorts = new PortAllocator();

/** One relay to Temporal per replica slot, for partitions: cutting one cuts that replica alone. */
async function temporalRelays(stack: BenchStack, replicas: number): Promise<TcpProxy[]> {
  const i = stack.temporalAddress.lastIndexOf(':');
  const target = { host: stack.temporalAddress.slice(0, i), port: Number(stack.temporalAddress.slice(i + 1)) };
  const relays: TcpProxy[] = [];
  for (let n = 0; n < replicas; n++) {
    const r = new TcpProxy(await relayPorts.take('chaos temporal relay'), target);
    await r.open();
    relays.push(r);
  }
  return relays;
}

/** the proxy's faults: watches cut after 5 to 30 s, as often as a busy load balancer might */
function apiPlan(args: ChaosArgs): FaultPlan {
  return { rate: args.faultRate, watchCutMinMs: 5_000, watchCutMaxMs: 30_000 };
}

/**
 * Samples the scenario's `during` invariants every second until `stop` aborts: each distinct
 * violation once, with how many samples showed it. A sample the API could not answer is skipped.
 */
export async function sampleDuring(s: ChaosScenario, ctx: ChaosContext, stop: AbortSignal): Promise<string[]> {
  const seen = new Map<string, number>();
  while (s.during && !stop.aborted) {
    for (const v of await s.during(ctx).catch(() => [])) seen.set(v, (seen.get(v) ?? 0) + 1);
    await pause(1_000, stop);
  }
  return [...seen].map(([v, n]) => `during the change: ${v}${n > 1 ? ` (in ${n} samples)` : ''}`);
}

/** The end state, its outcome and its violations, read after the change settled (or did not). */
async function finish(s: ChaosScenario, ctx: ChaosContext, audit: AuditLog, convergedAfterS: number | undefined): Promise<{ pass: PassRecord; outcome: unknown }> {
  let stable = false;
  if (convergedAfterS !== undefined) {
    await sleep(SETTLE_MS);
    stable = await s.converged(ctx).catch(() => false);
  }
  const events = audit.events();
  const violations = [...await s.violations(ctx, events), ...preconditionViolations(events), ...staleAttemptWrites(events)];
  return { pass: { convergedAfterS, stable, violations }, outcome: await s.outcome(ctx) };
}

async function upstreamPass(stack: BenchStack, s: ChaosScenario, args: ChaosArgs, audit: AuditLog, log: Log): Promise<{ pass: PassRecord; outcome?: unknown }> {
  const ctx: ChaosContext = { rest: stack.rest, ns: await freshNamespace(stack.rest, `chaos-${s.slug}-up`), mode: args.mode, log };
  let kcm: ManagedProcess | undefined;
  try {
    kcm = await startUpstream(stack, { impl: 'upstream', controllers: s.controllers, setting: SETTINGS.lifted, serviceAccountCredentials: true, tag: `chaos-${s.slug}` }, 0);
    await timed(`${ctx.ns}: prepared`, () => s.prepare(ctx), log);
    audit.mark();
    const t0 = Date.now();
    await s.act(ctx);
    const sampling = new AbortController();
    const during = sampleDuring(s, ctx, sampling.signal);
    try {
      await waitFor(`${s.slug} converged under upstream`, () => s.converged(ctx), CONVERGE_TIMEOUT_MS, 250);
    } finally {
      sampling.abort();
    }
    const done = await finish(s, ctx, audit, (Date.now() - t0) / 1000);
    done.pass.violations.push(...await during);
    return done;
  } catch (e) {
    return { pass: { stable: false, violations: [], error: String(e) } };
  } finally {
    await kcm?.kill();
    await timed(`${ctx.ns}: cleaned up`, () => s.cleanup(ctx), log).catch((e: unknown) => log(`cleanup of ${ctx.ns} failed: ${String(e)}`));
  }
}

/** Where a pass of ours talks to the API server through the fault proxy, the kubeconfig that says so. */
const proxyKubeconfigPath = (stack: BenchStack) => path.join(stack.dataDir, 'chaos-proxy.kubeconfig');

async function startProxy(stack: BenchStack, args: ChaosArgs, random: () => number): Promise<FaultProxy> {
  const pki = pkiPaths(stack.dataDir);
  // the manager's own identity passes through the proxy, as kubeadm gives it the manager
  const manager = pki.client('kube-controller-manager');
  const proxy = await startFaultProxy({
    targetPort: stack.state.ports.apiserver, servingCert: pki.apiserverCert, servingKey: pki.apiserverKey, ca: pki.caCert,
    clientCert: manager.cert, clientKey: manager.key, plan: apiPlan(args), random,
  });
  fs.writeFileSync(proxyKubeconfigPath(stack), proxiedKubeconfig(stack.managerKubeconfigPath, proxy.port), { mode: 0o600 });
  return proxy;
}

/**
 * One pass of ours under one kind of fault: the replicas start (through the proxy for `api`),
 * the scenario prepares, and the faults begin with the change. The end state is watched for while
 * they go on; kills and restarts run their whole plan even after it first holds, so the check
 * after them sees whether it still does.
 */
async function oursPass(stack: BenchStack, s: ChaosScenario, args: ChaosArgs, audit: AuditLog, fault: FaultName, seed: number, log: Log): Promise<{ pass: FaultedPass; outcome?: unknown }> {
  const ctx: ChaosContext = { rest: stack.rest, ns: await freshNamespace(stack.rest, `chaos-${s.slug}-${fault}`), mode: args.mode, log };
  const replicas = replicasFor(fault);
  const taskQueue = `chaos-${s.slug}-${fault}-${Date.now().toString(36)}`;
  const random = seededRandom(seed);
  const proxy = fault === 'api' ? await startProxy(stack, args, random) : undefined;
  const relays = fault === 'partitions' ? await temporalRelays(stack, replicas) : [];
  const start = (slot: number) => startOurs(stack, {
    impl: 'ours', controllers: s.controllers, setting: SETTINGS.lifted, serviceAccountCredentials: true, taskQueue, tag: `chaos-${s.slug}-${fault}`,
    kubeconfigPath: proxy ? proxyKubeconfigPath(stack) : undefined,
    temporalAddress: relays[slot]?.address,
  }, slot);
  const slots: ManagedProcess[] = [];
  const stop = new AbortController();
  const plain: FaultedPass = { faults: fault, replicas, stable: false, violations: [], beforeConverged: 0, differences: [] };
  try {
    // at once: each waits for its own readiness
    const started = await Promise.allSettled(Array.from({ length: replicas }, (_, i) => start(i)));
    for (const r of started) if (r.status === 'fulfilled') slots.push(r.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    await plantSecret(ctx.rest, ctx.ns);
    await timed(`${ctx.ns}: prepared`, () => s.prepare(ctx), log);
    audit.mark();
    const t0 = Date.now();
    const note = (l: string) => log(`${s.slug} (${fault}): ${l}`);
    const outage: Outage | undefined = fault === 'pauses' ? pauseOf(slots)
      : fault === 'partitions' ? { name: 'cut from Temporal', begin: (v) => relays[v].cut(), end: (v) => relays[v].open() }
      : undefined;
    const injecting: Promise<{ kills?: KillRecord[]; restarts?: RestartRecord[]; outages?: OutageRecord[] }> =
      fault === 'kills' ? runStorm(slots, planStorm(stormPlan(args), replicas, random), start, stop.signal, note).then((kills) => ({ kills }))
      : outage ? runOutages(outage, planOutages(outagePlan(args), replicas, random), stop.signal, note).then((outages) => ({ outages }))
      : fault === 'restarts' ? runRestarts(stack.dataDir, restartPlan(RESTART_GAP_MS), stop.signal, note).then((restarts) => ({ restarts }))
      : fault === 'outage' ? runRestarts(stack.dataDir, temporalOutagePlan(RESTART_GAP_MS, args.mode === 'full'), stop.signal, note).then((restarts) => ({ restarts }))
      : Promise.resolve({});
    // a failed restart rejects the injection: noted here, thrown by the await below
    let injectedUntil: number | undefined;
    let injectionFailed = false;
    injecting.then(() => { injectedUntil = Date.now(); }, () => { injectedUntil = Date.now(); injectionFailed = true; });
    await s.act(ctx);
    const sampling = new AbortController();
    const during = sampleDuring(s, ctx, sampling.signal);
    // the first moment the end state holds, watched while the faults go on
    let convergedAt: number | undefined;
    while (convergedAt === undefined) {
      if (injectionFailed) break;
      if (await s.converged(ctx).catch(() => false)) convergedAt = Date.now();
      else if (injectedUntil !== undefined && Date.now() - injectedUntil > CONVERGE_TIMEOUT_MS) break;
      else await sleep(250);
    }
    sampling.abort();
    const record = await injecting;
    const convergedAfterS = convergedAt === undefined ? undefined : (convergedAt - t0) / 1000;
    const { pass, outcome } = await finish(s, ctx, audit, convergedAfterS);
    // what stopped while Temporal was down: the controllers' writes in that window
    if (fault === 'outage') {
      const events = audit.events();
      for (const r of record.restarts ?? []) r.controllerWrites = controllerWritesBetween(events, t0 + r.atMs, t0 + r.atMs + r.downForMs);
    }
    // no Secret's value in a history or log, no run over its history budget (chaos/histories.ts)
    // every replica the faults left running is still running: none crashed on what it was given
    pass.violations.push(...await during);
    pass.violations.push(...slots.flatMap((p, i) => (p.alive() ? [] : [`replica ${i} (pid ${p.pid}) exited on its own; see ${p.logFile}`])));
    pass.violations.push(...await historyViolations({ temporalAddress: stack.temporalAddress, taskQueue, logFiles: slots.map((p) => p.logFile), log: note }));
    const times = [...(record.kills ?? []), ...(record.restarts ?? []), ...(record.outages ?? [])].map((k) => k.atMs);
    const beforeConverged = convergedAt === undefined ? times.length : times.filter((at) => t0 + at < convergedAt!).length;
    return { pass: { ...plain, ...pass, ...record, api: proxy?.counts(), beforeConverged }, outcome };
  } catch (e) {
    return { pass: { ...plain, api: proxy?.counts(), error: String(e) } };
  } finally {
    stop.abort();
    await Promise.all(slots.map((p) => p.kill('SIGKILL')));
    await proxy?.close();
    for (const r of relays) await r.cut();
    await timed(`${ctx.ns}: cleaned up`, () => s.cleanup(ctx), log).catch((e: unknown) => log(`cleanup of ${ctx.ns} failed: ${String(e)}`));
  }
}

/**
 * Every scenario of `args` on `stack`: upstream's pass first, then one of ours per kind of fault.
 * A fault needs what it hits: `restarts` restarts the stack's own etcd, kube-apiserver and Temporal.
 */
export async function runChaos(stack: BenchStack, args: ChaosArgs, seed: number, log: Log): Promise<ChaosResults> {
  const audit = new AuditLog(auditLogPath(stack.dataDir));
  const results: ChaosResults = {
    mode: args.mode, seed, storm: { ...stormPlan(args), replicas: replicasFor('kills') }, api: { ...apiPlan(args), replicas: replicasFor('api') },
    restarts: { gapMs: RESTART_GAP_MS, replicas: replicasFor('restarts') }, outages: { ...outagePlan(args), replicas: replicasFor('pauses') }, startedAt: new Date().toISOString(), finishedAt: '', scenarios: [],
  };
  try {
    for (const slug of args.scenarios) {
      const s = SCENARIOS.find((x) => x.slug === slug);
      if (!s) throw new Error(`no chaos scenario ${slug}`);
      log(`${slug}: upstream, no faults`);
      const up = await upstreamPass(stack, s, args, audit, log);
      const record: ScenarioRecord = { slug, title: s.title(args.mode), upstream: up.pass, ours: [] };
      for (const fault of args.faults) {
        log(`${slug}: ours, ${fault}`);
        const ours = await oursPass(stack, s, args, audit, fault, seed, log);
        const differences = up.outcome !== undefined && ours.outcome !== undefined ? diffOutcomes(up.outcome, ours.outcome) : [];
        const pass = { ...ours.pass, differences };
        record.ours.push(pass);
        log(`${slug} (${fault}): ${passPassed(pass) ? 'passed' : 'FAILED'} (upstream ${up.pass.convergedAfterS?.toFixed(1) ?? '-'} s, ours ${pass.convergedAfterS?.toFixed(1) ?? '-'} s, ${pass.violations.length} violations, ${differences.length} differences; ${injected(pass)})${pass.error ? `: ${pass.error}` : ''}`);
      }
      results.scenarios.push(record);
    }
  } finally {
    await killAllStarted();
  }
  results.finishedAt = new Date().toISOString();
  return results;
}
