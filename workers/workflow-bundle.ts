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
  const slim = withoutSourcesContent(code);
  fs.writeFileSync(out, slim);
  return slim.length;
}

const INLINE_MAP = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';

/**
 * The bundle with its inline source map kept but the sources' text taken out of it. The worker
 * parses the map into its workflow thread to turn stack traces into file:line; the text is only
 * for showing source lines, which the manager never asks for (showStackTraceSources), and
 * holding it cost the thread about 10 MiB.
 */
export function withoutSourcesContent(code: string): string {
  const at = code.lastIndexOf(INLINE_MAP);
  if (at < 0) return code;
  const map = JSON.parse(Buffer.from(code.slice(at + INLINE_MAP.length).trim(), 'base64').toString('utf8')) as Record<string, unknown>;
  delete map.sourcesContent;
  return `${code.slice(0, at)}${INLINE_MAP}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
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
