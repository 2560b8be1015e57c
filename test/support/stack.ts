import * as path from 'node:path';
import { repoRoot } from '../../starter/local/paths';

/**
 * The stack every end-to-end test shares. Its own data dir, so `npm test` neither depends on nor
 * disturbs a developer's `npm start` stack in .local/.
 */
export const TEST_DATA_DIR = process.env.TEMPORAL_KCM_TEST_DATA_DIR || path.join(repoRoot, '.local', 'test-stack');

/** Marker left by global setup when it (not an earlier run) started the stack, so teardown stops only that. */
export const STARTED_MARKER = path.join(TEST_DATA_DIR, 'run', 'started-by-jest');
