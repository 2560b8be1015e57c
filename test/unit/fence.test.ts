import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { AttemptLease, ContactClock, WORKFLOW_TASK_TIMEOUT_MS, attemptKey, type AttemptInfo } from '../../activities/kube/fence';
import { runningActivity } from '../../activities/kube/running-activity';
import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { plainHttpAccess } from '../support/plain-http-access';

const T0 = 1_000_000;
const info = (o: Partial<AttemptInfo> = {}): AttemptInfo => ({
  workflowId: 'replicaset/ns/web', runId: 'run-1', activityId: '7', attempt: 1, isLocal: true,
  startToCloseTimeoutMs: 60_000, scheduledAtMs: T0, ...o,
});

/** a clock whose process CPU time the test sets (`cpu.ms`); by default a process always busy, so never paused */
function clockAt(now: number, cpu: { ms: number } = busy()): ContactClock {
  return new ContactClock(now, () => cpu.ms);
}
function busy(): { ms: number } {
  let n = 0;
  return { get ms() { return (n += 1e6); } };
}

describe('ContactClock', () => {
  test('a silence in which a probe failed is recorded when an answer ends it; one without (answers merely unread) is not', () => {
    const c = clockAt(T0);
    c.heard(T0 + 500);
    c.heard(T0 + 6_000); // no probe failed: a busy main thread, say
    expect(c.longestGapSince(T0)).toEqual({ ms: 0, kind: 'silence' });
    c.failed();
    c.heard(T0 + 26_000);
    expect(c.longestGapSince(T0)).toEqual({ ms: 20_000, kind: 'silence' });
    // only the part of a gap after `since` counts
    expect(c.longestGapSince(T0 + 21_000).ms).toBe(5_000);
    expect(c.longestGapSince(T0 + 26_000).ms).toBe(0);
    expect(c.silenceNow(T0 + 20_000, T0 + 30_000)).toBe(4_000);
    expect(c.lastHeard()).toBe(T0 + 26_000);
  });

  test('a pause is wall time with (almost) no CPU time; a busy or merely idle stretch is not', () => {
    const cpu = { ms: 0 };
    const c = clockAt(T0, cpu);
    c.notePauses(T0 + 250); // idle, but looked at often
    c.notePauses(T0 + 500);
    cpu.ms = 4_800;
    c.notePauses(T0 + 5_500); // 5 s of JavaScript on the main thread
    expect(c.longestGapSince(T0).ms).toBe(0);
    cpu.ms = 4_900;
    c.notePauses(T0 + 25_500); // SIGSTOP for 20 s
    expect(c.longestGapSince(T0)).toEqual({ ms: 20_000, kind: 'pause' });
  });

  test('an answer older than the last one changes nothing', () => {
    const c = clockAt(T0);
    c.heard(T0 + 5_000);
    c.heard(T0 + 1_000);
    expect(c.lastHeard()).toBe(T0 + 5_000);
  });

  test('confirm asks whoever can ask Temporal, and gives up after 1.5 s', async () => {
    const c = clockAt(Date.now());
    expect(await c.confirm()).toBe(false); // nobody to ask
    c.setAsker(async () => true);
    expect(await c.confirm()).toBe(true);
    c.setAsker(() => new Promise(() => undefined));
    const t0 = Date.now();
    expect(await c.confirm()).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_450);
  });
});

describe('AttemptLease', () => {
  test('a local attempt holds while Temporal answers; a pause past 30% of the workflow task timeout loses it for good', () => {
    const cpu = { ms: 0 };
    const c = clockAt(T0, cpu);
    const lease = new AttemptLease(info(), c, undefined, T0);
    for (let t = 500; t <= 20_000; t += 500) {
      cpu.ms += 100;
      c.heard(T0 + t);
      expect(lease.check(T0 + t + 100)).toBeUndefined();
      expect(lease.unconfirmedSilence).toBe(0);
    }
    // stopped for 20 s: on waking the write is refused, before any answer comes and after
    expect(lease.check(T0 + 40_100)).toMatch(/the process was paused for 20000 ms \(this attempt allows 3000 ms without Temporal\)/);
    c.heard(T0 + 40_110);
    expect(lease.check(T0 + 40_120)).toMatch(/paused/);
    expect(WORKFLOW_TASK_TIMEOUT_MS * 0.3).toBe(3_000);
  });

  test('a silence no failed probe or pause explains is confirmed before it counts: an answer keeps the lease, none loses it', async () => {
    // the main thread was busy the whole time (the default clock's CPU)
    const c = clockAt(Date.now());
    const start = Date.now();
    const lease = new AttemptLease(info({ scheduledAtMs: start }), c, undefined, start);
    expect(lease.check(start + 4_000)).toBeUndefined();
    expect(lease.unconfirmedSilence).toBe(4_000);
    c.setAsker(async () => { c.heard(); return true; });
    expect(await lease.confirm()).toBeUndefined();
    expect(lease.check()).toBeUndefined();
    expect(lease.unconfirmedSilence).toBe(0);
    // cut off: the probes fail, and no answer confirms
    c.setAsker(async () => { c.failed(); return false; });
    expect(lease.check(Date.now() + 3_500)).toBeUndefined();
    expect(await lease.confirm()).toMatch(/Temporal unheard for 35\d\d ms \(this attempt allows 3000 ms\)/);
    expect(lease.check()).toMatch(/unheard/);
  });

  test('after a cut healed, an attempt the cut overlapped stays lost; one begun after it holds', () => {
    const c = clockAt(T0);
    const during = new AttemptLease(info({ scheduledAtMs: T0 }), c, undefined, T0);
    c.failed();
    c.heard(T0 + 8_000);
    expect(during.check(T0 + 8_001)).toMatch(/Temporal unheard for 8000 ms/);
    const after = new AttemptLease(info({ scheduledAtMs: T0 + 8_500 }), c, undefined, T0 + 8_500);
    expect(after.check(T0 + 8_600)).toBeUndefined();
  });

  test('a local retry gets no fresh start: its proof is the first schedule', () => {
    const c = clockAt(T0);
    const retry = new AttemptLease(info({ attempt: 3, scheduledAtMs: T0 }), c, undefined, T0 + 4_000);
    expect(retry.check(T0 + 4_000)).toBeUndefined();
    expect(retry.unconfirmedSilence).toBe(4_000);
  });

  test('a local attempt started while Temporal is asked often is vouched for by the last answer before it, not its schedule', () => {
    const c = clockAt(T0);
    c.attemptStarted();
    c.heard(T0 + 500);
    c.attemptEnded(T0 + 600);
    // cut off at 0.5 s: the same workflow task's next local activity is scheduled at 2 s
    expect(c.probingOften(T0 + 2_000)).toBe(true);
    const next = new AttemptLease(info({ scheduledAtMs: T0 + 2_000 }), c, undefined, T0 + 2_000);
    next.check(T0 + 3_000);
    expect(next.unconfirmedSilence).toBe(0);
    next.check(T0 + 3_600);
    expect(next.unconfirmedSilence).toBe(3_100);
    // after 10 s without attempts the probe slows down: an old answer then means not asking
    expect(c.probingOften(T0 + 10_601)).toBe(false);
    const afterIdle = new AttemptLease(info({ scheduledAtMs: T0 + 20_000 }), c, undefined, T0 + 20_000);
    afterIdle.check(T0 + 20_100);
    expect(afterIdle.unconfirmedSilence).toBe(0);
  });

  test('a regular attempt is vouched for by its start; its heartbeat must keep coming within 60% of the timeout', () => {
    const cpu = { ms: 0 };
    const c = clockAt(T0, cpu);
    const lease = new AttemptLease(info({ isLocal: false, heartbeatTimeoutMs: 5_000, scheduledAtMs: T0 - 60_000 }), c, undefined, T0 + 10_000);
    for (let t = 10_000; t <= 20_000; t += 1_000) {
      cpu.ms += 500;
      c.heard(T0 + t);
      lease.beat(T0 + t);
      expect(lease.check(T0 + t)).toBeUndefined();
    }
    cpu.ms += 2_000;
    c.heard(T0 + 23_000); // Temporal answers, but the activity stopped beating
    expect(lease.check(T0 + 23_100)).toMatch(/no heartbeat for 3100 ms \(heartbeat timeout 5000 ms\)/);
    // a beat after the server gave up revives nothing
    lease.beat(T0 + 23_200);
    expect(lease.check(T0 + 23_300)).toMatch(/no heartbeat/);
  });

  test('a regular attempt with a heartbeat timeout may go 60% of it without Temporal, though it beats', () => {
    const cpu = { ms: 0 };
    const c = clockAt(T0, cpu);
    const lease = new AttemptLease(info({ isLocal: false, heartbeatTimeoutMs: 10_000 }), c, undefined, T0);
    for (let t = 1_000; t <= 6_000; t += 1_000) { cpu.ms += 500; lease.beat(T0 + t); }
    lease.check(T0 + 5_900);
    expect(lease.unconfirmedSilence).toBe(0);
    lease.check(T0 + 6_500);
    expect(lease.unconfirmedSilence).toBe(6_500);
  });

  test('a regular attempt without a heartbeat timeout is the server\'s until its limit, heard or not', () => {
    const c = clockAt(T0, { ms: 1e9 });
    const lease = new AttemptLease(info({ isLocal: false, startToCloseTimeoutMs: 60_000 }), c, undefined, T0);
    expect(lease.check(T0 + 50_000)).toBeUndefined();
    expect(lease.unconfirmedSilence).toBe(0);
    expect(lease.check(T0 + 54_001)).toMatch(/ran 54001 ms of its 60000 ms limit/);
  });

  test('a cancelled attempt writes no more', () => {
    const ac = new AbortController();
    const cancelled = new AttemptLease(info({ isLocal: false }), clockAt(T0), ac.signal, T0);
    expect(cancelled.check(T0 + 1)).toBeUndefined();
    ac.abort();
    expect(cancelled.check(T0 + 2)).toBe('the attempt was cancelled');
  });

  test('its failure is a Fenced ApplicationFailure, final for a local attempt (a retry would run in the same worker), retryable for a regular one', () => {
    const local = new AttemptLease(info(), clockAt(T0), undefined, T0);
    local.check(T0 + 10_000);
    const f = local.failure('POST /api/v1/namespaces/ns/pods');
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type: 'Fenced', nonRetryable: true });
    expect(f.message).toMatch(/^POST \/api\/v1\/namespaces\/ns\/pods refused: /);
    expect(new AttemptLease(info({ isLocal: false }), clockAt(T0), undefined, T0).failure().nonRetryable).toBe(false);
  });

  test('its key names the run and activity alike on every replica and attempt', () => {
    const a = new AttemptLease(info({ attempt: 1 }), clockAt(T0), undefined, T0);
    const b = new AttemptLease(info({ attempt: 4 }), clockAt(T0), undefined, T0 + 9);
    expect(a.key).toBe(b.key);
    expect(a.key).toBe(attemptKey('replicaset/ns/web', 'run-1', '7'));
    expect(a.key).not.toBe(attemptKey('replicaset/ns/web', 'run-1', '8'));
    expect(a.userAgentComment('host-42')).toBe(`(attempt ${a.key} 1 ${a.execution} host-42)`);
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
    await runningActivity.run({ input: undefined, attempt: { lease, replica: 'host-1' } }, async () => {
      await rest.request('POST', '/api/v1/namespaces/ns/pods', { body: {} });
      expect(seen).toEqual([{ method: 'POST', ua: `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/x (attempt ${lease.key} 1 ${lease.execution} host-1)` }]);
      // Temporal unheard past the lease, and nobody to confirm it answers: the same client refuses
      // the write before sending it
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

  test('a lease lost after the check but before the socket is ready (a SIGSTOP mid-connect) stops the write: nothing leaves', async () => {
    const ac = new AbortController();
    const lease = new AttemptLease(info({ scheduledAtMs: Date.now() }), new ContactClock(), ac.signal);
    // the attempt is cancelled while its connection is being made, after fenceWrite let it through
    let connections = 0;
    class CancellingAgent extends http.Agent {
      override createConnection(...args: Parameters<http.Agent['createConnection']>) {
        connections++;
        ac.abort();
        return super.createConnection(...args);
      }
    }
    const agent = new CancellingAgent();
    const port = (server.address() as AddressInfo).port;
    const cancelling = new KubeRest({ getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }), applyToHTTPSOptions: async (o) => { Object.assign(o, { agent }); } },
      new TokenBucket(0, 0), undefined, undefined, undefined, 'temporal-kcm/x');
    await runningActivity.run({ input: undefined, attempt: { lease, replica: 'host-1' } }, async () => {
      await expect(cancelling.request('POST', '/api/v1/namespaces/ns/pods', { body: {} })).rejects.toMatchObject({ type: 'Fenced', message: expect.stringContaining('cancelled') });
    });
    agent.destroy();
    expect(connections).toBe(1);
    expect(seen).toEqual([]);
    expect(lease.refusedWrites).toBe(1);
  });

  test('outside an attempt nothing changes: no comment, no fence', async () => {
    await rest.request('PUT', '/api/v1/namespaces/ns');
    expect(seen).toEqual([{ method: 'PUT', ua: 'temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/x' }]);
  });
});
