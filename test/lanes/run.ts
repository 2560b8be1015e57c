/**
 * `npm test`'s end-to-end half: the e2e files in lanes that run at once, each lane on a local
 * stack of its own (its own data dir, port range and Temporal), each running its files one at a
 * time as jest's --runInBand does. A lane's stack has one manager set at a time, so the files that
 * start upstream kube-controller-manager beside ours stay as safe as they were in one band.
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
import { FileOutcome, LanePlan, TimedFile, balance, laneSeconds, lanesFor, spreadOf, spreadTable } from './plan';

const PLAN_FILE = path.join(repoRoot, 'test', 'lanes', 'lanes.json');
const LANES_DIR = path.join(repoRoot, '.local', 'test-lanes');
const LAST_RUN = path.join(LANES_DIR, 'last-run.json');
const E2E_DIR = path.join(repoRoot, 'test', 'e2e');

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

/** Runs one lane's files in one jest, on the lane's own stack; resolves with each file's outcome. */
async function runLane(lane: number, laneCount: number, files: readonly TimedFile[]): Promise<{ outcomes: FileOutcome[]; crashed?: string }> {
  const dataDir = laneDataDir(lane);
  const logDir = path.join(dataDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const results = path.join(dataDir, 'jest-results.json');
  fs.rmSync(results, { force: true });
  const log = fs.createWriteStream(path.join(logDir, 'jest.log'));
  const child = spawn(process.execPath, [
    require.resolve('jest/bin/jest'), '-c', path.join(repoRoot, 'jest.e2e.config.js'),
    '--runInBand', '--json', '--outputFile', results, '--runTestsByPath', ...files.map((f) => f.file),
  ], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      TEMPORAL_KCM_TEST_DATA_DIR: dataDir,
      TEMPORAL_KCM_PORT_RANGE: laneRange(lane - 1, laneCount),
      TEMPORAL_KCM_TEST_LANE: String(lane),
    },
  });
  running.add(child);
  forwardLines(child, `[lane ${lane}]`, log);
  const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 128 : 1))));
  running.delete(child);
  await new Promise<void>((r) => log.end(() => r()));
  if (!fs.existsSync(results)) {
    return { outcomes: files.map((f) => ({ file: f.file, seconds: 0, passed: false })), crashed: `jest exited ${code} without results` };
  }
  const json = JSON.parse(fs.readFileSync(results, 'utf8')) as JestJson;
  const byFile = new Map(json.testResults.map((r) => [path.relative(repoRoot, r.name), r] as const));
  const outcomes = files.map((f) => {
    const r = byFile.get(f.file);
    const seconds = r ? (r.endTime - r.startTime) / 1000 : 0;
    return { file: f.file, seconds, passed: r?.status === 'passed' };
  });
  return { outcomes, crashed: code !== 0 && outcomes.every((o) => o.passed) ? `jest exited ${code}` : undefined };
}

async function runOnce(lanes: TimedFile[][], round: string): Promise<{ outcomes: (FileOutcome & { lane: number })[]; failed: boolean }> {
  const t0 = Date.now();
  const done = await Promise.all(lanes.map((files, i) => runLane(i + 1, lanes.length, files)));
  const wall = (Date.now() - t0) / 1000;
  const out: string[] = [`\ne2e lanes${round}: ${lanes.length} lanes, ${lanes.flat().length} files, ${wall.toFixed(0)} s wall`];
  let failed = false;
  done.forEach((d, i) => {
    const lane = i + 1;
    const bad = d.outcomes.filter((o) => !o.passed);
    const secs = d.outcomes.reduce((s, o) => s + o.seconds, 0);
    out.push(`  lane ${lane}: ${d.outcomes.length} files, ${secs.toFixed(0)} s in files, ${bad.length} failed; stack ${path.relative(repoRoot, laneDataDir(lane))}`);
    if (d.crashed) out.push(`    ${d.crashed}; see ${path.relative(repoRoot, path.join(laneDataDir(lane), 'logs', 'jest.log'))}`);
    for (const o of bad) {
      out.push(`    FAIL ${o.file} (${o.seconds.toFixed(0)} s): lane ${lane}, stack ${path.relative(repoRoot, laneDataDir(lane))}; ` +
        `its output is above under [lane ${lane}] and in ${path.relative(repoRoot, path.join(laneDataDir(lane), 'logs'))}/ (jest.log, the stack's and the managers' logs)`);
    }
    failed ||= bad.length > 0 || d.crashed !== undefined;
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
    .option('--lanes <n>', 'how many lanes (default: as many as test/lanes/lanes.json has)', positiveInt)
    .option('--repeat <n>', 'run the whole set n times and report each file\'s failures and duration spread', positiveInt, 1)
    .option('--balance', 'rewrite test/lanes/lanes.json from the last run\'s timings (medians); runs no test')
    .argument('[files...]', 'run only these e2e files (paths from the repo root)')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .showHelpAfterError();
  program.parse();
  const opts = program.opts<{ lanes?: number; repeat: number; balance?: boolean }>();
  const only = program.args.map((a) => path.relative(repoRoot, path.resolve(a)));

  const plan = readPlan();
  const laneCount = opts.lanes ?? plan.lanes.length;
  if (opts.balance) {
    if (!fs.existsSync(LAST_RUN)) throw new Error(`no ${path.relative(repoRoot, LAST_RUN)}: run the e2e lanes first`);
    const last = JSON.parse(fs.readFileSync(LAST_RUN, 'utf8')) as LastRun;
    const medians = spreadOf(last.outcomes).map((s) => ({ file: s.file, seconds: Math.round(s.medianSeconds) }));
    const lanes = balance(medians, laneCount);
    const next: LanePlan = {
      measured: `${last.finished.slice(0, 10)}, ${os.cpus().length} cores, ${last.laneCount} lanes at once, median of ${last.repeats} run(s)`,
      lanes,
    };
    fs.writeFileSync(PLAN_FILE, JSON.stringify(next, null, 2) + '\n');
    process.stdout.write(`wrote ${path.relative(repoRoot, PLAN_FILE)}: ${lanes.map((l, i) => `lane ${i + 1} ${laneSeconds(l)} s`).join(', ')}\n`);
    return;
  }

  const onDisk = e2eFilesOnDisk();
  const unknown = only.filter((f) => !onDisk.includes(f));
  if (unknown.length) {
    process.stderr.write(`not e2e files of this suite: ${unknown.join(', ')}\n`);
    process.exit(2);
  }
  const { lanes, unmeasured, gone } = lanesFor(plan, onDisk, laneCount, only.length ? only : undefined);
  if (unmeasured.length) process.stdout.write(`not in test/lanes/lanes.json yet (placed by a guess; \`npm run test:balance\` after a run measures them): ${unmeasured.join(', ')}\n`);
  if (gone.length) process.stdout.write(`in test/lanes/lanes.json but gone from test/e2e: ${gone.join(', ')}\n`);
  lanes.forEach((l, i) => process.stdout.write(`lane ${i + 1}: ${l.length} files, about ${laneSeconds(l)} s (stack ${path.relative(repoRoot, laneDataDir(i + 1))}, ports ${laneRange(i, lanes.length)})\n`));

  const all: LastRun['outcomes'] = [];
  let failed = false;
  for (let r = 1; r <= opts.repeat; r++) {
    const res = await runOnce(lanes.filter((l) => l.length > 0), opts.repeat > 1 ? ` (run ${r} of ${opts.repeat})` : '');
    all.push(...res.outcomes);
    failed ||= res.failed;
  }
  const last: LastRun = { finished: new Date().toISOString(), laneCount: lanes.length, repeats: opts.repeat, outcomes: all };
  fs.mkdirSync(LANES_DIR, { recursive: true });
  fs.writeFileSync(LAST_RUN, JSON.stringify(last, null, 2) + '\n');
  if (opts.repeat > 1) {
    const table = spreadTable(spreadOf(all));
    fs.writeFileSync(path.join(LANES_DIR, 'soak.md'), table + '\n');
    process.stdout.write(`\n${opts.repeat} runs, ${lanes.length} lanes:\n${table}\n(also in ${path.relative(repoRoot, path.join(LANES_DIR, 'soak.md'))})\n`);
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
