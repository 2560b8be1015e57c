import { jobTtlView } from '../../activities/ttl-after-finished/activities';
import { decideTtl, JobTtlView, needsCleanup, sameForTtl, timeLeft, wantsTtlWorkflow } from '../../workflows/ttl-after-finished/logic';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (offsetSeconds: number) => new Date(NOW + offsetSeconds * 1000).toISOString();

/** A Job as the API returns it: Complete and/or Failed conditions at the given times. */
function job(opts: { complete?: string; failed?: string; ttl?: number; deleting?: boolean } = {}): JobTtlView {
  const conditions = [
    ...(opts.complete ? [{ type: 'Complete', status: 'True', lastTransitionTime: opts.complete }] : []),
    ...(opts.failed ? [{ type: 'Failed', status: 'True', lastTransitionTime: opts.failed }] : []),
  ];
  return jobTtlView({
    metadata: { namespace: 'default', name: 'foobar', uid: 'u1', ...(opts.deleting ? { deletionTimestamp: at(0) } : {}) },
    spec: { ...(opts.ttl !== undefined ? { ttlSecondsAfterFinished: opts.ttl } : {}) },
    status: { conditions },
  });
}

describe('timeLeft (upstream TestTimeLeft)', () => {
  test('an unfinished Job is an error', () => {
    const r = timeLeft(job({ ttl: 100 }), NOW);
    expect(r).toEqual({ ok: false, error: expect.stringContaining('should not be cleaned up') });
  });

  test('a finished Job without TTL is an error', () => {
    expect(timeLeft(job({ complete: at(0) }), NOW).ok).toBe(false);
    expect(timeLeft(job({ failed: at(0) }), NOW).ok).toBe(false);
  });

  test.each([
    ['completed now, 0s TTL', { complete: at(0), ttl: 0 }, 0],
    ['completed now, 10s TTL', { complete: at(0), ttl: 10 }, 10],
    ['completed 10s ago, 15s TTL', { complete: at(-10), ttl: 15 }, 5],
    ['failed now, 0s TTL', { failed: at(0), ttl: 0 }, 0],
    ['failed now, 10s TTL', { failed: at(0), ttl: 10 }, 10],
    ['failed 10s ago, 15s TTL', { failed: at(-10), ttl: 15 }, 5],
  ])('%s', (_name, opts, leftSeconds) => {
    const r = timeLeft(job(opts), NOW);
    if (!r.ok) throw new Error(r.error);
    expect(r.remainingMs).toBe(leftSeconds * 1000);
    expect(r.expireAtMs).toBe(NOW + leftSeconds * 1000);
    expect(r.finishedInFuture).toBe(false);
  });

  test('a finishing condition without a time is an error, not time zero', () => {
    const j: JobTtlView = { namespace: 'default', name: 'foobar', uid: 'u1', ttlSecondsAfterFinished: 10, finished: { type: 'Complete' } };
    expect(timeLeft(j, NOW)).toEqual({ ok: false, error: expect.stringContaining('unable to find the time') });
  });

  test('the first True finishing condition in status order is the finish time', () => {
    const r = timeLeft(job({ complete: at(-100), failed: at(-5), ttl: 60 }), NOW);
    expect(r.ok && r.remainingMs).toBe(-40_000);
  });

  test('a finish time ahead of our clock is flagged as skew and waited out in full', () => {
    const r = timeLeft(job({ complete: at(30), ttl: 10 }), NOW);
    expect(r).toMatchObject({ ok: true, finishedInFuture: true, remainingMs: 40_000 });
  });
});

describe('needsCleanup and what the watch routes', () => {
  test('needs a TTL and a True Complete or Failed condition', () => {
    expect(needsCleanup(job({ ttl: 5 }))).toBe(false);
    expect(needsCleanup(job({ complete: at(0) }))).toBe(false);
    expect(needsCleanup(job({ complete: at(0), ttl: 5 }))).toBe(true);
    expect(needsCleanup(job({ failed: at(0), ttl: 0 }))).toBe(true);
  });

  test('a False finishing condition is not finished', () => {
    const j = jobTtlView({ metadata: { namespace: 'n', name: 'j', uid: 'u' }, spec: { ttlSecondsAfterFinished: 1 },
      status: { conditions: [{ type: 'Complete', status: 'False', lastTransitionTime: at(0) }, { type: 'Suspended', status: 'True' }] } });
    expect(j.finished).toBeUndefined();
    expect(needsCleanup(j)).toBe(false);
  });

  test('a Job being deleted gets no workflow', () => {
    expect(wantsTtlWorkflow(job({ complete: at(0), ttl: 5 }))).toBe(true);
    expect(wantsTtlWorkflow(job({ complete: at(0), ttl: 5, deleting: true }))).toBe(false);
  });

  test('views differing only in what timing ignores are the same', () => {
    const a = job({ complete: at(0), ttl: 5 });
    expect(sameForTtl(a, { ...a })).toBe(true);
    expect(sameForTtl(a, { ...a, ttlSecondsAfterFinished: 6 })).toBe(false);
    expect(sameForTtl(a, { ...a, uid: 'u2' })).toBe(false);
    expect(sameForTtl(a, { ...a, deletionTimestamp: at(1) })).toBe(false);
  });
});

describe('decideTtl (upstream processTTL)', () => {
  test('waits for the rest of the TTL', () => {
    expect(decideTtl(job({ complete: at(-3), ttl: 10 }), NOW)).toMatchObject({ kind: 'wait', ms: 7000 });
  });

  test('expired at exactly the TTL', () => {
    expect(decideTtl(job({ complete: at(-10), ttl: 10 }), NOW).kind).toBe('expired');
  });

  test('a TTL raised since makes an expired Job wait again', () => {
    const j = job({ complete: at(-10), ttl: 10 });
    expect(decideTtl({ ...j, ttlSecondsAfterFinished: 60 }, NOW)).toMatchObject({ kind: 'wait', ms: 50_000 });
  });

  test('a Job being deleted, without TTL, or unfinished is left alone', () => {
    expect(decideTtl(job({ complete: at(-100), ttl: 1, deleting: true }), NOW).kind).toBe('done');
    expect(decideTtl(job({ complete: at(-100) }), NOW).kind).toBe('done');
    expect(decideTtl(job({ ttl: 1 }), NOW).kind).toBe('done');
  });
});
