import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AuditEvent } from '../../bench/lib/audit';
import { ChaosUsageError, parseChaosArgs } from '../../chaos/args';
import { diffOutcomes, duplicates, exactly, podsDeleted, podsMade, successfulWrites } from '../../chaos/checks';
import { chooseFault, faultResponse, isWatchRequest, proxiedKubeconfig, rewriteBody, rewriteWatchLine, type FaultKind, type ObjectRewrite } from '../../chaos/proxy';
import { sampleDuring } from '../../chaos/suite';
import { passed, renderFaults, renderSeeds, type ChaosResults, type FaultedPass, type ScenarioRecord } from '../../chaos/report';
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
  test('--seeds runs the suite under that many seeds, 1 to 1000', () => {
    expect(parseChaosArgs(['--seeds', '10', '--seed', '42'], known)).toMatchObject({ seeds: 10, seed: 42 });
    expect(() => parseChaosArgs(['--seeds', '0'], known)).toThrow(/1\.\.1000/);
  });

  test('defaults, and each flag', () => {
    expect(parseChaosArgs([], known)).toEqual({ mode: 'full', scenarios: known, faults: ['kills', 'pauses', 'partitions', 'api', 'restarts', 'outage'], faultRate: 0.2, out: 'docs/RELIABILITY.md' });
    expect(parseChaosArgs(['--quick', '--scenarios', 'jobs', '--faults', 'restarts,api', '--fault-rate=0.5', '--kills=3', '--seed', '7', '--out', '/tmp/r.md'], known))
      .toEqual({ mode: 'quick', scenarios: ['jobs'], faults: ['restarts', 'api'], faultRate: 0.5, kills: 3, seed: 7, out: '/tmp/r.md' });
  });
  test('bad input is a usage error naming the problem', () => {
    expect(() => parseChaosArgs(['--scenarios', 'nope'], known)).toThrow(/unknown: nope/);
    expect(() => parseChaosArgs(['--kills', '-1'], known)).toThrow(ChaosUsageError);
    expect(() => parseChaosArgs(['--kills'], known)).toThrow(/needs a value/);
    expect(() => parseChaosArgs(['--fast'], known)).toThrow(/unknown flag --fast/);
    expect(() => parseChaosArgs(['--quick=yes'], known)).toThrow(/no value/);
    expect(() => parseChaosArgs(['--faults', 'kills,floods'], known)).toThrow(/unknown: floods/);
    expect(() => parseChaosArgs(['--fault-rate', '1.5'], known)).toThrow(/0\.\.1, got 1\.5/);
    expect(() => parseChaosArgs(['--fault-rate='], known)).toThrow(/0\.\.1/);
  });
});

describe('the API-fault proxy', () => {
  test('watches are told from other requests', () => {
    expect(isWatchRequest('/api/v1/namespaces/n/pods?watch=true&resourceVersion=5')).toBe(true);
    expect(isWatchRequest('/api/v1/pods?allowWatchBookmarks=true&watch=1')).toBe(true);
    expect(isWatchRequest('/api/v1/watch/namespaces/n/pods')).toBe(true);
    expect(isWatchRequest('/api/v1/namespaces/n/pods?limit=500')).toBe(false);
    expect(isWatchRequest('/api/v1/namespaces/watchers/pods')).toBe(false);
  });

  test('faults come at the planned rate, every kind among them, and a 409 only for an update', () => {
    const plan = { rate: 0.2, watchCutMinMs: 0, watchCutMaxMs: 0 };
    const random = seededRandom(5);
    const tally = (method: string) => {
      const seen = new Map<FaultKind | 'none', number>();
      for (let i = 0; i < 10_000; i++) {
        const f = chooseFault(method, plan, random) ?? 'none';
        seen.set(f, (seen.get(f) ?? 0) + 1);
      }
      return seen;
    };
    const posts = tally('POST');
    expect(posts.get('none')).toBeGreaterThan(7_700);
    expect(posts.get('none')).toBeLessThan(8_300);
    expect(posts.has('conflict')).toBe(false);
    for (const k of ['throttled', 'internal', 'unavailable', 'dropped'] as const) expect(posts.get(k)).toBeGreaterThan(350);
    expect(tally('PUT').get('conflict')).toBeGreaterThan(300);
    expect(chooseFault('GET', { ...plan, rate: 0 }, random)).toBeUndefined();
  });

  test('each refusal is the Status the API server sends, 429 with Retry-After', () => {
    const t = faultResponse('throttled');
    expect(t.status).toBe(429);
    expect(t.headers['retry-after']).toBe('1');
    expect(t.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
    expect(faultResponse('conflict').body).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(faultResponse('unavailable').status).toBe(503);
    expect(faultResponse('internal').body).toMatchObject({ reason: 'InternalError', code: 500 });
  });

  test('a rewrite alters every object of a list, a single object and a watch event\'s, never a Status, a bookmark or an error', () => {
    const seen: string[] = [];
    const poison: ObjectRewrite = (o, path) => {
      const m = o.metadata as { name?: string };
      seen.push(`${path}:${m?.name}`);
      if (m?.name === 'poison') (o.spec as Record<string, unknown>).selector = { matchExpressions: 5 };
    };
    const list = JSON.stringify({ kind: 'ReplicaSetList', metadata: {}, items: [{ metadata: { name: 'ok' }, spec: {} }, { metadata: { name: 'poison' }, spec: {} }] });
    expect(JSON.parse(rewriteBody(list, '/rs', poison)).items.map((i: { spec: unknown }) => i.spec)).toEqual([{}, { selector: { matchExpressions: 5 } }]);
    expect(JSON.parse(rewriteBody(JSON.stringify({ metadata: { name: 'poison' }, spec: {} }), '/rs/poison', poison)).spec).toEqual({ selector: { matchExpressions: 5 } });
    expect(rewriteBody(JSON.stringify({ kind: 'Status', metadata: {} }), '/rs/x', poison)).toBe('{"kind":"Status","metadata":{}}');
    expect(JSON.parse(rewriteWatchLine(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'poison' }, spec: {} } }), '/rs', poison)).object.spec)
      .toEqual({ selector: { matchExpressions: 5 } });
    for (const type of ['BOOKMARK', 'ERROR']) rewriteWatchLine(JSON.stringify({ type, object: { metadata: { name: type } } }), '/rs', poison);
    expect(rewriteWatchLine('', '/rs', poison)).toBe('');
    expect(seen).toEqual(['/rs:ok', '/rs:poison', '/rs/poison:poison', '/rs:poison']);
  });

  test('the managers\' kubeconfig names the proxy and keeps everything else', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-kc-')), 'kc');
    fs.writeFileSync(file, 'clusters:\n  - cluster:\n      server: https://127.0.0.1:6443\n      certificate-authority-data: QUJD\n');
    expect(proxiedKubeconfig(file, 40001)).toBe('clusters:\n  - cluster:\n      server: https://127.0.0.1:40001\n      certificate-authority-data: QUJD\n');
    fs.writeFileSync(file, 'server: https://example.com\n');
    expect(() => proxiedKubeconfig(file, 40001)).toThrow(/names no https:\/\/127\.0\.0\.1 server/);
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

  test('the report: one row per pass, every violation and difference listed, pass only with none', () => {
    const killed: FaultedPass = {
      faults: 'kills', replicas: 3, convergedAfterS: 20.5, stable: true, violations: [], differences: [],
      kills: [{ atMs: 1, victim: 0, pid: 1, replacedAfterMs: 2 }], beforeConverged: 1,
    };
    const api: FaultedPass = {
      faults: 'api', replicas: 1, convergedAfterS: 24.6, stable: true, violations: [], differences: [], beforeConverged: 0,
      api: { requests: 100, faults: { throttled: 5, internal: 4, unavailable: 3, conflict: 2, dropped: 6 }, watchesCut: 7 },
    };
    const restarted: FaultedPass = {
      faults: 'restarts', replicas: 1, convergedAfterS: 30, stable: true, violations: [], differences: [], beforeConverged: 2,
      restarts: [{ parts: ['etcd', 'kube-apiserver'], atMs: 3000, downForMs: 4200 }, { parts: ['temporal'], atMs: 10200, downForMs: 1500 }],
    };
    const paused: FaultedPass = {
      faults: 'pauses', replicas: 3, convergedAfterS: 40, stable: true, violations: [], differences: [], beforeConverged: 1,
      outages: [{ atMs: 6000, victim: 1, outForMs: 21_400 }, { atMs: 40_000, victim: 0, outForMs: 58_600 }],
    };
    const partitioned: FaultedPass = { ...paused, faults: 'partitions', outages: [{ atMs: 6000, victim: 2, outForMs: 30_000 }] };
    const outage: FaultedPass = {
      faults: 'outage', replicas: 1, convergedAfterS: 140, stable: true, violations: [], differences: [], beforeConverged: 1,
      restarts: [{ parts: ['temporal'], atMs: 3000, downForMs: 121_500, controllerWrites: 0 }],
    };
    const ok: ScenarioRecord = { slug: 'rollout', title: 'a 100-pod rollout', upstream: { convergedAfterS: 12.3, stable: true, violations: [] }, ours: [killed, paused, partitioned, api, restarted, outage] };
    const bad: ScenarioRecord = { ...ok, slug: 'jobs', title: '10 Jobs', ours: [killed, { ...api, violations: ['live pods: want exactly 100, got 101'], differences: ['x: upstream 1, ours 2'] }] };
    expect(passed(ok)).toBe(true);
    expect(passed(bad)).toBe(false);
    expect(passed({ ...ok, ours: [killed, { ...restarted, stable: false }] })).toBe(false);
    expect(passed({ ...ok, ours: [{ ...killed, convergedAfterS: undefined }] })).toBe(false);
    const r: ChaosResults = {
      mode: 'quick', seed: 9, storm: { kills: 6, minGapMs: 5000, maxGapMs: 20000, replicas: 3 },
      api: { rate: 0.2, watchCutMinMs: 5000, watchCutMaxMs: 30000, replicas: 1 }, restarts: { gapMs: 3000, replicas: 1 },
      outages: { outages: 2, minGapMs: 5000, maxGapMs: 15000, minOutMs: 20000, maxOutMs: 60000, replicas: 3 },
      startedAt: '2026-11-27T23:40:00Z', finishedAt: '', scenarios: [ok, bad],
    };
    const text = renderFaults(r, 'bench/results/chaos-quick.json');
    expect(text).toContain('## Faults (`npm run chaos -- --quick`, 2026-11-27 23:40 UTC)');
    expect(text).toContain('--seed 9');
    expect(text).toContain('| a 100-pod rollout | kills: 1 x kill -9 of a replica (1 before converged) | 12.3 s | 20.5 s | 1.67x | yes | 0 / 0 | 0 |');
    expect(text).toContain('| a 100-pod rollout | api: 20 of 100 requests refused (429: 5, 500: 4, 503: 3, 409: 2, dropped: 6); 7 watches cut | 12.3 s | 24.6 s | 2.00x | yes | 0 / 0 | 0 |');
    expect(text).toContain('| a 100-pod rollout | restarts: etcd + kube-apiserver (down 4.2 s), then temporal (down 1.5 s), kill -9 (2 before converged) | 12.3 s | 30.0 s | 2.44x | yes | 0 / 0 | 0 |');
    expect(text).toContain('| a 100-pod rollout | pauses: 2 x SIGSTOP of a replica for 21 s, 59 s (1 before converged) | 12.3 s | 40.0 s | 3.25x | yes | 0 / 0 | 0 |');
    expect(text).toContain('| a 100-pod rollout | partitions: 1 x a replica cut from Temporal for 30 s (1 before converged) | 12.3 s | 40.0 s | 3.25x | yes | 0 / 0 | 0 |');
    expect(text).toContain('| a 100-pod rollout | outage: Temporal down 122 s (controller writes meanwhile: 0, converged 15.5 s after it was back) | 12.3 s | 140.0 s | 11.38x | yes | 0 / 0 | 0 |');
    expect(text).toContain('a random one is stopped with SIGSTOP for 20 to 60 s and then continued, 2 times');
    expect(text).toContain('20% of requests get 429');
    expect(text).toContain('- ours (api): live pods: want exactly 100, got 101');
    expect(text).toContain('- differs (api): x: upstream 1, ours 2');
  });

  test('the seeds table: one row per seed, its passes counted, and every failure listed by seed', () => {
    const ok: FaultedPass = { faults: 'kills', replicas: 3, convergedAfterS: 20, stable: true, violations: [], differences: [], beforeConverged: 1 };
    const run = (seed: number, ours: FaultedPass[]): ChaosResults => ({
      mode: 'quick', seed, storm: { kills: 6, minGapMs: 5000, maxGapMs: 20000, replicas: 3 },
      api: { rate: 0.2, watchCutMinMs: 5000, watchCutMaxMs: 30000, replicas: 1 }, restarts: { gapMs: 3000, replicas: 1 },
      outages: { outages: 2, minGapMs: 5000, maxGapMs: 15000, minOutMs: 20000, maxOutMs: 60000, replicas: 3 },
      startedAt: '2026-12-03T10:00:00Z', finishedAt: '',
      scenarios: [{ slug: 'rollout', title: 'a rollout', upstream: { convergedAfterS: 10, stable: true, violations: [] }, ours }],
    });
    const text = renderSeeds([
      run(42, [ok, { ...ok, faults: 'pauses' }]),
      run(43, [{ ...ok, violations: ['live pods: want exactly 100, got 101'] }, { ...ok, faults: 'pauses', convergedAfterS: undefined, stable: false }]),
    ], 'bench/results/chaos-seeds-quick.json');
    expect(text).toContain('## Seeds (`npm run chaos -- --quick --seeds 2`, 2026-12-03 10:00 UTC)');
    expect(text).toContain('(42 to 43): scenarios rollout; faults kills, pauses');
    expect(text).toContain('| 42 | 3 | 3 | - |');
    expect(text).toContain('| 43 | 3 | 1 | rollout (kills), rollout (pauses) |');
    expect(text).toContain('- seed 43, rollout (kills): live pods: want exactly 100, got 101');
    expect(text).toContain('- seed 43, rollout (pauses): never converged');
  });
});

describe('invariants sampled during the change', () => {
  test('each distinct violation once, with the samples that showed it, until stopped', async () => {
    let n = 0;
    const scenario = { during: async () => (++n <= 2 ? ['surge passed'] : n === 3 ? ['other'] : []) } as unknown as Parameters<typeof sampleDuring>[0];
    const stop = new AbortController();
    const sampled = sampleDuring(scenario, {} as Parameters<typeof sampleDuring>[1], stop.signal);
    await new Promise((r) => setTimeout(r, 3_300));
    stop.abort();
    expect(await sampled).toEqual(['during the change: surge passed (in 2 samples)', 'during the change: other']);
  });
});
