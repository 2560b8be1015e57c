import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflows, defaultWorkflowsPath } from '../../starter/replay/replay';

/**
 * One webpack run of the project's workflows for a whole unit run, however many test files
 * (workers) need it: bundling costs about 5 s of CPU, and the workflow tests and the replay of
 * the recorded histories each used to pay it. jest.unit.config.js's global setup names an empty
 * directory in this variable; the first file to ask bundles into it, under a lock, and the
 * others wait for it. Without the variable (another config) each caller bundles for itself.
 */
export const SHARED_BUNDLE_DIR_ENV = 'TEMPORAL_KCM_TEST_BUNDLE_DIR';

const CODE = 'workflows.js';
const MAP = 'workflows.js.map';
const READY = 'ready';
const FAILED = 'failed';

async function build(dir: string): Promise<void> {
  try {
    const { code, sourceMap } = await bundleWorkflows();
    fs.writeFileSync(path.join(dir, CODE), code);
    fs.writeFileSync(path.join(dir, MAP), sourceMap);
    fs.writeFileSync(path.join(dir, READY), '');
  } catch (e) {
    fs.writeFileSync(path.join(dir, FAILED), String((e as Error).stack ?? e));
    throw e;
  }
}

/** The files of the shared bundle, bundled by this call or by another file's. */
async function sharedFiles(dir: string): Promise<{ codePath: string; sourceMapPath: string }> {
  let mine = false;
  try {
    fs.mkdirSync(path.join(dir, 'lock'));
    mine = true;
  } catch {
    // another test file is bundling, or has
  }
  if (mine) await build(dir);
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(path.join(dir, READY))) {
    if (fs.existsSync(path.join(dir, FAILED))) throw new Error(`the shared workflow bundle failed: ${fs.readFileSync(path.join(dir, FAILED), 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`no shared workflow bundle in ${dir} after 120 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { codePath: path.join(dir, CODE), sourceMapPath: path.join(dir, MAP) };
}

/** The project's workflows bundled, as Worker.create's `workflowBundle` takes them. */
export async function projectWorkflowBundle(): Promise<{ codePath: string; sourceMapPath: string } | WorkflowBundleWithSourceMap> {
  const dir = process.env[SHARED_BUNDLE_DIR_ENV];
  return dir ? sharedFiles(dir) : bundleWorkflows();
}

/** The same, as code and source map in memory (what the replayer takes). */
export async function projectWorkflowCode(): Promise<WorkflowBundleWithSourceMap> {
  const b = await projectWorkflowBundle();
  return 'codePath' in b ? { code: fs.readFileSync(b.codePath, 'utf8'), sourceMap: fs.readFileSync(b.sourceMapPath, 'utf8') } : b;
}

/** Whether `workflowsPath` names the project's workflows (which the shared bundle holds). */
export function isProjectWorkflows(workflowsPath: string): boolean {
  return workflowsPath === defaultWorkflowsPath();
}
