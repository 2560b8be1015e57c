import { SETTINGS, killAllStarted } from '../../bench/lib/managers';
import { RunRecord, runOnce } from '../../bench/lib/runner';
import { BenchStack, attachRunningStack } from '../../bench/lib/stack';
import { TemporalHandle, connectTemporal } from '../../bench/lib/temporal';
import { ceiling } from '../../bench/scenarios/ceiling';
import { scaleUp } from '../../bench/scenarios/scale-up';
import { Scenario, Subject } from '../../bench/scenarios/types';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * The benchmark's smallest scale-up (20 pods) against both managers and the plain-client ceiling,
 * on the test stack: the harness runs end to end and its samples are sane. No timing is asserted;
 * a shared CI machine makes absolute times meaningless.
 */
let stack: BenchStack;
let temporal: TemporalHandle;
const lines: string[] = [];

beforeAll(async () => {
  stack = attachRunningStack(TEST_DATA_DIR);
  temporal = await connectTemporal(stack.temporalAddress);
});

afterAll(async () => {
  await killAllStarted();
  await temporal?.close();
});

const run = (s: Scenario, subject: Subject): Promise<RunRecord> =>
  runOnce(stack, temporal.client, s, subject, SETTINGS.default, 'smoke', 0, (l) => lines.push(l));

const positive = (v: number | undefined) => typeof v === 'number' && Number.isFinite(v) && v > 0;

test.each(['upstream', 'ours'] as const)('scenario 1 (scale-up to 20) against %s gives sane samples', async (subject) => {
  const r = await run(scaleUp, subject);
  expect({ error: r.error, log: r.error ? lines.join('\n') : undefined }).toEqual({ error: undefined, log: undefined });
  const s = r.sample!;
  expect(positive(s.podsExistMs)).toBe(true);
  expect(positive(s.readyMs)).toBe(true);
  expect(s.readyMs).toBeGreaterThanOrEqual(s.podsExistMs);
  expect(positive(s.peakRssMiB)).toBe(true);
  expect(s.cpuSeconds).toBeGreaterThanOrEqual(0);
  expect(positive(s.apiRequests)).toBe(true);
  if (subject === 'ours') {
    expect(positive(s.historyEvents)).toBe(true);
    expect(s.temporalCpuSeconds).toBeGreaterThanOrEqual(0);
  } else {
    expect(s.historyEvents).toBeUndefined();
  }
}, 120_000);

test('scenario 7 (a plain client creating 20 pods) gives sane samples', async () => {
  const r = await run(ceiling, 'client');
  expect(r.error).toBeUndefined();
  expect(positive(r.sample!.podsExistMs)).toBe(true);
  expect(r.sample!.readyMs).toBeGreaterThanOrEqual(r.sample!.podsExistMs);
}, 60_000);
