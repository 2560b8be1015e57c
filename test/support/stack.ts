import * as path from 'node:path';
import { repoRoot } from '../../starter/local/paths';
import { TEMPORAL_TOPOLOGIES, TemporalTopology, isTemporalTopology } from '../../starter/local/temporal-topology';

/**
 * The Temporal topology of the test stack: the dev server, or with TEMPORAL_KCM_TEST_TEMPORAL=postgres
 * (`npm run test:postgres`) temporal-server on PostgreSQL behind an mTLS frontend.
 */
export const TEST_TEMPORAL: TemporalTopology = (() => {
  const v = process.env.TEMPORAL_KCM_TEST_TEMPORAL || 'dev';
  if (!isTemporalTopology(v)) throw new Error(`TEMPORAL_KCM_TEST_TEMPORAL=${v}: must be one of ${TEMPORAL_TOPOLOGIES.join(', ')}`);
  return v;
})();

/**
 * The stack every end-to-end test shares. Its own data dir, so `npm test` neither depends on nor
 * disturbs a developer's `npm start` stack in .local/ (one per topology: a stack keeps its own).
 */
export const TEST_DATA_DIR = process.env.TEMPORAL_KCM_TEST_DATA_DIR
  || path.join(repoRoot, '.local', TEST_TEMPORAL === 'dev' ? 'test-stack' : `test-stack-${TEST_TEMPORAL}`);

/** Marker left by global setup when it (not an earlier run) started the stack, so teardown stops only that. */
export const STARTED_MARKER = path.join(TEST_DATA_DIR, 'run', 'started-by-jest');
