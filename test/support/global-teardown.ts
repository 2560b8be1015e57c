import * as fs from 'node:fs';
import { down } from '../../starter/local/stack';
import { STARTED_MARKER, TEST_DATA_DIR } from './stack';

/** Stop the stack only if this run started it; TEMPORAL_KCM_KEEP_STACK=1 keeps it for the next run. */
export default async function globalTeardown(): Promise<void> {
  if (!fs.existsSync(STARTED_MARKER) || process.env.TEMPORAL_KCM_KEEP_STACK === '1') return;
  fs.rmSync(STARTED_MARKER, { force: true });
  await down(TEST_DATA_DIR, { log: (l) => process.stderr.write(`[local stack] ${l}\n`) });
}
