/**
 * When a finished Job's time is up, as upstream's TTL-after-finished controller reckons it: the
 * clock starts at the lastTransitionTime of the Job's Complete or Failed condition (whichever True
 * one comes first in status) and runs for spec.ttlSecondsAfterFinished seconds.
 */

export const CONTROLLER = 'ttl-after-finished';

/** What the controller reads of a Job: enough to time it, nothing of its template. */
export interface JobTtlView {
  namespace: string;
  name: string;
  uid: string;
  /** spec.ttlSecondsAfterFinished; absent means the Job is kept */
  ttlSecondsAfterFinished?: number;
  /** RFC 3339; set once someone asked for the Job's deletion */
  deletionTimestamp?: string;
  /** the first True Complete or Failed condition; absent while the Job runs */
  finished?: { type: 'Complete' | 'Failed'; lastTransitionTime?: string };
}

/** Upstream's needsCleanup: a TTL is set and the Job has finished. */
export function needsCleanup(job: JobTtlView): boolean {
  return job.ttlSecondsAfterFinished !== undefined && job.finished !== undefined;
}

/** What the watch signals on, as upstream's add/update handlers enqueue: needing cleanup and not already going. */
export function wantsTtlWorkflow(job: JobTtlView): boolean {
  return !job.deletionTimestamp && needsCleanup(job);
}

export type TtlClock =
  | {
      ok: true;
      finishAtMs: number;
      expireAtMs: number;
      /** negative or zero once expired */
      remainingMs: number;
      /** the finish time is ahead of our clock: skew between the API server and us (upstream warns and waits) */
      finishedInFuture: boolean;
    }
  | { ok: false; error: string };

/**
 * Upstream's timeLeft: how long until the Job expires, counted from `nowMs`. A Job that does not
 * need cleanup, or whose finishing condition carries no usable time, is an error (upstream retries it
 * with backoff).
 */
export function timeLeft(job: JobTtlView, nowMs: number): TtlClock {
  const key = `${job.namespace}/${job.name}`;
  if (!needsCleanup(job)) return { ok: false, error: `job ${key} should not be cleaned up` };
  const at = job.finished!.lastTransitionTime;
  const finishAtMs = at ? Date.parse(at) : NaN;
  // a zero time serialises as null; upstream treats it as unknown too
  if (!Number.isFinite(finishAtMs)) return { ok: false, error: `unable to find the time when the Job ${key} finished` };
  const expireAtMs = finishAtMs + job.ttlSecondsAfterFinished! * 1000;
  return { ok: true, finishAtMs, expireAtMs, remainingMs: expireAtMs - nowMs, finishedInFuture: finishAtMs > nowMs };
}

/** What to do with a Job the workflow holds a view of. */
export type TtlDecision =
  | { kind: 'done'; why: string }
  | { kind: 'wait'; ms: number; clock: Extract<TtlClock, { ok: true }> }
  | { kind: 'expired'; clock: Extract<TtlClock, { ok: true }> }
  | { kind: 'error'; error: string };

/**
 * Upstream's processTTL: a Job being deleted or no longer needing cleanup is left alone (done); one
 * not yet expired waits for the rest of its TTL; an expired one is due for deletion.
 */
export function decideTtl(job: JobTtlView, nowMs: number): TtlDecision {
  if (job.deletionTimestamp) return { kind: 'done', why: 'already being deleted' };
  if (!needsCleanup(job)) {
    return { kind: 'done', why: job.ttlSecondsAfterFinished === undefined ? 'has no ttlSecondsAfterFinished' : 'has not finished' };
  }
  const clock = timeLeft(job, nowMs);
  if (!clock.ok) return { kind: 'error', error: clock.error };
  if (clock.remainingMs > 0) return { kind: 'wait', ms: clock.remainingMs, clock };
  return { kind: 'expired', clock };
}

/** Signals for a view the workflow already holds are not worth sending: only what timing reads counts. */
export function sameForTtl(a: JobTtlView, b: JobTtlView): boolean {
  return a.uid === b.uid && a.ttlSecondsAfterFinished === b.ttlSecondsAfterFinished && !!a.deletionTimestamp === !!b.deletionTimestamp
    && a.finished?.type === b.finished?.type && a.finished?.lastTransitionTime === b.finished?.lastTransitionTime;
}
