import * as fs from 'node:fs';
import { status, up } from '../../starter/local/stack';
import { STARTED_MARKER, TEST_DATA_DIR, TEST_TEMPORAL } from './stack';

export default async function globalSetup(): Promise<void> {
  const before = await status(TEST_DATA_DIR);
  const wasRunning = before.parts.every((p) => p.healthy);
  const t0 = Date.now();
  await up({ dataDir: TEST_DATA_DIR, nodes: 3, temporal: TEST_TEMPORAL, log: (l) => process.stderr.write(`[local stack] ${l}\n`) });
  process.stderr.write(`[local stack] ${wasRunning ? 'reused running stack' : 'started'} in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
  if (!wasRunning) fs.writeFileSync(STARTED_MARKER, String(process.pid));
}
