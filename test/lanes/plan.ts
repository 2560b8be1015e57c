/**
 * How `npm test` hands the end-to-end files to its lanes: pure, so the unit tests pin it down.
 *
 * test/lanes/lanes.json lists the files with each one's measured duration (seconds, as measured
 * with every lane running), longest first. The lanes share that list as one queue: a lane that
 * finishes a file takes the next one, so a file that runs longer than measured delays only its own
 * lane's next pick, never a split fixed in advance. A file on disk the list does not name yet still
 * runs, at DEFAULT_SECONDS, until the next rebalance measures it.
 */

/** One e2e file, by its path from the repo root (`test/e2e/x.test.ts`), and what it took last. */
export interface TimedFile {
  file: string;
  seconds: number;
}

/** test/lanes/lanes.json */
export interface LanePlan {
  /** where and when the durations were measured, for the reader */
  measured: string;
  /** longest first: the order the lanes take them in */
  files: TimedFile[];
}

/** What a file the plan has not measured yet is assumed to take. */
export const DEFAULT_SECONDS = 60;

export function laneSeconds(lane: readonly TimedFile[]): number {
  return lane.reduce((s, f) => s + f.seconds, 0);
}

/** Longest first, equal durations in name order, so the queue is reproducible. */
export function longestFirst(files: readonly TimedFile[]): TimedFile[] {
  return [...files].sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
}

/**
 * What the shared queue gives each lane if every file takes what it was measured at: longest first,
 * each to the lane that is free first (ties: the lower lane). The runner prints it as the expected
 * split; the real one follows the real durations.
 */
export function balance(files: readonly TimedFile[], laneCount: number): TimedFile[][] {
  if (!Number.isInteger(laneCount) || laneCount < 1) throw new Error(`lane count ${laneCount}: want a whole number >= 1`);
  const lanes: TimedFile[][] = Array.from({ length: laneCount }, () => []);
  for (const f of longestFirst(files)) lanes.reduce((best, l) => (laneSeconds(l) < laneSeconds(best) ? l : best)).push(f);
  return lanes;
}

/**
 * The queue to run now: the plan's files still on disk (or only `only`, a subset by path), plus the
 * files it does not name yet at DEFAULT_SECONDS, longest first.
 */
export function queueFor(
  plan: LanePlan,
  onDisk: readonly string[],
  only?: readonly string[],
): { queue: TimedFile[]; unmeasured: string[]; gone: string[] } {
  const present = new Set(onDisk);
  const wanted = new Set(only ?? onDisk);
  const known = new Map(plan.files.map((f) => [f.file, f.seconds] as const));
  const gone = [...known.keys()].filter((f) => !present.has(f)).sort();
  const unmeasured = onDisk.filter((f) => !known.has(f) && wanted.has(f)).sort();
  const queue = longestFirst(onDisk.filter((f) => wanted.has(f)).map((file) => ({ file, seconds: known.get(file) ?? DEFAULT_SECONDS })));
  return { queue, unmeasured, gone };
}

/** Spread of one file's durations over repeated runs, and how often it failed. */
export interface FileSpread {
  file: string;
  runs: number;
  failures: number;
  minSeconds: number;
  medianSeconds: number;
  maxSeconds: number;
}

export interface FileOutcome {
  file: string;
  seconds: number;
  passed: boolean;
}

export function spreadOf(outcomes: readonly FileOutcome[]): FileSpread[] {
  const byFile = new Map<string, FileOutcome[]>();
  for (const o of outcomes) byFile.set(o.file, [...(byFile.get(o.file) ?? []), o]);
  return [...byFile.entries()]
    .map(([file, os]) => {
      const secs = os.map((o) => o.seconds).sort((a, b) => a - b);
      const mid = secs.length >> 1;
      const median = secs.length % 2 ? secs[mid] : (secs[mid - 1] + secs[mid]) / 2;
      return { file, runs: os.length, failures: os.filter((o) => !o.passed).length, minSeconds: secs[0], medianSeconds: median, maxSeconds: secs[secs.length - 1] };
    })
    .sort((a, b) => b.failures - a.failures || b.medianSeconds - a.medianSeconds || a.file.localeCompare(b.file));
}

/** The soak's table, as docs/TESTING.md records it. */
export function spreadTable(spread: readonly FileSpread[]): string {
  const rows = spread.map((s) =>
    `| ${s.file.replace(/^test\/e2e\//, '')} | ${s.failures}/${s.runs} | ${s.minSeconds.toFixed(0)} | ${s.medianSeconds.toFixed(0)} | ${s.maxSeconds.toFixed(0)} | ${(s.maxSeconds - s.minSeconds).toFixed(0)} |`);
  return ['| file | failed | min s | median s | max s | spread s |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}
