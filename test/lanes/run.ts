/**
 * `npm test`'s end-to-end half: the e2e files in lanes that run at once, each lane on a local
 * stack of its own (its own data dir, port range and Temporal). The lanes share one queue of the
 * files, longest first (test/lanes/lanes.json): a lane runs one file at a time, each in a jest of
 * its own, and takes the next when it is done, so neither lane idles while the other has a backlog
 * because a file ran longer than measured. A lane's stack has one manager set at a time, so the
 * files that start upstream kube-controller-manager beside ours stay as safe as they were in one band.
 *
 *   node dist/test/lanes/run.js [--lanes N] [--repeat N] [FILE...]   run (FILE: a subset, by path)
 *   node dist/test/lanes/run.js --balance                            rewrite test/lanes/lanes.json
 *                                                                    from the last run's timings
 *
 * Every line a lane prints is prefixed with its name; its full output is kept in
 * <stack>/logs/jest.log beside the stack's and the managers' logs. The summary names each failed
 * file's lane and stack. `--repeat N` runs the whole set N times and prints each file's failures
 * and duration spread (the table docs/TESTING.md records).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { repoRoot } from '../../starter/local/paths';
import { laneRange } from '../../starter/local/ports';
import { down, status } from '../../starter/local/stack';
import { startedMarkerOf } from '../support/stack';
import { DEFAULT_SECONDS, FileOutcome, LanePlan, TimedFile, balance, laneSeconds, longestFirst, queueFor, spreadOf, spreadTable } from './plan';

const PLAN_FILE = path.join(repoRoot, 'test', 'lanes', 'lanes.json');
const LANES_DIR = path.join(repoRoot, '.local', 'test-lanes');
const LAST_RUN = path.join(LANES_DIR, 'last-run.json');
const E2E_DIR = path.join(repoRoot, 'test', 'e2e');
/** two cores: a third lane's stack and managers would only slow the other two (docs/TESTING.md) */
const DEFAULT_LANES = 2;

/** What one invocation measured, kept for `--balance`. */
interface LastRun {
  finished: string;
  laneCount: number;
  repeats: number;
  outcomes: (FileOutcome & { lane: number })[];
}

/** The slice of jest's --json output read here. */
interface JestJson {
  testResults: { name: string; status: string; startTime: number; endTime: number }[];
}

function e2eFilesOnDisk(): string[] {
  // test/e2e/postgres/ is `npm run test:postgres`'s (jest.postgres.config.js)
  return fs.readdirSync(E2E_DIR).filter((f) => f.endsWith('.test.ts')).map((f) => `test/e2e/${f}`).sort();
}

function readPlan(): LanePlan {
  return JSON.parse(fs.readFileSync(PLAN_FILE, 'utf8')) as LanePlan;
}

function laneDataDir(lane: number): string {
  return path.join(LANES_DIR, `lane-${lane}`);
}

/** Forwards a child's output line by line, each prefixed with the lane's name, and tees it to its log. */
function forwardLines(child: ChildProcess, prefix: string, log: fs.WriteStream): void {
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      log.write(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) process.stdout.write(`${prefix} ${l}\n`);
    });
    stream?.on('end', () => {
      if (partial) process.stdout.write(`${prefix} ${partial}\n`);
    });
  }
}

const running = new Set<ChildProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    for (const c of running) c.kill(sig);
    process.exit(130);
  });
}

/** Runs one file in a jest of its own on the lane's stack; resolves with its outcome. */
async function runFile(lane: number, laneCount: number, file: TimedFile, log: fs.WriteStream): Promise<FileOutcome & { crashed?: string }> {
  const dataDir = laneDataDir(lane);
  const results = path.join(dataDir, 'jest-results.json');
  fs.rmSync(results, { force: true });
  const child = spawn(process.execPath, [
    require.resolve('jest/bin/jest'), '-c', path.join(repoRoot, 'jest.e2e.config.js'),
    '--runInBand', '--json', '--outputFile', results, '--runTestsByPath', file.file,
  ], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      TEMPORAL_KCM_TEST_DATA_DIR: dataDir,
      TEMPORAL_KCM_PORT_RANGE: laneRange(lane - 1, laneCount),
      TEMPORAL_KCM_TEST_LANE: String(lane),
      // the lane's stack outlives each file's jest; the runner stops it after the lane's last file
      TEMPORAL_KCM_KEEP_STACK: '1',
    },
  });
  running.add(child);
  forwardLines(child, `[lane ${lane}]`, log);
  const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 128 : 1))));
  running.delete(child);
  if (!fs.existsSync(results)) return { file: file.file, seconds: 0, passed: false, crashed: `jest exited ${code} without results` };
  const json = JSON.parse(fs.readFileSync(results, 'utf8')) as JestJson;
  const r = json.testResults.find((t) => path.relative(repoRoot, t.name) === file.file);
  const passed = r?.status === 'passed';
  return { file: file.file, seconds: r ? (r.endTime - r.startTime) / 1000 : 0, passed, crashed: code !== 0 && passed ? `jest exited ${code}` : undefined };
}

/**
 * One lane: takes the queue's next file whenever its last one is done, until the queue is empty,
 * each on the lane's own stack (started by the first file's global setup, kept between files).
 */
async function runLane(lane: number, laneCount: number, queue: TimedFile[]): Promise<{ outcomes: FileOutcome[]; crashed: string[] }> {
  const logDir = path.join(laneDataDir(lane), 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const log = fs.createWriteStream(path.join(logDir, 'jest.log'));
  const outcomes: FileOutcome[] = [];
  const crashed: string[] = [];
  // one thread runs every lane's callbacks, so a shift never hands one file to two lanes
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { crashed: why, ...outcome } = await runFile(lane, laneCount, next, log);
    outcomes.push(outcome);
    if (why) crashed.push(`${next.file}: ${why}`);
  }
  await new Promise<void>((r) => log.end(() => r()));
  return { outcomes, crashed };
}

/** The lanes whose stacks were not up before this run: the run stops them when it ends. */
async function lanesNotUp(laneCount: number): Promise<number[]> {
  const lanes = Array.from({ length: laneCount }, (_, i) => i + 1);
  const up = await Promise.all(lanes.map(async (l) => (await status(laneDataDir(l))).parts.every((p) => p.healthy)));
  return lanes.filter((_, i) => !up[i]);
}

async function runOnce(queue: readonly TimedFile[], laneCount: number, round: string): Promise<{ outcomes: (FileOutcome & { lane: number })[]; failed: boolean }> {
  const t0 = Date.now();
  const started = await lanesNotUp(laneCount);
  const left = [...queue];
  const done = await Promise.all(Array.from({ length: laneCount }, (_, i) => runLane(i + 1, laneCount, left)));
  const wall = (Date.now() - t0) / 1000;
  if (process.env.TEMPORAL_KCM_KEEP_STACK !== '1') {
    await Promise.all(started.map(async (lane) => {
      await down(laneDataDir(lane), { log: (l) => process.stdout.write(`[lane ${lane}] [local stack] ${l}\n`) });
      fs.rmSync(startedMarkerOf(laneDataDir(lane)), { force: true });
    }));
  }
  const out: string[] = [`\ne2e lanes${round}: ${laneCount} lanes, ${queue.length} files, ${wall.toFixed(0)} s wall`];
  let failed = false;
  done.forEach((d, i) => {
    const lane = i + 1;
    const bad = d.outcomes.filter((o) => !o.passed);
    const secs = d.outcomes.reduce((s, o) => s + o.seconds, 0);
    out.push(`  lane ${lane}: ${d.outcomes.length} files, ${secs.toFixed(0)} s in files, ${bad.length} failed; stack ${path.relative(repoRoot, laneDataDir(lane))}`);
    for (const c of d.crashed) out.push(`    ${c}; see ${path.relative(repoRoot, path.join(laneDataDir(lane), 'logs', 'jest.log'))}`);
    for (const o of bad) {
      out.push(`    FAIL ${o.file} (${o.seconds.toFixed(0)} s): lane ${lane}, stack ${path.relative(repoRoot, laneDataDir(lane))}; ` +
        `its output is above under [lane ${lane}] and in ${path.relative(repoRoot, path.join(laneDataDir(lane), 'logs'))}/ (jest.log, the stack's and the managers' logs)`);
    }
    failed ||= bad.length > 0 || d.crashed.length > 0;
  });
  process.stdout.write(out.join('\n') + '\n');
  return { outcomes: done.flatMap((d, i) => d.outcomes.map((o) => ({ ...o, lane: i + 1 }))), failed };
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('want a whole number >= 1');
  return n;
}

async function main(): Promise<void> {
  const program = new Command('test/lanes/run')
    .description('run the end-to-end files in lanes, each on a local stack of its own')
    .option('--lanes <n>', `how many lanes (default ${DEFAULT_LANES})`, positiveInt, DEFAULT_LANES)
    .option('--repeat <n>', 'run the whole set n times and report each file\'s failures and duration spread', positiveInt, 1)
    .option('--balance', 'rewrite test/lanes/lanes.json from the last run\'s timings (medians); runs no test')
    .argument('[files...]', 'run only these e2e files (paths from the repo root)')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .showHelpAfterError();
  program.parse();
  const opts = program.opts<{ lanes: number; repeat: number; balance?: boolean }>();
  const only = program.args.map((a) => path.relative(repoRoot, path.resolve(a)));

  const plan = readPlan();
  const laneCount = opts.lanes;
  if (opts.balance) {
    if (!fs.existsSync(LAST_RUN)) throw new Error(`no ${path.relative(repoRoot, LAST_RUN)}: run the e2e lanes first`);
    const last = JSON.parse(fs.readFileSync(LAST_RUN, 'utf8')) as LastRun;
    const medians = spreadOf(last.outcomes).map((s) => ({ file: s.file, seconds: Math.round(s.medianSeconds) }));
    const next: LanePlan = {
      measured: `${last.finished.slice(0, 10)}, ${os.cpus().length} cores, ${last.laneCount} lanes at once, median of ${last.repeats} run(s)`,
      files: longestFirst(medians),
    };
    fs.writeFileSync(PLAN_FILE, JSON.stringify(next, null, 2) + '\n');
    const expected = balance(next.files, laneCount);
    process.stdout.write(`wrote ${path.relative(repoRoot, PLAN_FILE)}: ${next.files.length} files; expected ${expected.map((l, i) => `lane ${i + 1} ${laneSeconds(l)} s`).join(', ')}\n`);
    return;
  }

  const onDisk = e2eFilesOnDisk();
  const unknown = only.filter((f) => !onDisk.includes(f));
  if (unknown.length) {
    process.stderr.write(`not e2e files of this suite: ${unknown.join(', ')}\n`);
    process.exit(2);
  }
  const { queue, unmeasured, gone } = queueFor(plan, onDisk, only.length ? only : undefined);
  if (unmeasured.length) process.stdout.write(`not in test/lanes/lanes.json yet (queued at a guessed ${DEFAULT_SECONDS} s; \`npm run test:balance\` after a run measures them): ${unmeasured.join(', ')}\n`);
  if (gone.length) process.stdout.write(`in test/lanes/lanes.json but gone from test/e2e: ${gone.join(', ')}\n`);
  const lanes = Math.min(laneCount, queue.length);
  process.stdout.write(`${queue.length} files, longest first, taken by ${lanes} lanes as each is free; as measured that is ` +
    `${balance(queue, lanes).map((l, i) => `lane ${i + 1} about ${laneSeconds(l)} s`).join(', ')}\n`);
  for (let i = 0; i < lanes; i++) process.stdout.write(`lane ${i + 1}: stack ${path.relative(repoRoot, laneDataDir(i + 1))}, ports ${laneRange(i, lanes)}\n`);

  const all: LastRun['outcomes'] = [];
  let failed = false;
  for (let r = 1; r <= opts.repeat; r++) {
    const res = await runOnce(queue, lanes, opts.repeat > 1 ? ` (run ${r} of ${opts.repeat})` : '');
    all.push(...res.outcomes);
    failed ||= res.failed;
  }
  const last: LastRun = { finished: new Date().toISOString(), laneCount: lanes, repeats: opts.repeat, outcomes: all };
  fs.mkdirSync(LANES_DIR, { recursive: true });
  fs.writeFileSync(LAST_RUN, JSON.stringify(last, null, 2) + '\n');
  if (opts.repeat > 1) {
    const table = spreadTable(spreadOf(all));
    fs.writeFileSync(path.join(LANES_DIR, 'soak.md'), table + '\n');
    process.stdout.write(`\n${opts.repeat} runs, ${lanes} lanes:\n${table}\n(also in ${path.relative(repoRoot, path.join(LANES_DIR, 'soak.md'))})\n`);
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
