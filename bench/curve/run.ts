import * as path from 'node:path';
import type { BenchArgs } from '../lib/args';
import { SETTINGS } from '../lib/managers';
import { BenchResults, describeEnvironment, rawResultsPath, saveSection } from '../lib/report';
import { RunRecord, runOnce } from '../lib/runner';
import type { BenchStack } from '../lib/stack';
import { connectTemporal } from '../lib/temporal';
import type { Log } from '../lib/util';
import { scaleUp } from '../scenarios/scale-up';
import type { Subject } from '../scenarios/types';
import { drawCharts } from './charts';
import { fleetCurve } from './fleet';
import { OBJECTS_PER_DEPLOYMENT, curvePlan } from './plan';
import { curveCharts, renderCurve } from './report';

/** Where the curve's charts go, relative to docs/BENCHMARKS.md. */
const CHART_DIR = 'bench';

/** `npm run bench -- --curve`: every size for both managers, then the docs section and its charts. */
export async function runCurve(args: BenchArgs, stack: BenchStack, log: Log): Promise<number> {
  const plan = curvePlan(args.mode, args.sizes, args.replicas);
  const largest = Math.max(...plan.sizes);
  const temporal = await connectTemporal(stack.temporalAddress);
  const records: RunRecord[] = [];
  const startedAt = new Date().toISOString();
  try {
    for (let rep = 0; rep < (args.reps ?? 1); rep++) {
      for (const [i, size] of plan.sizes.entries()) {
        // who goes first flips at every size and repetition
        const order: Subject[] = (i + rep) % 2 ? ['ours', 'upstream'] : ['upstream', 'ours'];
        for (const subject of order) {
          log(`curve: ${size} Deployments, ${subject}, repetition ${rep + 1}`);
          records.push(await runOnce(stack, temporal.client, fleetCurve, subject, SETTINGS.lifted, args.mode, rep, log, {
            size, replicaRounds: size === largest ? plan.replicas : [],
          }));
        }
        for (const subject of order) {
          log(`curve: scale-up to ${size * OBJECTS_PER_DEPLOYMENT} pods, ${subject}, repetition ${rep + 1}`);
          records.push(await runOnce(stack, temporal.client, scaleUp, subject, SETTINGS.lifted, args.mode, rep, log, { size: size * OBJECTS_PER_DEPLOYMENT }));
        }
      }
    }
  } finally {
    await temporal.close();
  }
  const results: BenchResults = { mode: args.mode, startedAt, finishedAt: new Date().toISOString(), environment: describeEnvironment(stack.temporalPid()), records };
  const raw = rawResultsPath(args.out, `curve-${args.mode}.json`);
  const charts = args.mode === 'smoke' ? [] : await drawCharts(curveCharts(results, plan), path.join(path.dirname(raw.out), CHART_DIR));
  const generated = renderCurve(results, plan, raw.cited, charts.map((f) => path.relative(path.dirname(raw.out), f)));
  saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: 'Scale curve', after: 'Side by side', log });
  if (charts.length) log(`and ${charts.length} charts`);
  return records.some((r) => r.error) ? 1 : 0;
}
