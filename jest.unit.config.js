/**
 * `npm run test:unit`: every test that needs no local stack, without jest.config.js's
 * globalSetup/globalTeardown (which build and start etcd, kube-apiserver, kwok and Temporal); its
 * own only make room for the one workflow bundle the workflow and replay tests share.
 * `npm test` still runs all of these too, with the full config.
 *
 * test/workflow/ runs workflows on a Temporal dev server started from the temporal CLI binary the
 * stack builds; it is included when that binary exists (npm test always has it), and left out
 * with a note otherwise.
 */
const { globalSetup, globalTeardown, ...shared } = require('./jest.config.js');
const { temporalBinary, cachedTemporalPath } = require('./test/support/temporal-binary.js');

const temporal = temporalBinary();
if (!temporal) {
  process.stderr.write(
    `test:unit: skipping test/workflow/: no temporal CLI binary (TEMPORAL_BIN, ${cachedTemporalPath()}, or on PATH). ` +
      '`node bin/temporal-kcm.js local build` or `npm test` builds it.\n',
  );
}

/** @type {import('jest').Config} */
module.exports = {
  ...shared,
  roots: ['<rootDir>/test/unit', ...(temporal ? ['<rootDir>/test/workflow'] : [])],
  // one webpack run of the workflows for every file that needs them (test/support/shared-workflow-bundle.ts)
  globalSetup: '<rootDir>/test/support/unit-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/unit-global-teardown.ts',
  // jest's default leaves a core idle (one worker on two cores); the workflow tests mostly wait on
  // the dev server's timers, so every core runs a test file. Not more: three workers on two cores
  // took a warm run from 73.8 s to 67.5 s, but from a clean clone (every transform cold, each
  // worker babel-compiling @kubernetes/client-node at once) files took 200 s and the workflow
  // tests' dev servers missed the SDK's 5 s start limit (2026-11-29)
  maxWorkers: '100%',
};
