import * as fs from 'node:fs';

/** One mapping of /proc/<pid>/smaps: its range, permissions, path (empty for anonymous memory) and resident KiB. */
export interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  rssKiB: number;
}

/** Resident memory of a process by what holds it, in KiB (`arenas` is a count). */
export interface MemoryMap {
  totalKiB: number;
  /** glibc malloc's main arena, the `[heap]` mapping */
  mallocMainKiB: number;
  /** glibc malloc's thread arenas (see isThreadArena) */
  mallocArenasKiB: number;
  arenas: number;
  /** mapped files: code of node, its libraries and the SDK core's native module */
  fileKiB: number;
  /** the main thread's stack */
  stackKiB: number;
  /** every other anonymous mapping: V8's heap pages, thread stacks, large mallocs (mmap'd alone) */
  otherAnonKiB: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/;

export function parseSmaps(text: string): Mapping[] {
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      cur = { start: BigInt(`0x${h[1]}`), end: BigInt(`0x${h[2]}`), perms: h[3], path: h[4].trim(), rssKiB: 0 };
      out.push(cur);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && cur) cur.rssKiB = Number(rss[1]);
  }
  return out;
}

/**
 * glibc reserves each thread arena as one region of HEAP_MAX_SIZE (64 MiB on 64-bit), aligned to it,
 * and makes it writable from the start as it grows: a writable anonymous mapping at a 64 MiB
 * boundary, followed by the reservation's inaccessible rest up to the next boundary (or filling it
 * whole). The layout is glibc's (malloc/arena.c), not a documented interface, hence the check of
 * both halves rather than the alignment alone.
 */
const ARENA = 64n << 20n;
function isThreadArena(m: Mapping, next: Mapping | undefined): boolean {
  if (m.path !== '' || !m.perms.startsWith('rw') || m.start % ARENA !== 0n) return false;
  if (m.end - m.start === ARENA) return true;
  return next !== undefined && next.path === '' && next.perms.startsWith('---') && next.start === m.end && next.end === m.start + ARENA;
}

export function classify(maps: Mapping[]): MemoryMap {
  const r: MemoryMap = { totalKiB: 0, mallocMainKiB: 0, mallocArenasKiB: 0, arenas: 0, fileKiB: 0, stackKiB: 0, otherAnonKiB: 0 };
  maps.forEach((m, i) => {
    r.totalKiB += m.rssKiB;
    if (m.path === '[heap]') r.mallocMainKiB += m.rssKiB;
    else if (m.path === '[stack]') r.stackKiB += m.rssKiB;
    else if (m.path.startsWith('/')) r.fileKiB += m.rssKiB;
    else if (isThreadArena(m, maps[i + 1])) {
      r.mallocArenasKiB += m.rssKiB;
      r.arenas++;
    } else r.otherAnonKiB += m.rssKiB;
  });
  return r;
}

/** The memory map of a live process (Linux). */
export function memoryMap(pid: number): MemoryMap {
  return classify(parseSmaps(fs.readFileSync(`/proc/${pid}/smaps`, 'utf8')));
}
