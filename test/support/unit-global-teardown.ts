import * as fs from 'node:fs';
import { SHARED_BUNDLE_DIR_ENV } from './shared-workflow-bundle';

export default function unitGlobalTeardown(): void {
  const dir = process.env[SHARED_BUNDLE_DIR_ENV];
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
