/**
 * `npm run chaos`: scenarios under kill storms, each set beside upstream kube-controller-manager's
 * end state without faults; see chaos/args.ts for the flags and docs/RELIABILITY.md for results.
 */
import * as path from 'node:path';
import { AuditLog } from '../bench/lib/audit';
import { SETTINGS, killAllStarted, startOurs, startUpstream, type ManagedProcess } from '../bench/lib/managers';
import { rawResultsPath, saveSection } from '../bench/lib/report';
import { type BenchStack, freshNamespace, startBenchStack, stopBenchStack } from '../bench/lib/stack';
import { sleep, waitFor } from '../bench/lib/util';
import { repoRoot } from '../starter/local/paths';
import { auditLogPath } from '../starter/local/stack';
import { CHAOS_USAGE, ChaosUsageError, parseChaosArgs, type ChaosArgs } from './args';
import { diffOutcomes } from './checks';
import { historyViolations, plantSecret } from './histories';
import { passed, renderStorms, STORM_HEADING, type ChaosResults, type PassRecord, type ScenarioRecord } from './report';
import { endpointsScenario } from './scenarios/endpoints';
import { foregroundScenario } from './scenarios/foreground';
import { jobsScenario } from './scenarios/jobs';
import { namespaceScenario } from './scenarios/namespace';
import { rolloutScenario } from './scenarios/rollout';
import type { ChaosContext, ChaosScenario } from './scenarios/types';
import { planStorm, runStorm, seededRandom, type StormPlan } from './storm';

const SCENARIOS: ChaosScenario[] = [rolloutScenario, foregroundScenario, jobsScenario, namespaceScenario, endpointsScenario];
const CHAOS_DATA_DIR = path.resolve(process.env.TEMPORAL_KCM_CHAOS_DATA_DIR ?? path.join(repoRoot, '.local', 'chaos-stack'));
const REPLICAS = 3;
/** how long the end state may take after the change (upstream) or after the storm (ours) */
const CONVERGE_TIMEOUT_MS = 600_000;
/** the pause before the end state is checked again: a late write would show by then */
const SETTLE_MS = 10_000;

const log = (l: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${l}\n`);

function stormPlan(args: ChaosArgs): StormPlan {
  return { kills: args.kills ?? (args.mode === 'full' ? 20 : 6), minGapMs: 5_000, maxGapMs: 20_000 };
}

/** The end state, its outcome and its violations, read after the change settled (or did not). */
async function finish(s: ChaosScenario, ctx: ChaosContext, audit: AuditLog, convergedAfterS: number | undefined): Promise<{ pass: PassRecord; outcome: unknown }> {
  let stable = false;
  if (convergedAfterS !== undefined) {
    await sleep(SETTLE_MS);
    stable = await s.converged(ctx).catch(() => false);
  }
  return { pass: { convergedAfterS, stable, violations: await s.violations(ctx, audit.events()) }, outcome: await s.outcome(ctx) };
}

async function upstreamPass(stack: BenchStack, s: ChaosScenario, args: ChaosArgs, audit: AuditLog): Promise<{ pass: PassRecord; outcome?: unknown }> {
  const ctx: ChaosContext = { rest: stack.rest, ns: await freshNamespace(stack.rest, `chaos-${s.slug}-up`), mode: args.mode, log };
  let kcm: ManagedProcess | undefined;
  try {
    kcm = await startUpstream(stack, { impl: 'upstream', controllers: s.controllers, setting: SETTINGS.lifted, serviceAccountCredentials: true, tag: `chaos-${s.slug}` }, 0);
    await s.prepare(ctx);
    audit.mark();
    const t0 = Date.now();
    await s.act(ctx);
    await waitFor(`${s.slug} converged under upstream`, () => s.converged(ctx), CONVERGE_TIMEOUT_MS, 250);
    return await finish(s, ctx, audit, (Date.now() - t0) / 1000);
  } catch (e) {
    return { pass: { stable: false, violations: [], error: String(e) } };
  } finally {
    await kcm?.kill();
    await s.cleanup(ctx).catch((e: unknown) => log(`cleanup of ${ctx.ns} failed: ${String(e)}`));
  }
}

async function oursPass(stack: BenchStack, s: ChaosScenario, args: ChaosArgs, audit: AuditLog, seed: number): Promise<{ pass: ScenarioRecord['ours']; outcome?: unknown }> {
  const ctx: ChaosContext = { rest: stack.rest, ns: await freshNamespace(stack.rest, `chaos-${s.slug}`), mode: args.mode, log };
  const taskQueue = `chaos-${s.slug}-${Date.now().toString(36)}`;
  const start = (slot: number) => startOurs(stack, { impl: 'ours', controllers: s.controllers, setting: SETTINGS.lifted, serviceAccountCredentials: true, taskQueue, tag: `chaos-${s.slug}` }, slot);
  const slots: ManagedProcess[] = [];
  const stop = new AbortController();
  const kills = planStorm(stormPlan(args), REPLICAS, seededRandom(seed));
  try {
    for (let i = 0; i < REPLICAS; i++) slots.push(await start(i));
    await plantSecret(ctx.rest, ctx.ns);
    await s.prepare(ctx);
    audit.mark();
    const t0 = Date.now();
    const storm = runStorm(slots, kills, start, stop.signal, (l) => log(`${s.slug}: ${l}`));
    await s.act(ctx);
    // the first moment the end state holds, watched while the storm goes on
    let convergedAt: number | undefined;
    let stormDone = false;
    // a failed restart rejects the storm: noted here, thrown by the await below
    storm.then(() => { stormDone = true; }, () => { stormDone = true; });
    while (convergedAt === undefined && !stormDone) {
      if (await s.converged(ctx).catch(() => false)) convergedAt = Date.now();
      else await sleep(250);
    }
    const record = await storm;
    if (convergedAt === undefined) {
      convergedAt = await waitFor(`${s.slug} converged under ours`, async () => (await s.converged(ctx)) && Date.now(), CONVERGE_TIMEOUT_MS, 250).catch(() => undefined);
    }
    const convergedAfterS = convergedAt === undefined ? undefined : (convergedAt - t0) / 1000;
    const { pass, outcome } = await finish(s, ctx, audit, convergedAfterS);
    // no Secret's value in a history or log, no run over its history budget (chaos/histories.ts)
    pass.violations.push(...await historyViolations({ temporalAddress: stack.temporalAddress, taskQueue, logFiles: slots.map((p) => p.logFile), log: (l) => log(`${s.slug}: ${l}`) }));
    const killsBeforeConverged = convergedAt === undefined ? record.length : record.filter((k) => t0 + k.atMs < convergedAt!).length;
    return { pass: { ...pass, kills: record, killsBeforeConverged }, outcome };
  } catch (e) {
    return { pass: { stable: false, violations: [], error: String(e), kills: [], killsBeforeConverged: 0 } };
  } finally {
    stop.abort();
    await Promise.all(slots.map((p) => p.kill('SIGKILL')));
    await s.cleanup(ctx).catch((e: unknown) => log(`cleanup of ${ctx.ns} failed: ${String(e)}`));
  }
}

async function main(): Promise<number> {
  let args: ChaosArgs;
  try {
    args = parseChaosArgs(process.argv.slice(2), SCENARIOS.map((s) => s.slug));
  } catch (e) {
    if (!(e instanceof ChaosUsageError)) throw e;
    if (e.message) process.stderr.write(`${e.message}\n`);
    process.stderr.write(CHAOS_USAGE);
    return e.message ? 2 : 0;
  }
  const seed = args.seed ?? (Date.now() >>> 0);
  const t0 = Date.now();
  log(`chaos ${args.mode}, seed ${seed}, scenarios ${args.scenarios.join(', ')}`);
  const stack = await startBenchStack(CHAOS_DATA_DIR, log);
  const onSignal = () => void killAllStarted().then(() => stopBenchStack(stack, log)).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const audit = new AuditLog(auditLogPath(CHAOS_DATA_DIR));
  const results: ChaosResults = { mode: args.mode, seed, storm: { ...stormPlan(args), replicas: REPLICAS }, startedAt: new Date().toISOString(), finishedAt: '', scenarios: [] };
  try {
    for (const slug of args.scenarios) {
      const s = SCENARIOS.find((x) => x.slug === slug)!;
      log(`${slug}: upstream, no faults`);
      const up = await upstreamPass(stack, s, args, audit);
      log(`${slug}: ours, ${results.storm.kills} kills`);
      const ours = await oursPass(stack, s, args, audit, seed);
      const differences = up.outcome !== undefined && ours.outcome !== undefined ? diffOutcomes(up.outcome, ours.outcome) : [];
      const record: ScenarioRecord = { slug, title: s.title(args.mode), upstream: up.pass, ours: ours.pass, differences };
      results.scenarios.push(record);
      log(`${slug}: ${passed(record) ? 'passed' : 'FAILED'} (upstream ${up.pass.convergedAfterS?.toFixed(1) ?? '-'} s, ours ${ours.pass.convergedAfterS?.toFixed(1) ?? '-'} s, ${ours.pass.violations.length} violations, ${differences.length} differences)`);
    }
  } finally {
    await killAllStarted();
    await stopBenchStack(stack, log);
  }
  results.finishedAt = new Date().toISOString();
  const raw = rawResultsPath(args.out, `chaos-${args.mode}.json`);
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated: renderStorms(results, raw.cited), heading: STORM_HEADING, after: STORM_HEADING, log });
  log(`chaos took ${Math.round((Date.now() - t0) / 1000)} s`);
  return results.scenarios.every(passed) ? 0 : 1;
}

main().then((code) => process.exit(code), (e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
