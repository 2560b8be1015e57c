import * as fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux this runs on. */
const TICKS = 100;

interface ProcStat {
  ppid: number;
  cpuTicks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    // the command name may hold spaces and parentheses: split after the last ')'
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): ppid is field 4, utime/stime fields 14/15
    return { ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
}

function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The pid and all its live descendants. */
export function pidTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push(Number(name));
    children.set(st.ppid, list);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    if (!readStat(p)) continue;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

export interface ProcUse {
  cpuSeconds: number;
  peakRssMiB: number;
}

/**
 * CPU time and peak resident memory of some process trees over a window. CPU is the growth of
 * each process's utime+stime from first to last sight, so a process killed mid-window keeps what
 * it used until its last sample; RSS is the largest sum over the trees at one sampling instant.
 */
export class ProcSampler {
  private first = new Map<number, number>();
  private last = new Map<number, number>();
  private peakKiB = 0;
  private timer?: NodeJS.Timeout;
  private treeCache: number[] = [];
  private ticks = 0;

  constructor(private readonly roots: () => number[], private readonly intervalMs = 250) {}

  start(): this {
    this.sample(true);
    this.timer = setInterval(() => this.sample(this.ticks++ % 8 === 0), this.intervalMs);
    return this;
  }

  private sample(rescan: boolean): void {
    // walking /proc costs CPU of its own; re-find descendants only every few samples
    if (rescan) this.treeCache = this.roots().flatMap((r) => pidTree(r));
    let kib = 0;
    for (const pid of new Set([...this.treeCache, ...this.roots()])) {
      const st = readStat(pid);
      if (!st) continue;
      if (!this.first.has(pid)) this.first.set(pid, st.cpuTicks);
      this.last.set(pid, st.cpuTicks);
      kib += rssKiB(pid);
    }
    this.peakKiB = Math.max(this.peakKiB, kib);
  }

  stop(): ProcUse {
    this.sample(true);
    if (this.timer) clearInterval(this.timer);
    let ticks = 0;
    for (const [pid, end] of this.last) ticks += end - (this.first.get(pid) ?? end);
    return { cpuSeconds: ticks / TICKS, peakRssMiB: this.peakKiB / 1024 };
  }
}
