import type { DestinationStream } from 'pino';

/*
 * `--logging-format=text`: each JSON line the logger writes, reshaped as klog's text lines, which
 * upstream kube-controller-manager writes by default:
 *   I1129 14:04:56.270781   14777 replicaset] "scaled up" key="default/web" replicas=3
 * klog's header names the Go file and line; here it names the controller (or component) the line
 * is about, which is what one greps for. Hand-written: klog's shape is a small fixed format with no
 * maintained Node.js writer.
 */

/** pino's level names as klog's severity letters (klog has no debug or trace: V-levels print as I). */
const SEVERITY: Record<string, string> = { trace: 'I', debug: 'I', info: 'I', warn: 'W', error: 'E', fatal: 'F' };

/** Fields the header or the logger itself carries, left out of the key=value list. */
const HEADER_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A value as klog's text format writes it: strings quoted, numbers and booleans bare, the rest as JSON. */
function klogValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v);
}

/** One pino record (its parsed JSON line) as one klog text line, without the newline. */
export function klogLine(record: Record<string, unknown>): string {
  const at = new Date(typeof record.time === 'string' || typeof record.time === 'number' ? record.time : Date.now());
  // klog writes local time to the microsecond; the record keeps milliseconds
  const stamp = `${pad(at.getMonth() + 1)}${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}000`;
  const severity = SEVERITY[String(record.level)] ?? 'I';
  const source = String(record.controller ?? record.component ?? record.name ?? 'temporal-kcm');
  const pairs = Object.entries(record)
    .filter(([k, v]) => !HEADER_FIELDS.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${klogValue(v)}`);
  return `${severity}${stamp} ${String(record.pid ?? process.pid).padStart(7)} ${source}] ${JSON.stringify(String(record.msg ?? ''))}${pairs.length ? ` ${pairs.join(' ')}` : ''}`;
}

/** A pino destination that writes klog text lines to `out` (stdout by default). */
export function klogTextDestination(out: { write(s: string): unknown } = process.stdout): DestinationStream {
  return {
    write(line: string): void {
      for (const one of line.split('\n')) {
        if (!one) continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(one) as Record<string, unknown>;
        } catch {
          out.write(`${one}\n`);
          continue;
        }
        out.write(`${klogLine(record)}\n`);
      }
    },
  };
}
