import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

/*
 * Fencing: a write goes out only while its activity attempt is still this replica's.
 *
 * Temporal gives an activity to one worker at a time, but it takes it back without telling that
 * worker: when a heartbeat is overdue, when the start-to-close limit passes, or (for a local
 * activity) when its workflow task times out because the worker stopped answering. The worker
 * that lost it hears of it late or never: a paused process (SIGSTOP, a long GC, a VM migration)
 * hears nothing while paused, and one cut off from Temporal hears nothing at all. Without a
 * fence it goes on writing from the state it decided on, while another replica runs the same
 * work: a precondition stops a stale update, but not a create under a fresh name or a delete.
 *
 * Heartbeats are fire-and-forget in the SDK: no answer says the server got one. So the fence
 * reasons from what the worker can see:
 * - the attempt was cancelled (core cancels it when a heartbeat's answer says it is gone);
 * - its start-to-close limit is near;
 * - it has not heartbeated within most of its heartbeat timeout (the server is about to give it
 *   to someone else, and nothing revives it once it did);
 * - the process has not heard from Temporal (ContactClock) for most of the attempt's lease, at
 *   any moment since Temporal last vouched for the attempt: then the server may have timed it
 *   out although no local timer says so. A paused process sees this on waking, as a gap.
 * Once an attempt has lost its lease it stays lost: every later write of it is refused, and the
 * activity fails with a `Fenced` failure however its code treats the error.
 */

/** the workflow task timeout every run starts with (the server's default; we set none) */
export const WORKFLOW_TASK_TIMEOUT_MS = 10_000;
/**
 * The share of its heartbeat timeout a regular attempt may go without beating, or without Temporal
 * answering this process. The worker sends a beat within a second of it (maxHeartbeatThrottleInterval
 * in workers/manager.ts), so the server's last beat is at most a second older than ours.
 */
const BEAT_SHARE = 0.6;
/**
 * The share of the workflow task timeout a local attempt may go without Temporal answering. The
 * worker keeps a workflow task that runs local activities alive by completing it anew at 80% of
 * its timeout; cut off just before that, the task's deadline is only a fifth of the timeout away.
 */
const LOCAL_SHARE = 0.3;
/** the share of start-to-close after which an attempt writes no more */
const LIMIT_SHARE = 0.9;
/** silences shorter than this are the normal space between probes, not worth recording */
const GAP_MIN_MS = 2_000;
/** gaps older than the longest start-to-close limit cannot overlap a running attempt */
const GAP_KEEP_MS = 20 * 60_000;
const GAP_KEEP_MAX = 64;
/** how long probes stay frequent after the last attempt ends: a workflow task's local activities follow one another */
const PROBING_TAIL_MS = 10_000;

/**
 * When this process last heard from Temporal, and the silences it has been through. A silence is
 * recorded when it ends (an answer after a long wait, or the first timer tick after a pause), so
 * an attempt checks whether any silence since its proof of ownership outlasted its lease.
 */
export class ContactClock {
  private last: number;
  private gaps: Array<[from: number, to: number]> = [];
  private running = 0;
  private lastEndedAt = -Infinity;

  constructor(now = Date.now()) {
    this.last = now;
  }

  /** An attempt starts: Temporal is asked often from now until a while after the last one ends. */
  attemptStarted(): void {
    this.running++;
  }

  attemptEnded(now = Date.now()): void {
    this.running--;
    this.lastEndedAt = now;
  }

  /**
   * Whether Temporal is asked often now (TemporalContact's busy period): attempts run, or ran
   * within the last 10 s. Only then does an old last answer mean silence rather than not asking.
   */
  probingOften(now = Date.now()): boolean {
    return this.running > 0 || now - this.lastEndedAt < PROBING_TAIL_MS;
  }

  /** Temporal answered (a probe, or a task handed over): contact at `now`. */
  heard(now = Date.now()): void {
    if (now <= this.last) return;
    if (now - this.last >= GAP_MIN_MS) {
      this.gaps.push([this.last, now]);
      while (this.gaps.length > GAP_KEEP_MAX || (this.gaps.length && now - this.gaps[0][1] > GAP_KEEP_MS)) this.gaps.shift();
    }
    this.last = now;
  }

  lastHeard(): number {
    return this.last;
  }

  /** The longest time without Temporal since `since`, the silence going on now included. */
  longestSilenceSince(since: number, now = Date.now()): number {
    let longest = Math.max(0, now - Math.max(this.last, since));
    for (const [from, to] of this.gaps) if (to > since) longest = Math.max(longest, to - Math.max(from, since));
    return longest;
  }
}

/** What the fence knows of the attempt it guards. */
export interface AttemptInfo {
  workflowId: string;
  runId: string;
  activityId: string;
  attempt: number;
  isLocal: boolean;
  heartbeatTimeoutMs?: number;
  startToCloseTimeoutMs: number;
  /** a local activity's first schedule, by this worker's clock */
  scheduledAtMs: number;
}

/** The running attempt's lease: held while no rule above says otherwise. */
export class AttemptLease {
  /** a short name of the activity (its run and ID), the same on every replica and attempt */
  readonly key: string;
  readonly startedAt: number;
  /** the latest moment Temporal surely held the attempt as ours */
  private readonly vouchedAt: number;
  private lastBeatAt: number;
  private lostWhy: string | undefined;
  /** writes refused: the activity's result then misses them, whatever its code made of the refusal */
  refusedWrites = 0;

  constructor(readonly info: AttemptInfo, private readonly clock: ContactClock, private readonly signal: AbortSignal | undefined, now = Date.now()) {
    this.key = attemptKey(info.workflowId, info.runId, info.activityId);
    this.startedAt = now;
    // A regular attempt was just handed over by the server. A local one runs in a workflow task
    // that may have begun long before (it goes on through local activities one after another),
    // and its retries happen in the worker: it is vouched for by no more than its first schedule,
    // nor, while Temporal is asked often, than the last answer before it (after a cut, the next
    // local activity of the same task would otherwise start a fresh allowance).
    this.vouchedAt = !info.isLocal ? now
      : Math.min(now, info.scheduledAtMs, clock.probingOften(now) ? clock.lastHeard() : Infinity);
    this.lastBeatAt = now;
  }

  /** why the attempt no longer holds its lease, or undefined while it does */
  get lost(): string | undefined {
    return this.lostWhy;
  }

  /** The activity heartbeated: checked first, since a beat after the server gave up revives nothing. */
  beat(now = Date.now()): void {
    this.check(now);
    this.lastBeatAt = now;
  }

  /** Undefined while the lease holds, else why not (and from then on). */
  check(now = Date.now()): string | undefined {
    if (this.lostWhy) return this.lostWhy;
    const i = this.info;
    if (this.signal?.aborted) return (this.lostWhy = 'the attempt was cancelled');
    if (now - this.startedAt > i.startToCloseTimeoutMs * LIMIT_SHARE) {
      return (this.lostWhy = `the attempt ran ${now - this.startedAt} ms of its ${i.startToCloseTimeoutMs} ms limit`);
    }
    if (i.heartbeatTimeoutMs && !i.isLocal && now - this.lastBeatAt > i.heartbeatTimeoutMs * BEAT_SHARE) {
      return (this.lostWhy = `no heartbeat for ${now - this.lastBeatAt} ms (heartbeat timeout ${i.heartbeatTimeoutMs} ms)`);
    }
    // a regular attempt without a heartbeat timeout is the server's until start-to-close, heard or not
    const allowed = i.isLocal ? WORKFLOW_TASK_TIMEOUT_MS * LOCAL_SHARE : (i.heartbeatTimeoutMs ?? 0) * BEAT_SHARE;
    if (allowed) {
      const silence = this.clock.longestSilenceSince(this.vouchedAt, now);
      if (silence > allowed) return (this.lostWhy = `Temporal unheard for ${silence} ms (this attempt allows ${allowed} ms)`);
    }
    return undefined;
  }

  /** The failure a lost attempt ends with: a local one's retries would run in the worker that lost it, so none. */
  failure(what = 'write'): ApplicationFailure {
    return ApplicationFailure.create({
      type: 'Fenced',
      message: `${what} refused: ${this.lostWhy ?? 'the attempt lost its lease'}`,
      nonRetryable: this.info.isLocal,
    });
  }

  /** A User-Agent comment naming the attempt and replica, so an audit log ties each request to both. */
  userAgentComment(replica: string): string {
    return `(attempt ${this.key} ${this.info.attempt} ${replica})`;
  }
}

export function attemptKey(workflowId: string, runId: string, activityId: string): string {
  return createHash('sha256').update(`${workflowId}\n${runId}\n${activityId}`).digest('hex').slice(0, 16);
}

/** The attempt the current async context runs in (set around each activity by the worker). */
export const runningAttempt = new AsyncLocalStorage<{ lease: AttemptLease; replica: string }>();

/** Refuses a write whose attempt lost its lease: called just before the request leaves. */
export function fenceWrite(method: string, path: string): void {
  const running = runningAttempt.getStore();
  if (!running) return;
  if (!running.lease.check()) return;
  running.lease.refusedWrites++;
  throw running.lease.failure(`${method} ${path}`);
}

/** The User-Agent a request goes out with: inside an attempt, with the attempt named. */
export function attemptUserAgent(userAgent: string): string {
  const running = runningAttempt.getStore();
  return running ? `${userAgent} ${running.lease.userAgentComment(running.replica)}` : userAgent;
}

/** Heartbeat bookkeeping for the fence: see AttemptLease.beat. */
export function noteBeat(): void {
  runningAttempt.getStore()?.lease.beat();
}

/** The lease of the activity attempt running now, or undefined outside one (unit tests call activities directly). */
export function currentAttemptLease(clock: ContactClock, now = Date.now()): AttemptLease | undefined {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return undefined;
  }
  const i = ctx.info;
  return new AttemptLease({
    workflowId: i.workflowExecution?.workflowId ?? '',
    runId: i.workflowExecution?.runId ?? '',
    activityId: i.activityId,
    attempt: i.attempt,
    isLocal: i.isLocal,
    heartbeatTimeoutMs: i.heartbeatTimeoutMs,
    startToCloseTimeoutMs: i.startToCloseTimeoutMs,
    scheduledAtMs: i.scheduledTimestampMs,
  }, clock, ctx.cancellationSignal, now);
}
