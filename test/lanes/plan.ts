/**
 * How `npm test` splits the end-to-end files into lanes: pure, so the unit tests pin it down.
 *
 * test/lanes/lanes.json holds the split, balanced on each file's measured duration (seconds, as
 * measured with every lane running). A file on disk the list does not name yet still runs: it
 * goes to the lane with the least work, at DEFAULT_SECONDS, until the next rebalance measures it.
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
  lanes: TimedFile[][];
}

/** What a file the plan has not measured yet is assumed to take. */
export const DEFAULT_SECONDS = 60;

export function laneSeconds(lane: readonly TimedFile[]): number {
  return lane.reduce((s, f) => s + f.seconds, 0);
}

/** The lane with the least work (ties: the lower lane). */
function lightest(lanes: readonly TimedFile[][]): TimedFile[] {
  return lanes.reduce((best, l) => (laneSeconds(l) < laneSeconds(best) ? l : best));
}

/**
 * Longest first, each into the lane with the least work so far (ties: the lower lane). Within a
 * lane the longest file runs first, so a lane's tail is its short files.
 */
export function balance(files: readonly TimedFile[], laneCount: number): TimedFile[][] {
  if (!Number.isInteger(laneCount) || laneCount < 1) throw new Error(`lane count ${laneCount}: want a whole number >= 1`);
  const lanes: TimedFile[][] = Array.from({ length: laneCount }, () => []);
  const sorted = [...files].sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
  for (const f of sorted) lightest(lanes).push(f);
  return lanes;
}

/**
 * The lanes to run now: the plan's, less files no longer on disk, plus files it does not name
 * (each to the least loaded lane). With another lane count than the plan's, or `only` (a subset
 * by path), the files are balanced afresh on the plan's durations.
 */
export function lanesFor(
  plan: LanePlan,
  onDisk: readonly string[],
  laneCount: number,
  only?: readonly string[],
): { lanes: TimedFile[][]; unmeasured: string[]; gone: string[] } {
  const present = new Set(onDisk);
  const wanted = only ? new Set(only) : present;
  const known = new Map(plan.lanes.flat().map((f) => [f.file, f.seconds] as const));
  const gone = [...known.keys()].filter((f) => !present.has(f)).sort();
  const unmeasured = onDisk.filter((f) => !known.has(f)).sort();
  if (laneCount !== plan.lanes.length || only) {
    const files = [...wanted].filter((f) => present.has(f)).map((file) => ({ file, seconds: known.get(file) ?? DEFAULT_SECONDS }));
    return { lanes: balance(files, laneCount), unmeasured: unmeasured.filter((f) => wanted.has(f)), gone };
  }
  const lanes = plan.lanes.map((lane) => lane.filter((f) => present.has(f.file)));
  for (const file of unmeasured) lightest(lanes).push({ file, seconds: DEFAULT_SECONDS });
  return { lanes, unmeasured, gone };
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
