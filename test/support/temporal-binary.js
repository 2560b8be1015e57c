// @ts-check
/**
 * Where the temporal CLI binary is, found as starter/local/binaries.ts locateBinary('temporal')
 * finds it (TEMPORAL_BIN, then the build cache at the pinned version, then PATH), in plain
 * JavaScript so that jest.unit.config.js can ask before any TypeScript is compiled.
 * test/unit/temporal-binary.test.ts keeps the two in agreement.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repoRoot = path.resolve(__dirname, '..', '..');

/** @param {string} file */
function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** @returns {string} */
function cachedTemporalPath() {
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const cacheRoot = process.env.TEMPORAL_KCM_CACHE_DIR || path.join(xdg, 'temporal-kcm');
  const { temporalCli, temporalCliSqlite } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'hack', 'versions.json'), 'utf8'));
  // starter/local/versions.ts temporalCliBuild
  return path.join(cacheRoot, 'temporal', `${temporalCli}-sqlite-${temporalCliSqlite}`, 'temporal');
}

/** @returns {string | undefined} the binary's path, or undefined when there is none to run */
function temporalBinary() {
  const fromEnv = process.env.TEMPORAL_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const cached = cachedTemporalPath();
  if (isExecutable(cached)) return cached;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'temporal'))) return path.join(dir, 'temporal');
  }
  return undefined;
}

module.exports = { temporalBinary, cachedTemporalPath };
