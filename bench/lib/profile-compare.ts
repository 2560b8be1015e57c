/**
 * Two profiled processes side by side (`node dist/bench/lib/profile-compare.js DIR_A DIR_B [N]`):
 * busy time, buckets, and the N functions whose self time and whose total time (callees counted)
 * differ most, every thread of a process summed. renderProfiles shows each process alone and our
 * own functions' inclusive time only; a question such as "why does this setting cost more CPU"
 * needs the difference, and library frames' totals (the SDK's activation path, a replay).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../../starter/local/paths';
import { Bucket, CpuProfile, attributedBucket, bucketOf, profileTree, where } from './profile';

export interface FunctionTime {
  fn: string;
  where: string;
  bucket: Bucket;
  selfMs: number;
  totalMs: number;
}

export interface ProcessTimes {
  busyMs: number;
  byBucket: Map<Bucket, number>;
  /** by `function@file:line` */
  functions: Map<string, FunctionTime>;
}

const shortWhere = (url: string, line: number) => where(url, line, repoRoot);

/**
 * Adds one thread's profile into `into`: self time per frame, and total time per function (each
 * distinct function on a sampled stack counted once, so recursion does not count twice). A
 * builtin's self time goes to the bucket of its nearest caller with a script, as in profile.ts.
 */
export function addProfile(into: ProcessTimes, p: CpuProfile, root = repoRoot): void {
  const tree = profileTree(p);
  const { byId, parent, selfUs } = tree;
  const keyOf = (id: number) => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || '(anonymous)'}@${shortWhere(f.url, f.lineNumber)}`;
  };
  const entry = (id: number, bucket: Bucket) => {
    const k = keyOf(id);
    let e = into.functions.get(k);
    if (!e) {
      const f = byId.get(id)!.callFrame;
      e = { fn: f.functionName || '(anonymous)', where: shortWhere(f.url, f.lineNumber), bucket, selfMs: 0, totalMs: 0 };
      into.functions.set(k, e);
    }
    return e;
  };
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node || us === 0) continue;
    const bucket = attributedBucket(tree, id, root);
    if (bucket === 'idle') continue;
    const ms = us / 1000;
    into.busyMs += ms;
    into.byBucket.set(bucket, (into.byBucket.get(bucket) ?? 0) + ms);
    entry(id, bucket).selfMs += ms;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = keyOf(cur);
      if (seen.has(k)) continue;
      seen.add(k);
      const b = bucketOf(byId.get(cur)!.callFrame, root);
      entry(cur, b === 'idle' ? 'native (program)' : b).totalMs += ms;
    }
  }
}

/** Every .cpuprofile directly in `dir` (one process: its main thread and its worker threads). */
export function processTimes(dir: string, root = repoRoot): ProcessTimes {
  const out: ProcessTimes = { busyMs: 0, byBucket: new Map(), functions: new Map() };
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.cpuprofile')).sort()) {
    addProfile(out, JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile, root);
  }
  return out;
}

const r0 = (ms: number) => String(Math.round(ms));
const share = (ms: number, of: number) => (of > 0 ? `${((100 * ms) / of).toFixed(1)}%` : '-');

/** A markdown comparison of B against A. */
export function renderComparison(a: ProcessTimes, b: ProcessTimes, labels: [string, string], top = 25): string {
  const lines: string[] = [];
  lines.push(`Busy JavaScript-thread CPU: ${labels[0]} ${(a.busyMs / 1000).toFixed(2)} s, ${labels[1]} ${(b.busyMs / 1000).toFixed(2)} s (${a.busyMs > 0 ? (b.busyMs / a.busyMs).toFixed(2) : '-'}x).`, '');
  lines.push(`| bucket | ${labels[0]} ms | share | ${labels[1]} ms | share | difference ms |`, '|---|---:|---:|---:|---:|---:|');
  const buckets = [...new Set([...a.byBucket.keys(), ...b.byBucket.keys()])];
  const diff = (k: Bucket) => (b.byBucket.get(k) ?? 0) - (a.byBucket.get(k) ?? 0);
  for (const k of buckets.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x)))) {
    const va = a.byBucket.get(k) ?? 0;
    const vb = b.byBucket.get(k) ?? 0;
    lines.push(`| ${k} | ${r0(va)} | ${share(va, a.busyMs)} | ${r0(vb)} | ${share(vb, b.busyMs)} | ${r0(vb - va)} |`);
  }
  const keys = [...new Set([...a.functions.keys(), ...b.functions.keys()])];
  const none: FunctionTime = { fn: '', where: '', bucket: 'native (program)', selfMs: 0, totalMs: 0 };
  for (const field of ['selfMs', 'totalMs'] as const) {
    const d = (k: string) => (b.functions.get(k) ?? none)[field] - (a.functions.get(k) ?? none)[field];
    lines.push('', `Largest differences in ${field === 'selfMs' ? 'self' : 'total'} time:`, '');
    lines.push(`| function | where | bucket | ${labels[0]} ms | ${labels[1]} ms | difference ms |`, '|---|---|---|---:|---:|---:|');
    for (const k of keys.sort((x, y) => Math.abs(d(y)) - Math.abs(d(x))).slice(0, top)) {
      const f = b.functions.get(k) ?? a.functions.get(k)!;
      lines.push(`| ${f.fn} | ${f.where} | ${f.bucket} | ${r0((a.functions.get(k) ?? none)[field])} | ${r0((b.functions.get(k) ?? none)[field])} | ${r0(d(k))} |`);
    }
  }
  return lines.join('\n');
}

if (require.main === module) {
  const [dirA, dirB, n] = process.argv.slice(2);
  if (!dirA || !dirB) {
    process.stderr.write('usage: node dist/bench/lib/profile-compare.js DIR_A DIR_B [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(renderComparison(processTimes(dirA), processTimes(dirB), [path.basename(path.dirname(path.dirname(dirA))) || dirA, path.basename(path.dirname(path.dirname(dirB))) || dirB], Number(n) || 25) + '\n');
}
