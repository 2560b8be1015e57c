import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** The module every workflow type is exported from (compiled, next to this one in dist/). */
export const WORKFLOWS_ENTRY = require.resolve('../workflows');

/** Where the build writes the workflow bundle: dist/workflow-bundle.js. */
export const PREBUILT_BUNDLE = path.join(__dirname, '..', 'workflow-bundle.js');

/**
 * Bundles the workflows once, at build time. Without it every manager start runs webpack: about
 * a second of CPU before the worker polls, and webpack's modules stay in the process's memory.
 */
export async function writeWorkflowBundle(out = PREBUILT_BUNDLE): Promise<number> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_ENTRY });
  fs.writeFileSync(out, code);
  return code.length;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The prebuilt bundle, if it is at least as new as every compiled workflow module and the
 * workflow SDK; otherwise undefined and the worker bundles at start (a `tsc` without the bundle
 * step must never run stale workflow code).
 */
export function freshPrebuiltBundle(): string | undefined {
  try {
    const built = fs.statSync(PREBUILT_BUNDLE).mtimeMs;
    const sources = Math.max(newestMtime(path.dirname(WORKFLOWS_ENTRY)), fs.statSync(require.resolve('@temporalio/workflow/package.json')).mtimeMs);
    return built >= sources ? PREBUILT_BUNDLE : undefined;
  } catch {
    return undefined;
  }
}

if (require.main === module) {
  const t0 = Date.now();
  writeWorkflowBundle().then(
    (bytes) => process.stdout.write(`workflow bundle: ${path.relative(process.cwd(), PREBUILT_BUNDLE)} (${Math.round(bytes / 1024)} KiB, ${Date.now() - t0} ms)\n`),
    (e) => {
      process.stderr.write(`workflow bundle failed: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
