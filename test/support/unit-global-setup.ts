import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SHARED_BUNDLE_DIR_ENV } from './shared-workflow-bundle';

/** An empty directory for the run's one workflow bundle (test/support/shared-workflow-bundle.ts); the workers inherit the variable. */
export default function unitGlobalSetup(): void {
  process.env[SHARED_BUNDLE_DIR_ENV] = fs.mkdtempSync(path.join(os.tmpdir(), 'tkcm-unit-bundle-'));
}
