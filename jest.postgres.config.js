/**
 * `npm run test:postgres`: the e2e smoke set (ReplicaSet, Deployment, garbage collector, Job) and
 * the topology's fault tests (test/e2e/postgres/) on a test stack whose Temporal is the production topology (`local up --temporal postgres`:
 * temporal-server on PostgreSQL, mTLS frontend), in .local/test-stack-postgres. The package script
 * sets TEMPORAL_KCM_TEST_TEMPORAL=postgres, which test/support/stack.ts reads.
 */
const shared = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...shared,
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/e2e/replicaset.test.ts', '**/e2e/deployment.test.ts', '**/e2e/garbage-collector.test.ts', '**/e2e/job.test.ts', '**/e2e/postgres/*.test.ts'],
};
