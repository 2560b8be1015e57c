import * as fs from 'node:fs';
import * as path from 'node:path';
import { laneRange, pickRange } from '../../starter/local/ports';
import { DEFAULT_SECONDS, LanePlan, balance, laneSeconds, lanesFor, spreadOf, spreadTable } from '../lanes/plan';

const f = (file: string, seconds: number) => ({ file: `test/e2e/${file}.test.ts`, seconds });

describe('balance', () => {
  test('longest first, each into the least loaded lane; every file exactly once', () => {
    const files = [f('a', 10), f('b', 130), f('c', 90), f('d', 60), f('e', 40), f('f', 30)];
    const lanes = balance(files, 2);
    expect(lanes.map((l) => l.map((x) => x.seconds))).toEqual([[130, 40, 10], [90, 60, 30]]);
    expect(lanes.map(laneSeconds)).toEqual([180, 180]);
    expect(lanes.flat().map((x) => x.file).sort()).toEqual(files.map((x) => x.file).sort());
  });

  test('ties go to the lower lane, equal durations in name order, so a plan is reproducible', () => {
    expect(balance([f('b', 5), f('a', 5), f('c', 5)], 2).map((l) => l.map((x) => x.file))).toEqual([
      ['test/e2e/a.test.ts', 'test/e2e/c.test.ts'],
      ['test/e2e/b.test.ts'],
    ]);
  });

  test('a lane count that is not a whole number >= 1 is refused', () => {
    expect(() => balance([], 0)).toThrow(/lane count 0/);
    expect(() => balance([], 1.5)).toThrow(/lane count 1.5/);
  });
});

describe('lanesFor', () => {
  const plan: LanePlan = { measured: 'x', lanes: [[f('a', 100), f('b', 10)], [f('c', 80), f('old', 20)]] };
  const onDisk = ['a', 'b', 'c', 'new'].map((n) => `test/e2e/${n}.test.ts`);

  test('runs the plan as written, drops files gone from disk, and puts a new file in the least loaded lane', () => {
    const r = lanesFor(plan, onDisk, 2);
    expect(r.gone).toEqual(['test/e2e/old.test.ts']);
    expect(r.unmeasured).toEqual(['test/e2e/new.test.ts']);
    expect(r.lanes).toEqual([[f('a', 100), f('b', 10)], [f('c', 80), f('new', DEFAULT_SECONDS)]]);
  });

  test('no file on disk is ever left out of a full run', () => {
    const r = lanesFor({ measured: 'x', lanes: [[], []] }, onDisk, 2);
    expect(r.lanes.flat().map((x) => x.file).sort()).toEqual([...onDisk].sort());
  });

  test('another lane count, or a subset, is balanced afresh on the measured durations', () => {
    expect(lanesFor(plan, onDisk, 3).lanes.map((l) => l.map((x) => x.seconds))).toEqual([[100], [80], [DEFAULT_SECONDS, 10]]);
    const sub = lanesFor(plan, onDisk, 2, ['test/e2e/b.test.ts', 'test/e2e/c.test.ts']);
    expect(sub.lanes).toEqual([[f('c', 80)], [f('b', 10)]]);
  });
});

describe('the repo plan', () => {
  test('names every e2e file on disk exactly once (rebalance after adding or removing one)', () => {
    const root = path.join(__dirname, '..', '..');
    const plan = JSON.parse(fs.readFileSync(path.join(root, 'test', 'lanes', 'lanes.json'), 'utf8')) as LanePlan;
    const listed = plan.lanes.flat().map((x) => x.file);
    const onDisk = fs.readdirSync(path.join(root, 'test', 'e2e')).filter((n) => n.endsWith('.test.ts')).map((n) => `test/e2e/${n}`);
    expect([...listed].sort()).toEqual([...new Set(listed)].sort());
    expect([...listed].sort()).toEqual(onDisk.sort());
    // balanced: no lane holds more than the longest file's worth beyond another
    const secs = plan.lanes.map(laneSeconds);
    const longest = Math.max(...plan.lanes.flat().map((x) => x.seconds));
    expect(Math.max(...secs) - Math.min(...secs)).toBeLessThanOrEqual(longest);
  });
});

describe('spreadOf', () => {
  test('failures first, then the slowest median; min, median and max per file', () => {
    const s = spreadOf([
      { file: 'test/e2e/a.test.ts', seconds: 10, passed: true },
      { file: 'test/e2e/a.test.ts', seconds: 30, passed: true },
      { file: 'test/e2e/b.test.ts', seconds: 5, passed: true },
      { file: 'test/e2e/b.test.ts', seconds: 7, passed: false },
      { file: 'test/e2e/b.test.ts', seconds: 6, passed: true },
    ]);
    expect(s).toEqual([
      { file: 'test/e2e/b.test.ts', runs: 3, failures: 1, minSeconds: 5, medianSeconds: 6, maxSeconds: 7 },
      { file: 'test/e2e/a.test.ts', runs: 2, failures: 0, minSeconds: 10, medianSeconds: 20, maxSeconds: 30 },
    ]);
    expect(spreadTable(s).split('\n')[2]).toBe('| b.test.ts | 1/3 | 5 | 6 | 7 | 2 |');
  });
});

describe('port ranges of stacks side by side', () => {
  test('lanes get disjoint ranges that TEMPORAL_KCM_PORT_RANGE accepts', () => {
    const ranges = [0, 1, 2].map((i) => pickRange({ TEMPORAL_KCM_PORT_RANGE: laneRange(i, 3) }));
    for (let i = 1; i < ranges.length; i++) expect(ranges[i].low).toBe(ranges[i - 1].high + 1);
    expect(ranges[0].low).toBe(pickRange({}).low);
    expect(ranges[2].high).toBeLessThanOrEqual(pickRange({}).high);
  });

  test('a malformed or tiny range is an error that names the variable', () => {
    for (const bad of ['x', '20000', '20000-20010', '80-2000', '30000-70000']) {
      expect(() => pickRange({ TEMPORAL_KCM_PORT_RANGE: bad })).toThrow(/TEMPORAL_KCM_PORT_RANGE/);
    }
  });
});
