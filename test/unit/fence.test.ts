import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { AttemptLease, ContactClock, WORKFLOW_TASK_TIMEOUT_MS, attemptKey, runningAttempt, type AttemptInfo } from '../../activities/kube/fence';
import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { plainHttpAccess } from '../support/plain-http-access';

const T0 = 1_000_000;
const info = (o: Partial<AttemptInfo> = {}): AttemptInfo => ({
  workflowId: 'replicaset/ns/web', runId: 'run-1', activityId: '7', attempt: 1, isLocal: true,
  startToCloseTimeoutMs: 60_000, scheduledAtMs: T0, ...o,
});

describe('ContactClock', () => {
  test('records a silence when it ends, and reports the longest one since a moment, the present one included', () => {
    const c = new ContactClock(T0);
    c.heard(T0 + 500);
    c.heard(T0 + 1_000);
    // silences under 2 s are the space between probes: not kept, only the present one counts
    expect(c.longestSilenceSince(T0, T0 + 1_200)).toBe(200);
    c.heard(T0 + 21_000); // a 20 s pause, seen when the first answer after it comes
    expect(c.longestSilenceSince(T0, T0 + 21_100)).toBe(20_000);
    // only the part of a silence after `since` counts
    expect(c.longestSilenceSince(T0 + 15_000, T0 + 21_100)).toBe(6_000);
    expect(c.longestSilenceSince(T0 + 21_000, T0 + 21_100)).toBe(100);
    // the silence going on now
    expect(c.longestSilenceSince(T0 + 21_000, T0 + 30_000)).toBe(9_000);
    expect(c.lastHeard()).toBe(T0 + 21_000);
  });

  test('an answer older than the last one changes nothing', () => {
    const c = new ContactClock(T0);
    c.heard(T0 + 5_000);
    c.heard(T0 + 1_000);
    expect(c.lastHeard()).toBe(T0 + 5_000);
  });
});

describe('AttemptLease', () => {
  test('a local attempt holds while Temporal answers, and loses its lease for good after a silence past 30% of the workflow task timeout', () => {
    const c = new ContactClock(T0);
    const lease = new AttemptLease(info(), c, undefined, T0);
    for (let t = 500; t <= 20_000; t += 500) {
      c.heard(T0 + t);
      expect(lease.check(T0 + t + 100)).toBeUndefined();
    }
    // paused for 20 s: on waking the write is refused before any answer comes ...
    expect(lease.check(T0 + 40_000)).toMatch(/Temporal unheard for 20000 ms \(this attempt allows 3000 ms\)/);
    // ... and after one, too: the lease does not come back
    c.heard(T0 + 40_010);
    expect(lease.check(T0 + 40_020)).toMatch(/unheard/);
    expect(WORKFLOW_TASK_TIMEOUT_MS * 0.3).toBe(3_000);
  });

  test('a pause seen only as a healed gap still loses the lease (the probe answered first on waking)', () => {
    const c = new ContactClock(T0);
    const lease = new AttemptLease(info(), c, undefined, T0);
    c.heard(T0 + 25_000);
    expect(lease.check(T0 + 25_001)).toMatch(/unheard for 25000 ms/);
  });

  test('a local retry gets no fresh start: its proof is the first schedule, in a workflow task then surely ours', () => {
    const c = new ContactClock(T0);
    const retry = new AttemptLease(info({ attempt: 3, scheduledAtMs: T0 }), c, undefined, T0 + 4_000);
    expect(retry.check(T0 + 4_000)).toMatch(/unheard for 4000 ms/);
  });

  test('a local attempt started while Temporal is asked often is vouched for by the last answer before it, not its schedule', () => {
    const c = new ContactClock(T0);
    c.attemptStarted();
    c.heard(T0 + 500);
    c.attemptEnded(T0 + 600);
    // cut off at 0.5 s: the same workflow task's next local activity is scheduled at 2 s
    expect(c.probingOften(T0 + 2_000)).toBe(true);
    const next = new AttemptLease(info({ scheduledAtMs: T0 + 2_000 }), c, undefined, T0 + 2_000);
    expect(next.check(T0 + 3_000)).toBeUndefined();
    expect(next.check(T0 + 3_600)).toMatch(/unheard for 3100 ms/);
    // after 10 s without attempts the probe slows down: an old answer then means not asking
    expect(c.probingOften(T0 + 10_601)).toBe(false);
    const afterIdle = new AttemptLease(info({ scheduledAtMs: T0 + 20_000 }), c, undefined, T0 + 20_000);
    expect(afterIdle.check(T0 + 20_100)).toBeUndefined();
  });

  test('a regular attempt is vouched for by its start; its heartbeat must keep coming within 60% of the timeout', () => {
    const c = new ContactClock(T0);
    const lease = new AttemptLease(info({ isLocal: false, heartbeatTimeoutMs: 5_000, scheduledAtMs: T0 - 60_000 }), c, undefined, T0 + 10_000);
    c.heard(T0 + 10_000);
    for (let t = 11_000; t <= 20_000; t += 1_000) {
      c.heard(T0 + t);
      lease.beat(T0 + t);
      expect(lease.check(T0 + t)).toBeUndefined();
    }
    c.heard(T0 + 23_000); // Temporal answers, but the activity stopped beating
    expect(lease.check(T0 + 23_100)).toMatch(/no heartbeat for 3100 ms \(heartbeat timeout 5000 ms\)/);
    // a beat after the server gave up revives nothing
    lease.beat(T0 + 23_200);
    expect(lease.check(T0 + 23_300)).toMatch(/no heartbeat/);
  });

  test('a regular attempt with a heartbeat timeout loses its lease when Temporal goes unheard, though it beats', () => {
    const c = new ContactClock(T0);
    const lease = new AttemptLease(info({ isLocal: false, heartbeatTimeoutMs: 10_000 }), c, undefined, T0);
    for (let t = 1_000; t <= 6_000; t += 1_000) lease.beat(T0 + t);
    expect(lease.check(T0 + 6_500)).toMatch(/Temporal unheard for 6500 ms \(this attempt allows 6000 ms\)/);
  });

  test('a regular attempt without a heartbeat timeout is the server\'s until its limit, heard or not', () => {
    const c = new ContactClock(T0);
    const lease = new AttemptLease(info({ isLocal: false, startToCloseTimeoutMs: 60_000 }), c, undefined, T0);
    expect(lease.check(T0 + 50_000)).toBeUndefined();
    expect(lease.check(T0 + 54_001)).toMatch(/ran 54001 ms of its 60000 ms limit/);
  });

  test('a cancelled attempt writes no more', () => {
    const ac = new AbortController();
    const lease = new AttemptLease(info({ isLocal: false }), new ContactClock(T0), ac.signal, T0);
    expect(lease.check(T0 + 1)).toBeUndefined();
    ac.abort();
    expect(lease.check(T0 + 2)).toBe('the attempt was cancelled');
  });

  test('its failure is a Fenced ApplicationFailure, final for a local attempt (a retry would run in the same worker), retryable for a regular one', () => {
    const local = new AttemptLease(info(), new ContactClock(T0), undefined, T0);
    local.check(T0 + 10_000);
    const f = local.failure('POST /api/v1/namespaces/ns/pods');
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type: 'Fenced', nonRetryable: true });
    expect(f.message).toMatch(/^POST \/api\/v1\/namespaces\/ns\/pods refused: Temporal unheard/);
    expect(new AttemptLease(info({ isLocal: false }), new ContactClock(T0), undefined, T0).failure().nonRetryable).toBe(false);
  });

  test('its key names the run and activity alike on every replica and attempt', () => {
    const a = new AttemptLease(info({ attempt: 1 }), new ContactClock(T0), undefined, T0);
    const b = new AttemptLease(info({ attempt: 4 }), new ContactClock(T0), undefined, T0 + 9);
    expect(a.key).toBe(b.key);
    expect(a.key).toBe(attemptKey('replicaset/ns/web', 'run-1', '7'));
    expect(a.key).not.toBe(attemptKey('replicaset/ns/web', 'run-1', '8'));
    expect(a.userAgentComment('host-42')).toBe(`(attempt ${a.key} 1 host-42)`);
  });
});

describe('KubeRest inside an attempt', () => {
  let server: http.Server;
  let seen: Array<{ method: string; ua: string }> = [];
  let rest: KubeRest;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ method: req.method ?? '', ua: req.headers['user-agent'] ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    rest = new KubeRest(plainHttpAccess(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), new TokenBucket(0, 0), undefined, undefined, undefined, 'temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/x');
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => { seen = []; });

  test('names the attempt in its User-Agent, and a write of a lost attempt never leaves while reads still do', async () => {
    const clock = new ContactClock();
    const lease = new AttemptLease(info({ scheduledAtMs: Date.now() }), clock, undefined);
    await runningAttempt.run({ lease, replica: 'host-1' }, async () => {
      await rest.request('POST', '/api/v1/namespaces/ns/pods', { body: {} });
      expect(seen).toEqual([{ method: 'POST', ua: `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/x (attempt ${lease.key} 1 host-1)` }]);
      // Temporal unheard past the lease: the same client refuses the write before sending it
      jest.spyOn(Date, 'now').mockReturnValue(clock.lastHeard() + 3_500);
      try {
        await expect(rest.request('DELETE', '/api/v1/namespaces/ns/pods/a')).rejects.toMatchObject({ type: 'Fenced' });
        await expect(rest.request('GET', '/api/v1/namespaces/ns/pods')).resolves.toMatchObject({ status: 200 });
      } finally {
        jest.restoreAllMocks();
      }
    });
    expect(seen.map((s) => s.method)).toEqual(['POST', 'GET']);
    expect(lease.refusedWrites).toBe(1);
  });

  test('outside an attempt nothing changes: no comment, no fence', async () => {
    await rest.request('PUT', '/api/v1/namespaces/ns');
    expect(seen).toEqual([{ method: 'PUT', ua: 'temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/x' }]);
  });
});
