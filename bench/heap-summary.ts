import * as fs from 'node:fs';

/**
 * `node dist/bench/heap-summary.js A.heapsnapshot [B.heapsnapshot --per N] [--top K]`: what a V8
 * heap snapshot holds, summed by kind of node (its type and constructor or function name), the
 * largest first. With a second snapshot, the difference B - A, divided by `--per` (the number of
 * workflow runs B holds more than A): what one more cached run costs, by kind. Reads snapshots of
 * a few hundred MiB (a whole snapshot is parsed at once).
 */

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface KindTotal {
  kind: string;
  count: number;
  bytes: number;
}

/** Self sizes summed by `type:name` (strings and code by type alone: their names are their contents). */
export function totalsByKind(snap: HeapSnapshot): Map<string, KindTotal> {
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map<string, KindTotal>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]];
    const named = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' || type === 'array';
    const kind = named ? `${type}:${snap.strings[snap.nodes[i + iName]].slice(0, 60)}` : type;
    const t = out.get(kind) ?? { kind, count: 0, bytes: 0 };
    t.count++;
    t.bytes += snap.nodes[i + iSize];
    out.set(kind, t);
  }
  return out;
}

/** B - A by kind, each divided by `per`, the largest growth first. */
export function growthByKind(a: Map<string, KindTotal>, b: Map<string, KindTotal>, per: number): KindTotal[] {
  const kinds = new Set([...a.keys(), ...b.keys()]);
  return [...kinds].map((kind) => ({
    kind,
    count: ((b.get(kind)?.count ?? 0) - (a.get(kind)?.count ?? 0)) / per,
    bytes: ((b.get(kind)?.bytes ?? 0) - (a.get(kind)?.bytes ?? 0)) / per,
  })).sort((x, y) => y.bytes - x.bytes);
}

function table(rows: KindTotal[], top: number, total: number, unit: string): string {
  const lines = [`| kind | count${unit} | bytes${unit} | share |`, '| --- | ---: | ---: | ---: |'];
  for (const r of rows.slice(0, top)) lines.push(`| ${r.kind.replace(/\|/g, '\\|')} | ${r.count.toFixed(1)} | ${Math.round(r.bytes)} | ${((100 * r.bytes) / total).toFixed(1)}% |`);
  lines.push(`| (all) | | ${Math.round(total)} | 100% |`);
  return lines.join('\n');
}

function main(argv: string[]): number {
  const files = argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
  const opt = (name: string, def: number) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : def;
  };
  const top = opt('--top', 30);
  if (files.length < 1 || files.length > 2) {
    process.stderr.write('usage: node dist/bench/heap-summary.js A.heapsnapshot [B.heapsnapshot --per N] [--top K]\n');
    return 2;
  }
  const read = (f: string) => totalsByKind(JSON.parse(fs.readFileSync(f, 'utf8')) as HeapSnapshot);
  const a = read(files[0]);
  if (files.length === 1) {
    const rows = [...a.values()].sort((x, y) => y.bytes - x.bytes);
    process.stdout.write(table(rows, top, rows.reduce((s, r) => s + r.bytes, 0), '') + '\n');
    return 0;
  }
  const per = opt('--per', 1);
  const rows = growthByKind(a, read(files[1]), per);
  process.stdout.write(table(rows, top, rows.reduce((s, r) => s + r.bytes, 0), per === 1 ? '' : ' per run') + '\n');
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
