import * as fs from 'node:fs';
import { auditLogPath } from '../../starter/local/stack';
import { TEST_DATA_DIR } from './stack';

/** What the tests read of an audit event (the local stack logs at Metadata level: writes, lists and watches, not gets). */
export interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/**
 * The test stack's audit log from a mark on: what came before the mark is other tests' (tens of
 * MB late in a run), so a test reads only its own part.
 */
export class AuditLog {
  private from = 0;

  constructor(private readonly file = auditLogPath(TEST_DATA_DIR)) {}

  /** Everything written from now on is this test's. */
  mark(): void {
    this.from = fs.existsSync(this.file) ? fs.statSync(this.file).size : 0;
  }

  /** The events written since the mark (lines cut at either end by a concurrent write are skipped). */
  events(): AuditEvent[] {
    const fd = fs.openSync(this.file, 'r');
    try {
      const buf = Buffer.alloc(Math.max(0, fs.fstatSync(fd).size - this.from));
      fs.readSync(fd, buf, 0, buf.length, this.from);
      return buf.toString('utf8').split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as AuditEvent];
        } catch {
          return [];
        }
      });
    } finally {
      fs.closeSync(fd);
    }
  }
}
