/**
 * The tests that run on a local stack (jest.config.js's globalSetup builds and starts it), one file
 * at a time, because they share the stack's nodes and cluster-wide controllers. `npm test` runs
 * this config once per lane (test/lanes/run.ts), each lane on a stack of its own; run alone it uses
 * .local/test-stack. The unit half, `jest -c jest.unit.config.js`, runs every test that needs no
 * stack, a file per core, before it.
 */
const shared = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...shared,
  roots: ['<rootDir>/test/e2e'],
  // the production topology's own tests: `npm run test:postgres` (jest.postgres.config.js)
  testPathIgnorePatterns: ['/node_modules/', '/test/e2e/postgres/'],
};
