import type { BenchArgs } from '../lib/args';
import { SETTINGS } from '../lib/managers';
import { describeEnvironment, rawResultsPath, saveSection } from '../lib/report';
import { runOnce } from '../lib/runner';
import type { BenchStack } from '../lib/stack';
import { connectTemporal } from '../lib/temporal';
import type { Log } from '../lib/util';
import { memoryPlan } from './plan';
import { MemoryRecord, MemoryResults, renderMemory } from './report';
import { memoryFleet } from './scenario';

/**
 * `npm run bench -- --memory`: at one size, per repetition upstream, ours as started by default and
 * ours with each MALLOC_ARENA_MAX of the plan, in that order; writes its section of the docs file.
 */
export async function runMemory(args: BenchArgs, stack: BenchStack, log: Log): Promise<number> {
  // the default column must be glibc's default: an arena cap inherited from this shell would void it
  if (process.env.MALLOC_ARENA_MAX !== undefined) throw new Error('--memory compares against glibc\'s default arenas: unset MALLOC_ARENA_MAX first');
  const plan = memoryPlan(args.mode, args.sizes?.[0], args.arenas);
  const temporal = await connectTemporal(stack.temporalAddress);
  const records: MemoryRecord[] = [];
  const startedAt = new Date().toISOString();
  try {
    for (let rep = 0; rep < (args.reps ?? 1); rep++) {
      for (const arenas of [undefined, ...plan.arenas]) {
        for (const subject of arenas === undefined ? ['upstream' as const, 'ours' as const] : ['ours' as const]) {
          log(`memory: ${plan.size} Deployments, ${subject}${arenas === undefined ? '' : `, MALLOC_ARENA_MAX=${arenas}`}, repetition ${rep + 1}`);
          const record = await runOnce(stack, temporal.client, memoryFleet, subject, SETTINGS.lifted, args.mode, rep, log, {
            size: plan.size, ...(arenas === undefined ? {} : { oursEnv: { MALLOC_ARENA_MAX: String(arenas) } }),
          });
          records.push({ ...record, ...(arenas === undefined ? {} : { arenaMax: arenas }) });
        }
      }
    }
  } finally {
    await temporal.close();
  }
  const results: MemoryResults = { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
  const raw = rawResultsPath(args.out, `memory-${args.mode}.json`);
  const generated = renderMemory(results, plan, raw.cited);
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: 'Memory by what holds it', after: 'The workflow cache cap', log });
  return records.some((r) => r.error) ? 1 : 0;
}
