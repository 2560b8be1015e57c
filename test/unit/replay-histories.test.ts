import * as fs from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflows, replayHistory } from '../../starter/replay/replay';

/**
 * Guarantee 2: histories recorded from real runs must replay against the current workflow code.
 * A change that alters the commands of a running workflow fails here unless it is guarded with
 * patched(); the failure names the first workflow task that no longer replays, as
 * `temporal-kcm replay` does. Add fixtures with test/replay/record.ts when a workflow gains new paths.
 */
const dir = path.join(__dirname, '..', 'replay', 'histories');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

// one webpack run for every history, as a worker after a deploy has
let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleWorkflows();
});

test('there are recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(5);
});

test.each(files)('%s replays without nondeterminism', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
  const report = await replayHistory({ history, workflowId: file, bundle });
  expect(report).toMatchObject({ ok: true });
});
