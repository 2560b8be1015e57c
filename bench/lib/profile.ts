import * as fs from 'node:fs';
import * as path from 'node:path';

/** The parts of V8's .cpuprofile format (what node --cpu-prof writes) this summary reads. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

/**
 * Where a sampled frame's time goes. The buckets answer the benchmark's question (how much is
 * Temporal, how much the Kubernetes client, how much our own code), so they follow package
 * boundaries rather than V8's own categories.
 */
export type Bucket =
  | 'our code'
  | 'workflow sandbox'
  | 'workflow vm entry'
  | 'workflow bundling'
  | 'Temporal SDK'
  | 'protobuf/gRPC'
  | 'Kubernetes client'
  | 'HTTP/TLS/streams (node)'
  | 'logging'
  | 'metrics'
  | 'other libraries'
  | 'module loading'
  | 'worker-thread messaging'
  | 'node runtime'
  | 'garbage collection'
  | 'native (program)';

const BY_PACKAGE: Array<[RegExp, Bucket]> = [
  [/node_modules\/(webpack|webpack-sources|enhanced-resolve|terser|terser-webpack-plugin|acorn|@swc|swc-loader|source-map|schema-utils|loader-runner|watchpack|tapable|memfs|graceful-fs)\//, 'workflow bundling'],
  [/node_modules\/(protobufjs|@protobufjs|@grpc|long)\//, 'protobuf/gRPC'],
  [/node_modules\/@temporalio\//, 'Temporal SDK'],
  [/node_modules\/(@kubernetes|node-fetch|isomorphic-ws|ws|jsonpath-plus|js-yaml|form-data|openid-client|jose)\//, 'Kubernetes client'],
  [/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|atomic-sleep|on-exit-leak-free|safe-stable-stringify)\//, 'logging'],
  [/node_modules\/(prom-client|tdigest|bintrees)\//, 'metrics'],
];

/** The bucket of one frame, from its script URL (and V8's pseudo-frames by name). */
export function bucketOf(frame: { functionName: string; url: string }, repoRoot: string): Bucket | 'idle' {
  const { functionName: fn, url } = frame;
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)' || fn === '(root)') return 'native (program)';
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  for (const [re, bucket] of BY_PACKAGE) if (re.test(file)) return bucket;
  if (file.includes('/node_modules/')) return 'other libraries';
  // the workflow bundle is evaluated inside a vm context under a name of Temporal's choosing
  if (/workflow-bundle|^\/?workflows?[-.]/.test(file) || (file !== '' && !file.startsWith('/') && !file.startsWith('node:'))) return 'workflow sandbox';
  if (file.startsWith(repoRoot)) return 'our code';
  if (/^node:(_http|http|https|net|tls|_tls|stream|internal\/(streams|http|tls|net|stream_base|js_stream))/.test(file)) return 'HTTP/TLS/streams (node)';
  // Temporal runs each workflow activation through vm's runInContext: the context switch and its
  // microtask drain show up as native time under node:vm
  if (file === 'node:vm') return 'workflow vm entry';
  if (/^node:internal\/(modules|vm\/module)/.test(file)) return 'module loading';
  if (/^node:internal\/(worker|per_context\/messageport)/.test(file)) return 'worker-thread messaging';
  return 'node runtime';
}

export interface ProfileSummary {
  /** sampled wall time of the thread */
  sampledMs: number;
  idleMs: number;
  /** sampled busy time (sampled minus idle) */
  busyMs: number;
  byBucket: Partial<Record<Bucket, number>>;
  /** the heaviest functions by self time */
  topSelf: Array<{ fn: string; where: string; bucket: Bucket; ms: number }>;
  /** our own functions by inclusive time (callees counted), to see which of our paths drive the rest */
  topOwnInclusive: Array<{ fn: string; where: string; ms: number }>;
}

/** A frame's place as `file:line`, relative to the repo or to node_modules. */
export const where = (url: string, line: number, repoRoot: string) => {
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const short = file.startsWith(repoRoot) ? path.relative(repoRoot, file) : file.replace(/^.*\/node_modules\//, '');
  return short ? `${short}:${line + 1}` : '';
};

/** One thread's profile as a tree: nodes by id, each node's parent, and the self time sampled in each. */
export interface ProfileTree {
  byId: Map<number, CpuProfile['nodes'][number]>;
  parent: Map<number, number>;
  selfUs: Map<number, number>;
}

export function profileTree(p: CpuProfile): ProfileTree {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  // a sample's delta is the time since the previous one, so it belongs to the previous sample
  for (let i = 0; i < samples.length; i++) selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, deltas[i + 1] ?? 0));
  return { byId, parent, selfUs };
}

/**
 * A node's bucket. Builtins (JSON.parse, postMessage, vm's runInContext) have no script of their
 * own: their time belongs to whoever called them, so they take the bucket of the nearest caller
 * that has one.
 */
export function attributedBucket(t: ProfileTree, id: number, repoRoot: string): Bucket | 'idle' {
  const own = t.byId.get(id)!.callFrame;
  const b = bucketOf(own, repoRoot);
  if (own.url !== '' || own.functionName.startsWith('(')) return b;
  for (let cur = t.parent.get(id); cur !== undefined; cur = t.parent.get(cur)) {
    const f = t.byId.get(cur)!.callFrame;
    if (f.url !== '') return bucketOf(f, repoRoot);
  }
  return b;
}

/** Self and inclusive time per frame of one thread's profile, summed into buckets. */
export function summarizeProfile(p: CpuProfile, repoRoot: string, top = 15): ProfileSummary {
  const tree = profileTree(p);
  const { byId, parent, selfUs } = tree;
  const byBucket: Partial<Record<Bucket, number>> = {};
  const selfByFn = new Map<string, { fn: string; where: string; bucket: Bucket; us: number }>();
  const inclusiveOwn = new Map<string, { fn: string; where: string; us: number }>();
  let idleUs = 0;
  let totalUs = 0;
  const attributed = (id: number) => attributedBucket(tree, id, repoRoot);
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node || us === 0) continue;
    totalUs += us;
    const bucket = attributed(id);
    if (bucket === 'idle') { idleUs += us; continue; }
    byBucket[bucket] = (byBucket[bucket] ?? 0) + us / 1000;
    const fn = node.callFrame.functionName || '(anonymous)';
    const at = where(node.callFrame.url, node.callFrame.lineNumber, repoRoot);
    const key = `${fn}@${at}`;
    const e = selfByFn.get(key) ?? { fn, where: at, bucket, us: 0 };
    e.us += us;
    selfByFn.set(key, e);
    // every distinct own frame on this stack gets the time once, however deep the recursion
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (bucketOf(f, repoRoot) !== 'our code') continue;
      const k = `${f.functionName || '(anonymous)'}@${where(f.url, f.lineNumber, repoRoot)}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const o = inclusiveOwn.get(k) ?? { fn: f.functionName || '(anonymous)', where: where(f.url, f.lineNumber, repoRoot), us: 0 };
      o.us += us;
      inclusiveOwn.set(k, o);
    }
  }
  const ms = (us: number) => Math.round(us / 100) / 10;
  for (const b of Object.keys(byBucket) as Bucket[]) byBucket[b] = Math.round(byBucket[b]! * 10) / 10;
  return {
    sampledMs: ms(totalUs),
    idleMs: ms(idleUs),
    busyMs: ms(totalUs - idleUs),
    byBucket,
    topSelf: [...selfByFn.values()].sort((a, b) => b.us - a.us).slice(0, top).map(({ us, ...r }) => ({ ...r, ms: ms(us) })),
    topOwnInclusive: [...inclusiveOwn.values()].sort((a, b) => b.us - a.us).slice(0, top).map(({ us, ...r }) => ({ ...r, ms: ms(us) })),
  };
}

export interface ProfiledProcess {
  dir: string;
  /** one entry per thread: the main thread first, then worker threads */
  threads: Array<{ file: string; summary: ProfileSummary }>;
}

/** Every directory under `root` holding .cpuprofile files (one per manager process). */
export function readProfiles(root: string, repoRoot: string): ProfiledProcess[] {
  const out: ProfiledProcess[] = [];
  const walk = (dir: string) => {
    const entries = fs.readdirSync(dir, { withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && e.name.endsWith('.cpuprofile')).map((e) => e.name).sort();
    if (files.length) {
      out.push({
        dir: path.relative(root, dir),
        threads: files.map((f) => ({ file: f, summary: summarizeProfile(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile, repoRoot) })),
      });
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  if (fs.existsSync(root)) walk(root);
  return out;
}

/** A markdown report: buckets per process (threads summed), then the top frames of the busiest. */
export function renderProfiles(processes: ProfiledProcess[]): string {
  const lines: string[] = [];
  for (const p of processes) {
    const busy = p.threads.reduce((n, t) => n + t.summary.busyMs, 0);
    const buckets = new Map<string, number>();
    for (const t of p.threads) for (const [b, v] of Object.entries(t.summary.byBucket)) buckets.set(b, (buckets.get(b) ?? 0) + v);
    lines.push(`### ${p.dir}: ${(busy / 1000).toFixed(2)} s of JavaScript-thread CPU over ${p.threads.length} thread(s)`, '');
    lines.push('| where | ms | share |', '|---|---:|---:|');
    for (const [b, v] of [...buckets].sort((x, y) => y[1] - x[1])) lines.push(`| ${b} | ${Math.round(v)} | ${busy ? ((100 * v) / busy).toFixed(1) : '0'}% |`);
    lines.push('');
    for (const t of p.threads) {
      lines.push(`Thread ${t.file}: busy ${Math.round(t.summary.busyMs)} ms of ${Math.round(t.summary.sampledMs)} ms sampled.`, '');
      lines.push('| self ms | function | where | bucket |', '|---:|---|---|---|');
      for (const f of t.summary.topSelf.slice(0, 10)) lines.push(`| ${f.ms} | ${f.fn} | ${f.where} | ${f.bucket} |`);
      if (t.summary.topOwnInclusive.length) {
        lines.push('', '| inclusive ms | our function | where |', '|---:|---|---|');
        for (const f of t.summary.topOwnInclusive.slice(0, 10)) lines.push(`| ${f.ms} | ${f.fn} | ${f.where} |`);
      }
      lines.push('');
    }
  }
  return lines.join('\n');
}
