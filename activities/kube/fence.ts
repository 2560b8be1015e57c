import { createHash, randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { sleep } from './abort';
import { runningActivity } from './running-activity';

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
 *   out although no local timer says so.
 * Silence has two causes the fence must tell apart. A process that was not running (stopped, or
 * starved of CPU) could not keep its tasks either: ContactClock finds such a pause on waking, from
 * the process's CPU time, and it costs every attempt it overlaps its lease. A process whose main
 * thread was only busy (a long stretch of JavaScript) kept its tasks, since the SDK's core answers
 * Temporal from threads of its own; its probe answers were merely not read. So a silence with no
 * failed probe and no pause in it is confirmed before it counts: the write waits for a fresh probe
 * answer (at most 1.5 s) and goes out if one comes.
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
/** a stretch of wall time at least this long in which the process got under PAUSE_CPU_SHARE of a core was a pause */
const PAUSE_MIN_MS = 1_000;
const PAUSE_CPU_SHARE = 0.1;
/** how often the pause watch looks */
const PAUSE_WATCH_MS = 250;
/** the longest a write waits for a probe to confirm Temporal still answers */
const CONFIRM_MS = 1_500;

type GapKind = 'silence' | 'pause';

/** CPU time of the whole process (every thread), ms. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * When this process last heard from Temporal, and the gaps it has been through: silences in
 * which a probe failed (recorded when an answer ends them) and pauses (found from CPU time). An
 * attempt checks whether any gap since its proof of ownership outlasted its allowance.
 */
export class ContactClock {
  private last: number;
  private gaps: Array<{ from: number; to: number; kind: GapKind }> = [];
  private failedSinceLast = false;
  private running = 0;
  private lastEndedAt = -Infinity;
  private watchWall: number;
  private watchCpu: number;
  private asker: (() => Promise<boolean>) | undefined;

  constructor(now = Date.now(), private readonly cpuMs: () => number = processCpuMs) {
    this.last = now;
    this.watchWall = now;
    this.watchCpu = cpuMs();
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
    if (this.failedSinceLast && now - this.last >= GAP_MIN_MS) this.addGap(this.last, now, 'silence');
    this.failedSinceLast = false;
    this.last = now;
  }

  /** A probe got no answer (an error, or its deadline passed). */
  failed(): void {
    this.failedSinceLast = true;
  }

  lastHeard(): number {
    return this.last;
  }

  /**
   * Finds a pause since the last look: wall time passed with (almost) no CPU time used. Called
   * every 250 ms by `watch` and before every decision, so a write on waking sees the pause first.
   */
  notePauses(now = Date.now()): void {
    const cpu = this.cpuMs();
    const wall = now - this.watchWall;
    if (wall >= PAUSE_MIN_MS && cpu - this.watchCpu < wall * PAUSE_CPU_SHARE) this.addGap(this.watchWall, now, 'pause');
    this.watchWall = now;
    this.watchCpu = cpu;
  }

  /** Looks for pauses every 250 ms until the returned function is called. */
  watch(): () => void {
    const t = setInterval(() => this.notePauses(), PAUSE_WATCH_MS);
    t.unref();
    return () => clearInterval(t);
  }

  /** Who can ask Temporal now (TemporalContact): resolves whether it answered. */
  setAsker(ask: () => Promise<boolean>): void {
    this.asker = ask;
  }

  /** Asks Temporal now and waits at most 1.5 s: whether it answered. */
  async confirm(): Promise<boolean> {
    if (!this.asker) return false;
    const answered = new AbortController();
    try {
      return await Promise.race([this.asker().catch(() => false), sleep(CONFIRM_MS, answered.signal).then(() => false)]);
    } finally {
      answered.abort();
    }
  }

  /** The longest recorded gap (failed silence or pause) since `since`, and its kind. */
  longestGapSince(since: number): { ms: number; kind: GapKind } {
    let longest: { ms: number; kind: GapKind } = { ms: 0, kind: 'silence' };
    for (const g of this.gaps) {
      const ms = g.to - Math.max(g.from, since);
      if (g.to > since && ms > longest.ms) longest = { ms, kind: g.kind };
    }
    return longest;
  }

  /** The silence going on now, counted from `since` at the earliest. */
  silenceNow(since: number, now = Date.now()): number {
    return Math.max(0, now - Math.max(this.last, since));
  }

  private addGap(from: number, to: number, kind: GapKind): void {
    this.gaps.push({ from, to, kind });
    while (this.gaps.length > GAP_KEEP_MAX || (this.gaps.length && to - this.gaps[0].to > GAP_KEEP_MS)) this.gaps.shift();
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
  /**
   * This execution of the attempt: a local activity whose workflow task moved runs again, under the
   * same activity ID and attempt number, wherever the task went (even back on this replica)
   */
  readonly execution = randomBytes(3).toString('hex');
  readonly startedAt: number;
  /** the latest moment Temporal surely held the attempt as ours */
  private readonly vouchedAt: number;
  private lastBeatAt: number;
  private lostWhy: string | undefined;
  private unconfirmed = 0;
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

  /**
   * Undefined while the lease holds, else why not (and from then on). A silence going on now that
   * no failed probe or pause explains is left to `confirm` (see `unconfirmedSilence`).
   */
  check(now = Date.now()): string | undefined {
    this.unconfirmed = 0;
    if (this.lostWhy) return this.lostWhy;
    const i = this.info;
    this.clock.notePauses(now);
    if (this.signal?.aborted) return (this.lostWhy = 'the attempt was cancelled');
    if (now - this.startedAt > i.startToCloseTimeoutMs * LIMIT_SHARE) {
      return (this.lostWhy = `the attempt ran ${now - this.startedAt} ms of its ${i.startToCloseTimeoutMs} ms limit`);
    }
    if (i.heartbeatTimeoutMs && !i.isLocal && now - this.lastBeatAt > i.heartbeatTimeoutMs * BEAT_SHARE) {
      return (this.lostWhy = `no heartbeat for ${now - this.lastBeatAt} ms (heartbeat timeout ${i.heartbeatTimeoutMs} ms)`);
    }
    // a regular attempt without a heartbeat timeout is the server's until start-to-close, heard or not
    const allowed = this.allowedSilenceMs();
    if (allowed) {
      const gap = this.clock.longestGapSince(this.vouchedAt);
      if (gap.ms > allowed) {
        return (this.lostWhy = gap.kind === 'pause'
          ? `the process was paused for ${gap.ms} ms (this attempt allows ${allowed} ms without Temporal)`
          : `Temporal unheard for ${gap.ms} ms (this attempt allows ${allowed} ms)`);
      }
      const silence = this.clock.silenceNow(this.vouchedAt, now);
      if (silence > allowed) this.unconfirmed = silence;
    }
    return undefined;
  }

  /** After `check`: a silence past the allowance going on now, for `confirm` to settle (0: none). */
  get unconfirmedSilence(): number {
    return this.unconfirmed;
  }

  /** Settles an unconfirmed silence: asks Temporal; no answer loses the lease. Undefined while it holds. */
  async confirm(): Promise<string | undefined> {
    const silence = this.unconfirmed;
    if (!silence) return this.lostWhy;
    if (await this.clock.confirm()) return this.check();
    this.lostWhy ??= `Temporal unheard for ${silence} ms (this attempt allows ${this.allowedSilenceMs()} ms)`;
    return this.lostWhy;
  }

  private allowedSilenceMs(): number {
    const i = this.info;
    return i.isLocal ? WORKFLOW_TASK_TIMEOUT_MS * LOCAL_SHARE : (i.heartbeatTimeoutMs ?? 0) * BEAT_SHARE;
  }

  /** The failure a lost attempt ends with: a local one's retries would run in the worker that lost it, so none. */
  failure(what = 'write'): ApplicationFailure {
    return ApplicationFailure.create({
      type: 'Fenced',
      message: `${what} refused: ${this.lostWhy ?? 'the attempt lost its lease'}`,
      nonRetryable: this.info.isLocal,
    });
  }

  /** A User-Agent comment naming the attempt, its execution and the replica, so an audit log ties each request to them. */
  userAgentComment(replica: string): string {
    return `(attempt ${this.key} ${this.info.attempt} ${this.execution} ${replica})`;
  }
}

export function attemptKey(workflowId: string, runId: string, activityId: string): string {
  return createHash('sha256').update(`${workflowId}\n${runId}\n${activityId}`).digest('hex').slice(0, 16);
}

/** Refuses a write whose attempt lost its lease: called just before the request leaves. */
export async function fenceWrite(method: string, path: string): Promise<void> {
  const running = runningActivity.getStore()?.attempt;
  if (!running) return;
  const lease = running.lease;
  let why = lease.check();
  if (!why && lease.unconfirmedSilence) why = await lease.confirm();
  if (!why) return;
  lease.refusedWrites++;
  throw running.lease.failure(`${method} ${path}`);
}

/**
 * The same lease, checked again at once and without waiting (undefined outside an attempt): for
 * the moment a write's bytes can leave, after its socket is assigned and connected. A process
 * stopped between fenceWrite and then (SIGSTOP during a TLS handshake) would otherwise send them
 * on waking, its lease lost meanwhile. The pause shows in the check's CPU-time sample.
 */
export function leaseRecheck(method: string, path: string): (() => ApplicationFailure | undefined) | undefined {
  const running = runningActivity.getStore()?.attempt;
  if (!running) return undefined;
  const lease = running.lease;
  return () => {
    if (!lease.check()) return undefined;
    lease.refusedWrites++;
    return lease.failure(`${method} ${path}`);
  };
}

/** The User-Agent a request goes out with: inside an attempt, with the attempt named. */
export function attemptUserAgent(userAgent: string): string {
  const running = runningActivity.getStore()?.attempt;
  return running ? `${userAgent} ${running.lease.userAgentComment(running.replica)}` : userAgent;
}

/** Heartbeat bookkeeping for the fence: see AttemptLease.beat. */
export function noteBeat(): void {
  runningActivity.getStore()?.attempt?.lease.beat();
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
