import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchArgs } from '../lib/args';
import { SETTINGS } from '../lib/managers';
import { readProfiles, renderProfiles } from '../lib/profile';
import { repoRoot } from '../../starter/local/paths';
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
        // a profile directory per threshold; the scenario names its churn's and restart's managers apart within it
        const cpuProfileDir = args.profile && path.resolve(args.profile, `threshold-${threshold ?? RUN_DEFAULTS.maxHistoryEvents}`);
        const record = await runOnce(stack, temporal.client, historyCut, 'ours', SETTINGS.lifted, args.mode, rep, log, {
          ...(threshold === undefined ? {} : { oursFlags: ['--max-history-events', String(threshold)] }),
          ...(cpuProfileDir ? { cpuProfileDir } : {}),
        });
        records.push({ ...record, ...(threshold !== undefined ? { maxHistoryEvents: threshold } : {}) });
      }
    }
  } finally {
    await temporal.close();
  }
  const results: CutResults = { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
  if (args.profile) {
    // profiling slows the managers, so these figures stay out of the docs (as for the scenarios)
    const dir = path.resolve(args.profile);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
    const generated = renderHistoryCut(results, plan, RUN_DEFAULTS.maxHistoryEvents, path.join(dir, 'results.json'));
    const summary = `${generated}\n${renderProfiles(readProfiles(dir, repoRoot))}`;
    fs.writeFileSync(path.join(dir, 'summary.md'), summary + '\n');
    process.stdout.write(summary + '\n');
    log(`profiles and summary.md in ${dir}`);
    return records.some((r) => r.error) ? 1 : 0;
  }
  const raw = rawResultsPath(args.out, `history-cut-${args.mode}.json`);
  const generated = renderHistoryCut(results, plan, RUN_DEFAULTS.maxHistoryEvents, raw.cited);
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: 'The continue-as-new threshold', after: 'The workflow cache cap', log });
  return records.some((r) => r.error) ? 1 : 0;
}
