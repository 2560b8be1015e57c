import type { BenchArgs } from '../lib/args';
import { SETTINGS } from '../lib/managers';
import { describeEnvironment, rawResultsPath, saveSection } from '../lib/report';
import { runOnce } from '../lib/runner';
import type { BenchStack } from '../lib/stack';
import { connectTemporal } from '../lib/temporal';
import type { Log } from '../lib/util';
import { RUN_DEFAULTS } from '../../starter/run-options';
import { cutPlan } from './plan';
import { CutRecord, CutResults, renderHistoryCut } from './report';
import { historyCut } from './scenario';

/** `npm run bench -- --history-cut`: ours with the default continue-as-new threshold and each cut, alternating per repetition. */
export async function runHistoryCut(args: BenchArgs, stack: BenchStack, log: Log): Promise<number> {
  const plan = cutPlan(args.mode);
  const temporal = await connectTemporal(stack.temporalAddress);
  const records: CutRecord[] = [];
  const startedAt = new Date().toISOString();
  try {
    for (let rep = 0; rep < (args.reps ?? 1); rep++) {
      for (const threshold of [undefined, ...plan.cuts]) {
        log(`history cut: ${plan.replicaSets} ReplicaSets churned, ${threshold === undefined ? 'the default threshold' : `--max-history-events ${threshold}`}, repetition ${rep + 1}`);
        const record = await runOnce(stack, temporal.client, historyCut, 'ours', SETTINGS.lifted, args.mode, rep, log,
          threshold === undefined ? {} : { oursFlags: ['--max-history-events', String(threshold)] });
        records.push({ ...record, ...(threshold !== undefined ? { maxHistoryEvents: threshold } : {}) });
      }
    }
  } finally {
    await temporal.close();
  }
  const results: CutResults = { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
  const raw = rawResultsPath(args.out, `history-cut-${args.mode}.json`);
  const generated = renderHistoryCut(results, plan, RUN_DEFAULTS.maxHistoryEvents, raw.cited);
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: 'The continue-as-new threshold', after: 'The workflow cache cap', log });
  return records.some((r) => r.error) ? 1 : 0;
}
