import { type BenchResults, num, withRatio } from '../lib/report';
import type { RunRecord } from '../lib/runner';
import { median } from '../lib/stats';
import type { MemoryPlan } from './plan';

/** A run of the memory study: the MALLOC_ARENA_MAX ours ran with (absent: glibc's default, or upstream). */
export type MemoryRecord = RunRecord & { arenaMax?: number };

export type MemoryResults = Omit<BenchResults, 'records'> & { records: MemoryRecord[] };

type Column = { subject: 'upstream' } | { subject: 'ours'; arenaMax?: number };

function figure(r: MemoryResults, c: Column, key: string): number {
  const cap = c.subject === 'ours' ? c.arenaMax : undefined;
  return median(r.records.filter((x) => x.slug === 'memory-map' && x.subject === c.subject && x.arenaMax === cap && x.sample?.[key] !== undefined).map((x) => x.sample![key]));
}


/** The generated "Memory by what holds it" section of docs/BENCHMARKS.md. */
export function renderMemory(r: MemoryResults, plan: MemoryPlan, rawPath: string): string {
  const cols: Column[] = [{ subject: 'upstream' }, { subject: 'ours' }, ...plan.arenas.map((arenaMax) => ({ subject: 'ours' as const, arenaMax }))];
  const label = (c: Column) => (c.subject === 'upstream' ? 'upstream' : c.arenaMax === undefined ? 'ours, glibc\'s default arenas' : `ours, \`MALLOC_ARENA_MAX=${c.arenaMax}\``);
  const reps = Math.max(1, r.records.filter((x) => x.subject === 'upstream' && x.sample).length);
  const cmd = r.mode === 'full' ? '`npm run bench -- --memory`' : `\`npm run bench -- --memory --${r.mode}\``;
  const up = (key: string) => figure(r, { subject: 'upstream' }, key);
  const ours = (key: string, digits = 0) => (c: Column) => (c.subject === 'ours' ? num(figure(r, c, key), digits) : '-');
  const out: string[] = [];
  out.push(`## Memory by what holds it (${cmd}, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`, '');
  out.push(`${plan.size} one-replica Deployments, controllers deployment and replicaset, lifted rate limit, one replica, default flags ` +
    `(so ours caches its default number of runs per controller); per repetition upstream, ours with glibc's default malloc arenas and ours with ` +
    `\`MALLOC_ARENA_MAX\` ${plan.arenas.join(' and ')}, in that order; ${reps} repetition${reps === 1 ? '' : 's'} (medians when more). For each: the fleet is created and settles ` +
    `${plan.settleS} s, then an idle window of ${plan.idleS} s; at its end the manager's resident memory is read from \`/proc/<pid>/smaps\` and split by ` +
    'mapping: glibc malloc (the `[heap]` of its main arena and each thread arena, told by its 64 MiB-aligned reservation), mapped files ' +
    '(code), and every other anonymous mapping (V8\'s heap pages of every thread, thread stacks, allocations mmap\'d on their own). ' +
    `Ratios are to upstream (a Go process: its heap is in the anonymous row). Raw samples: \`${rawPath}\`.`, '');
  const rows: Array<[string, (c: Column) => string]> = [
    ['idle peak RSS, MiB', (c) => withRatio(figure(r, c, 'idle.peakRssMiB'), up('idle.peakRssMiB'), num(figure(r, c, 'idle.peakRssMiB')))],
    ['RSS at the end of the window, MiB', (c) => withRatio(figure(r, c, 'map.totalMiB'), up('map.totalMiB'), num(figure(r, c, 'map.totalMiB')))],
    // upstream is Go, which does not allocate through glibc (its own 64 MiB heap arenas would pass for malloc's)
    ['of it, glibc malloc, MiB', ours('map.mallocMiB')],
    ['glibc thread arenas', ours('map.arenas')],
    ['of it, other anonymous memory, MiB', (c) => num(figure(r, c, 'map.otherAnonMiB') + (c.subject === 'upstream' ? figure(r, c, 'map.mallocMiB') : 0))],
    ['of it, mapped files, MiB', (c) => num(figure(r, c, 'map.fileMiB'))],
    ['main thread\'s V8 heap: used / committed, MiB', (c) => (c.subject === 'ours' ? `${num(figure(r, c, 'heap.mainUsedMiB'))} / ${num(figure(r, c, 'heap.mainTotalMiB'))}` : '-')],
    ['runs in the workflow caches', ours('cachedRuns')],
    ['idle CPU per minute, s (ours: + Temporal server)', (c) => {
      const own = figure(r, c, 'idle.cpuPerMin');
      const t = c.subject === 'ours' ? figure(r, c, 'idle.temporalCpuPerMin') : 0;
      return withRatio(own + t, up('idle.cpuPerMin'), c.subject === 'ours' ? `${num(own, 2)} + ${num(t, 2)}` : num(own, 2));
    }],
  ];
  out.push(`| | ${cols.map(label).join(' | ')} |`, `| --- | ${cols.map(() => '---:').join(' | ')} |`);
  for (const [name, cell] of rows) out.push(`| ${name} | ${cols.map(cell).join(' | ')} |`);
  out.push('');
  const failed = r.records.filter((x) => x.error);
  if (failed.length) out.push('### Runs that failed', '', ...failed.map((x) => `- ${x.subject}${x.arenaMax !== undefined ? ` MALLOC_ARENA_MAX=${x.arenaMax}` : ''}: ${x.error}`), '');
  return out.join('\n');
}
