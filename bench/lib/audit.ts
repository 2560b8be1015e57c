import * as fs from 'node:fs';

/**
 * What the checks read of an audit event. The local stack logs writes, lists and watches (not gets)
 * at Metadata level, and controllers' updates, patches and deletes at Request level, which adds
 * `requestObject`: the body sent (the object of an update, the patch, the DeleteOptions of a delete).
 */
export interface AuditEvent {
  /** Metadata or Request (see the policy in starter/local/stack.ts) */
  level?: string;
  verb: string;
  /** with its query, e.g. ?dryRun=All */
  requestURI?: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: unknown;
  /** when the API server took the request, to the microsecond (RFC 3339) */
  requestReceivedTimestamp?: string;
}

/**
 * A local stack's audit log from a mark on: what came before the mark is other runs' (tens of MB
 * late in a test run or a bench), so a reader takes only its own part.
 */
export class AuditLog {
  private from = 0;

  constructor(private readonly file: string) {}

  /** Everything written from now on is the reader's. */
  mark(): void {
    this.from = fs.existsSync(this.file) ? fs.statSync(this.file).size : 0;
  }

  /** The events written since the mark (lines cut at either end by a concurrent write are skipped). */
  events(): AuditEvent[] {
    const fd = fs.openSync(this.file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      // a rotated log (--audit-log-maxsize) starts again from nothing
      const from = size < this.from ? 0 : this.from;
      const buf = Buffer.alloc(Math.max(0, size - from));
      fs.readSync(fd, buf, 0, buf.length, from);
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

/** our controllers' user agent: `temporal-kcm/<version> (<os>) temporal-kcm/<controller>` */
const OUR_CONTROLLER_AGENT = /^temporal-kcm\/\S+ \([^)]*\) temporal-kcm\/./;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Was the request a server-side dry run (a --shadow replica's write)? */
export const isDryRun = (e: AuditEvent): boolean => /[?&]dryRun=All(&|$)/.test(e.requestURI ?? '');

/** The writes our controllers sent (the manager's own calls, and the harness's, are not theirs). */
export function writesOfOurControllers(events: AuditEvent[]): AuditEvent[] {
  return events.filter((e) => OUR_CONTROLLER_AGENT.test(e.userAgent ?? '') && WRITE_VERBS.has(e.verb));
}
