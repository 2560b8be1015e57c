import type { BenchArgs } from '../lib/args';
import { SETTINGS } from '../lib/managers';
import { describeEnvironment, rawResultsPath, saveSection } from '../lib/report';
import { runOnce } from '../lib/runner';
import type { BenchStack } from '../lib/stack';
import { connectTemporal } from '../lib/temporal';
import type { Log } from '../lib/util';
import { capPlan, uncapped } from './plan';
import { CapRecord, CapResults, renderCacheCap } from './report';
import { cacheCapFleet, replayCost } from './scenarios';

/** `npm run bench -- --cache-cap`: the replay cost, then upstream and ours at every cap; writes its section of the docs file. */
export async function runCacheCap(args: BenchArgs, stack: BenchStack, log: Log): Promise<number> {
  const plan = capPlan(args.mode, args.sizes?.[0], args.caps);
  const temporal = await connectTemporal(stack.temporalAddress);
  const records: CapRecord[] = [];
  const startedAt = new Date().toISOString();
  try {
    log('cache cap: replay cost against history length');
    records.push(await runOnce(stack, temporal.client, replayCost, 'ours', SETTINGS.lifted, args.mode, 0, log));
    for (let rep = 0; rep < (args.reps ?? 1); rep++) {
      for (const cap of [undefined, ...plan.caps]) {
        // upstream beside the uncapped run; each cap at the defaults, then (--unsettled) with settled
        // runs left to their resync, so that most reactions wake a long history cold
        const runs = cap === undefined
          ? [{ subject: 'upstream' as const, settled: true }, { subject: 'ours' as const, settled: true }]
          : [{ subject: 'ours' as const, settled: true }, ...(args.unsettled ? [{ subject: 'ours' as const, settled: false }] : [])];
        for (const { subject, settled } of runs) {
          log(`cache cap: ${plan.size} Deployments, ${subject}${subject === 'ours' ? `, --max-cached-workflows ${cap ?? uncapped(plan.size)}${settled ? '' : ', --settled-continue-as-new 0'}` : ''}, repetition ${rep + 1}`);
          // no cap: a cache above the fleet, so that every run stays cached (the SDK's own default,
          // about 2,300 here, was ours before a controller's default became 100)
          const record = await runOnce(stack, temporal.client, cacheCapFleet, subject, SETTINGS.lifted, args.mode, rep, log, {
            size: plan.size, oursFlags: ['--max-cached-workflows', String(cap ?? uncapped(plan.size)), ...(settled ? [] : ['--settled-continue-as-new', '0'])],
          });
          records.push({ ...record, ...(cap !== undefined ? { cap } : {}), ...(settled ? {} : { unsettled: true }) });
        }
      }
    }
  } finally {
    await temporal.close();
  }
  const results: CapResults = { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
  const raw = rawResultsPath(args.out, `cache-cap-${args.mode}.json`);
  const generated = renderCacheCap(results, plan, raw.cited);
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: 'The workflow cache cap', after: 'Scale curve', log });
  return records.some((r) => r.error) ? 1 : 0;
}
