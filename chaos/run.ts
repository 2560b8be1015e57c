/**
 * `npm run chaos`: scenarios under faults (kill storms, API faults through a proxy, restarts of the
 * stack's parts), each set beside upstream kube-controller-manager's end state without faults, on
 * a stack of their own; see chaos/args.ts for the flags and docs/RELIABILITY.md for results.
 */
import * as path from 'node:path';
import { killAllStarted } from '../bench/lib/managers';
import { rawResultsPath, saveSection } from '../bench/lib/report';
import { startBenchStack, stopBenchStack } from '../bench/lib/stack';
import { repoRoot } from '../starter/local/paths';
import { CHAOS_USAGE, ChaosUsageError, parseChaosArgs, type ChaosArgs } from './args';
import { FAULTS_HEADING, SEEDS_HEADING, passed, renderFaults, renderSeeds, type ChaosResults } from './report';
import { SCENARIOS, runChaos } from './suite';

const CHAOS_DATA_DIR = path.resolve(process.env.TEMPORAL_KCM_CHAOS_DATA_DIR ?? path.join(repoRoot, '.local', 'chaos-stack'));

const log = (l: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${l}\n`);

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
  log(`chaos ${args.mode}, seed ${seed}, scenarios ${args.scenarios.join(', ')}, faults ${args.faults.join(', ')}`);
  const stack = await startBenchStack(CHAOS_DATA_DIR, log);
  const onSignal = () => void killAllStarted().then(() => stopBenchStack(stack, log)).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // --seeds N: the suite under each of N seeds in turn, on the one stack. The table is saved after
  // every seed, so a run stopped early (it takes hours) keeps the seeds it finished.
  const seeds = Array.from({ length: args.seeds ?? 1 }, (_, i) => (seed + i) >>> 0);
  const runs: ChaosResults[] = [];
  const save = () => {
    if (args.seeds) {
      const raw = rawResultsPath(args.out, `chaos-seeds-${args.mode}.json`);
      saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results: runs, generated: renderSeeds(runs, raw.cited), heading: SEEDS_HEADING, after: FAULTS_HEADING, log });
    } else {
      const raw = rawResultsPath(args.out, `chaos-${args.mode}.json`);
      saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results: runs[0], generated: renderFaults(runs[0], raw.cited), heading: FAULTS_HEADING, after: FAULTS_HEADING, log });
    }
  };
  try {
    for (const s of seeds) {
      if (args.seeds) log(`seed ${s} (${runs.length + 1} of ${seeds.length})`);
      runs.push(await runChaos(stack, args, s, log));
      if (args.seeds) save();
    }
  } finally {
    await stopBenchStack(stack, log);
  }
  if (!args.seeds) save();
  log(`chaos took ${Math.round((Date.now() - t0) / 1000)} s`);
  return runs.every((r) => r.scenarios.every(passed)) ? 0 : 1;
}

main().then((code) => process.exit(code), (e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
