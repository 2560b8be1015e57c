import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root, found from this file whether it runs from source (ts-jest) or from dist/. */
export const repoRoot: string = (() => {
  let dir = __dirname;
  while (!require('node:fs').existsSync(path.join(dir, 'hack', 'versions.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find hack/versions.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
})();

/** Built binaries live outside the repo so a fresh clone or `git clean` does not throw away a 20-minute build. */
export function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return process.env.TEMPORAL_KCM_CACHE_DIR || path.join(xdg, 'temporal-kcm');
}

export function defaultDataDir(): string {
  return process.env.TEMPORAL_KCM_DATA_DIR || path.resolve('.local');
}
