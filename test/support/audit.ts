import { AuditLog as StackAuditLog } from '../../bench/lib/audit';
import { auditLogPath } from '../../starter/local/stack';
import { TEST_DATA_DIR } from './stack';

export type { AuditEvent } from '../../bench/lib/audit';
export { isDryRun, writesOfOurControllers } from '../../bench/lib/audit';

/** The test stack's audit log (see bench/lib/audit): a test reads only what came after its mark. */
export class AuditLog extends StackAuditLog {
  constructor(file = auditLogPath(TEST_DATA_DIR)) {
    super(file);
  }
}
