/**
 * Benchmarks side by side with upstream kube-controller-manager, on the bench stack in
 * .local/bench-stack: see bench/lib/args.ts for the flags and docs/BENCHMARKS.md for the results.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../starter/local/paths';
import { runCurve } from './curve/run';
import { runCacheCap } from './cache-cap/run';
import { runHistoryCut } from './history-cut/run';
import { runMemory } from './memory/run';
import { USAGE, UsageError, parseArgs, BenchArgs } from './lib/args';
import { SETTINGS, killAllStarted } from './lib/managers';
import { readProfiles, renderProfiles } from './lib/profile';
import { BenchResults, describeEnvironment, mergeIntoDoc, renderResults } from './lib/report';
import { RunRecord, runOnce } from './lib/runner';
import { BENCH_DATA_DIR, BenchStack, startBenchStack, stopBenchStack } from './lib/stack';
import { connectTemporal } from './lib/temporal';
import { SCENARIOS } from './scenarios';
import type { Subject } from './scenarios/types';

const log = (l: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${l}\n`);

async function bench(args: BenchArgs, stack: BenchStack): Promise<BenchResults> {
  const scenarios = SCENARIOS.filter((s) => args.scenarios.includes(s.id));
  const temporal = await connectTemporal(stack.temporalAddress);
  const records: RunRecord[] = [];
  const startedAt = new Date().toISOString();
  try {
    const reps = Math.max(...scenarios.map((s) => args.reps ?? s.reps(args.mode)));
    for (let rep = 0; rep < reps; rep++) {
      for (const s of scenarios) {
        if (rep >= (args.reps ?? s.reps(args.mode))) continue;
        const settings = args.mode === 'smoke' ? (['default'] as const) : s.settings(args.mode);
        for (const name of settings) {
          // who goes first flips every repetition, so neither always meets a freshly idle stack
          const order: Subject[] = rep % 2 ? [...s.subjects].reverse() : s.subjects;
          for (const subject of order) {
            log(`scenario ${s.id} (${s.slug}), ${subject}, ${name}, repetition ${rep + 1}`);
            records.push(await runOnce(stack, temporal.client, s, subject, SETTINGS[name], args.mode, rep, log, { cpuProfileDir: args.profile && path.resolve(args.profile) }));
          }
        }
      }
    }
  } finally {
    await temporal.close();
  }
  return { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
}

async function main(): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    if (e.message) process.stderr.write(`${e.message}\n`);
    process.stderr.write(USAGE);
    return e.message ? 2 : 0;
  }
  const t0 = Date.now();
  const stack = await startBenchStack(BENCH_DATA_DIR, log);
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping what this run started`);
    void killAllStarted().then(() => stopBenchStack(stack, log)).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  if (args.curve || args.cacheCap || args.historyCut || args.memory) {
    try {
      const code = args.curve ? await runCurve(args, stack, log) : args.cacheCap ? await runCacheCap(args, stack, log)
        : args.memory ? await runMemory(args, stack, log) : await runHistoryCut(args, stack, log);
      log(`${args.curve ? 'curve' : args.cacheCap ? 'cache cap' : args.memory ? 'memory' : 'history cut'} took ${Math.round((Date.now() - t0) / 1000)} s`);
      return code;
    } finally {
      await killAllStarted();
      await stopBenchStack(stack, log);
    }
  }
  let results: BenchResults;
  try {
    results = await bench(args, stack);
  } finally {
    await killAllStarted();
    await stopBenchStack(stack, log);
  }

  if (args.profile) {
    const dir = path.resolve(args.profile);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
    const summary = renderProfiles(readProfiles(dir, repoRoot));
    fs.writeFileSync(path.join(dir, 'summary.md'), summary + '\n');
    process.stdout.write(summary + '\n');
    log(`profiles and summary.md in ${dir}; took ${Math.round((Date.now() - t0) / 1000)} s`);
    return results.records.some((r) => r.error) ? 1 : 0;
  }
  const rawRel = path.join('bench', 'results', `${args.mode}.json`);
  fs.mkdirSync(path.join(repoRoot, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(repoRoot, rawRel), JSON.stringify(results, null, 2) + '\n');
  const scenarios = SCENARIOS.filter((s) => args.scenarios.includes(s.id));
  const generated = renderResults(results, scenarios, rawRel);
  if (args.mode === 'smoke') {
    process.stdout.write(generated + '\n');
  } else {
    const out = path.resolve(repoRoot, args.out);
    const current = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
    fs.writeFileSync(out, mergeIntoDoc(current, generated));
    log(`wrote ${path.relative(repoRoot, out)}`);
  }
  log(`raw samples in ${rawRel}; ${results.records.filter((r) => r.error).length} failed of ${results.records.length}; took ${Math.round((Date.now() - t0) / 1000)} s`);
  return results.records.some((r) => r.error) ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
