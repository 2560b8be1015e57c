import type { AuditEvent } from '../../bench/lib/audit';
import { ChaosUsageError, parseChaosArgs } from '../../chaos/args';
import { diffOutcomes, duplicates, exactly, podsDeleted, podsMade, successfulWrites } from '../../chaos/checks';
import { passed, renderStorms, type ChaosResults, type ScenarioRecord } from '../../chaos/report';
import { planStorm, runStorm, seededRandom, type Replica } from '../../chaos/storm';

describe('the kill storm', () => {
  test('the same seed gives the same storm; gaps and victims stay in range', () => {
    const plan = { kills: 200, minGapMs: 5_000, maxGapMs: 20_000 };
    const a = planStorm(plan, 3, seededRandom(42));
    expect(planStorm(plan, 3, seededRandom(42))).toEqual(a);
    expect(planStorm(plan, 3, seededRandom(43))).not.toEqual(a);
    expect(a).toHaveLength(200);
    for (const k of a) {
      expect(k.gapMs).toBeGreaterThanOrEqual(5_000);
      expect(k.gapMs).toBeLessThanOrEqual(20_000);
      expect([0, 1, 2]).toContain(k.victim);
    }
    // every replica is hit, and the gaps spread over the range
    expect(new Set(a.map((k) => k.victim)).size).toBe(3);
    expect(Math.min(...a.map((k) => k.gapMs))).toBeLessThan(7_000);
    expect(Math.max(...a.map((k) => k.gapMs))).toBeGreaterThan(18_000);
    expect(() => planStorm(plan, 0, seededRandom(1))).toThrow(/at least one replica/);
  });

  test('each kill is SIGKILL of the slot\'s replica, replaced before the next; an abort stops the rest', async () => {
    let next = 100;
    const signals: Array<[number, string | undefined]> = [];
    const replica = (): Replica => { const pid = next++; return { pid, kill: async (s) => { signals.push([pid, s]); } }; };
    const slots = [replica(), replica(), replica()];
    const stop = new AbortController();
    const record = await runStorm(slots, [{ gapMs: 1, victim: 1 }, { gapMs: 1, victim: 1 }, { gapMs: 1, victim: 0 }], async () => replica(), stop.signal, () => undefined);
    expect(signals).toEqual([[101, 'SIGKILL'], [103, 'SIGKILL'], [100, 'SIGKILL']]);
    expect(record.map((k) => [k.victim, k.pid])).toEqual([[1, 101], [1, 103], [0, 100]]);
    expect(slots.map((s) => s.pid)).toEqual([105, 104, 102]);
    stop.abort();
    expect(await runStorm(slots, [{ gapMs: 60_000, victim: 0 }], async () => replica(), stop.signal, () => undefined)).toEqual([]);
  });
});

describe('chaos flags', () => {
  const known = ['rollout', 'jobs'];
  test('defaults, and each flag', () => {
    expect(parseChaosArgs([], known)).toEqual({ mode: 'full', scenarios: known, out: 'docs/RELIABILITY.md' });
    expect(parseChaosArgs(['--quick', '--scenarios', 'jobs', '--kills=3', '--seed', '7', '--out', '/tmp/r.md'], known))
      .toEqual({ mode: 'quick', scenarios: ['jobs'], kills: 3, seed: 7, out: '/tmp/r.md' });
  });
  test('bad input is a usage error naming the problem', () => {
    expect(() => parseChaosArgs(['--scenarios', 'nope'], known)).toThrow(/unknown: nope/);
    expect(() => parseChaosArgs(['--kills', '-1'], known)).toThrow(ChaosUsageError);
    expect(() => parseChaosArgs(['--kills'], known)).toThrow(/needs a value/);
    expect(() => parseChaosArgs(['--fast'], known)).toThrow(/unknown flag --fast/);
    expect(() => parseChaosArgs(['--quick=yes'], known)).toThrow(/no value/);
  });
});

describe('chaos checks', () => {
  test('outcomes differ field by field, arrays by position and length', () => {
    expect(diffOutcomes({ a: 1, b: [1, 2] }, { a: 1, b: [1, 2] })).toEqual([]);
    expect(diffOutcomes({ d: { replicas: 3, c: [{ reason: 'X' }] } }, { d: { replicas: 4, c: [{ reason: 'Y' }, {}] } })).toEqual([
      'd.c length: upstream 1, ours 2',
      'd.c[0].reason: upstream "X", ours "Y"',
      'd.replicas: upstream 3, ours 4',
    ]);
    expect(diffOutcomes({ a: 1 }, {})).toEqual(['a: upstream 1, ours absent']);
  });

  test('successful writes: by a controller, the verb\'s success code, the object not a subresource, in the namespace', () => {
    const ev = (verb: string, code: number, o: Partial<NonNullable<AuditEvent['objectRef']>> = {}, username = 'system:serviceaccount:kube-system:replicaset-controller'): AuditEvent =>
      ({ verb, user: { username }, objectRef: { resource: 'pods', namespace: 'n', name: 'p', ...o }, responseStatus: { code } });
    const events = [ev('create', 201), ev('create', 409), ev('create', 201, { subresource: 'binding' }), ev('create', 201, { namespace: 'm' }),
      ev('delete', 200), ev('delete', 404), ev('create', 201, { resource: 'replicasets' }),
      // kwok's final delete of a terminating pod is not a controller's
      ev('delete', 200, {}, 'kubernetes-admin')];
    expect(successfulWrites(events, { ns: 'n', resource: 'pods', verb: 'create' })).toHaveLength(1);
    expect(successfulWrites(events, { ns: 'n', resource: 'pods', verb: 'delete' })).toHaveLength(1);
    expect(exactly('pods', 2, 2)).toEqual([]);
    expect(exactly('pods', 2, 3)).toEqual(['pods: want exactly 2, got 3']);
    expect(duplicates(['0', '1', '1', '2', '1'])).toEqual([['1', 3]]);
  });

  test('pods made: successful creates and pods the scheduler bound (a create answered 504 may still have made one); deleted: by controllers, once a name', () => {
    const ctl = 'system:serviceaccount:kube-system:job-controller';
    const ev = (verb: string, code: number, name: string | undefined, o: { subresource?: string; user?: string; ns?: string } = {}): AuditEvent =>
      ({ verb, user: { username: o.user ?? ctl }, objectRef: { resource: 'pods', namespace: o.ns ?? 'n', ...(name ? { name } : {}), ...(o.subresource ? { subresource: o.subresource } : {}) }, responseStatus: { code } });
    const events = [
      ev('create', 201, 'a'), ev('create', 201, 'a', { subresource: 'binding', user: 'system:kube-scheduler' }),
      // the store took it, the caller got a timeout: the scheduler's binding shows the pod
      ev('create', 504, undefined), ev('create', 201, 'b', { subresource: 'binding', user: 'system:kube-scheduler' }),
      ev('create', 409, 'c'), ev('create', 201, 'd', { ns: 'other' }),
      ev('delete', 200, 'a'), ev('delete', 200, 'a'), ev('delete', 504, 'b'), ev('delete', 404, 'c'), ev('delete', 200, 'x', { user: 'kubernetes-admin' }),
    ];
    expect([...podsMade(events, 'n')].sort()).toEqual(['a', 'b']);
    expect([...podsDeleted(events, 'n')].sort()).toEqual(['a', 'b']);
  });

  test('the report: one row per scenario, every violation and difference listed, pass only with none', () => {
    const ok: ScenarioRecord = {
      slug: 'rollout', title: 'a 100-pod rollout',
      upstream: { convergedAfterS: 12.3, stable: true, violations: [] },
      ours: { convergedAfterS: 20.5, stable: true, violations: [], kills: [{ atMs: 1, victim: 0, pid: 1, replacedAfterMs: 2 }], killsBeforeConverged: 1 },
      differences: [],
    };
    const bad: ScenarioRecord = { ...ok, slug: 'jobs', title: '10 Jobs', ours: { ...ok.ours, violations: ['live pods: want exactly 100, got 101'] }, differences: ['x: upstream 1, ours 2'] };
    expect(passed(ok)).toBe(true);
    expect(passed(bad)).toBe(false);
    expect(passed({ ...ok, ours: { ...ok.ours, stable: false } })).toBe(false);
    const r: ChaosResults = { mode: 'quick', seed: 9, storm: { kills: 6, minGapMs: 5000, maxGapMs: 20000, replicas: 3 }, startedAt: '2026-11-27T23:40:00Z', finishedAt: '', scenarios: [ok, bad] };
    const text = renderStorms(r, 'bench/results/chaos-quick.json');
    expect(text).toContain('## Kill storms (`npm run chaos -- --quick`, 2026-11-27 23:40 UTC)');
    expect(text).toContain('--seed 9');
    expect(text).toContain('| a 100-pod rollout | 1 x kill -9 of a replica | 12.3 s | 20.5 s | 1 | yes | 0 / 0 | 0 |');
    expect(text).toContain('- ours: live pods: want exactly 100, got 101');
    expect(text).toContain('- differs: x: upstream 1, ours 2');
  });
});
