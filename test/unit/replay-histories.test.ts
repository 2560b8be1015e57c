import * as fs from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { replayHistory, replayMany } from '../../starter/replay/replay';
import { projectWorkflowCode } from '../support/shared-workflow-bundle';

/**
 * Guarantee 2: histories recorded from real runs must replay against the current workflow code.
 * A change that alters the commands of a running workflow fails here unless it is guarded with
 * patched(); the failure names the first workflow task that no longer replays, as
 * `temporal-kcm replay` does. Add fixtures with test/replay/record.ts when a workflow gains new paths.
 */
const dir = path.join(__dirname, '..', 'replay', 'histories');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

const historyOf = (file: string) => historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));

// one bundle (the unit run's shared one) and one replay worker for every history, as a worker after a deploy has
let bundle: WorkflowBundleWithSourceMap;
let failures: Map<string, Error | undefined>;
beforeAll(async () => {
  bundle = await projectWorkflowCode();
  failures = await replayMany(bundle, files.map((file) => ({ workflowId: file, history: historyOf(file) })));
}, 120_000);

test('there are recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(5);
});

test.each(files)('%s replays without nondeterminism', async (file) => {
  expect(failures.has(file)).toBe(true);
  if (failures.get(file) === undefined) return;
  // the bisection names the workflow task and event the code no longer fits
  const report = await replayHistory({ history: historyOf(file), workflowId: file, bundle });
  expect(report).toMatchObject({ ok: true });
});
