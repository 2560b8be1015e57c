import { sleep } from '@temporalio/workflow';

/*
 * The object loop's timers (resync, requeue, backoff), kept instead of re-made at every turn.
 *
 * A wait of `condition(fn, ms)` starts a timer and, when a signal ends the wait first, cancels
 * it: two history events and two commands at every signal-driven reconcile, about a quarter of
 * a reconcile's events in the restart catch-up. Here a timer, once started, runs to its end and is
 * never cancelled; a wake wanted at or after one already pending needs no timer of its own. As
 * upstream's delaying queue keeps the earliest time asked for a key, the earliest pending timer
 * wins: a requeue asked for before a signal still fires (one more reconcile, never one fewer).
 */

/** Does a wake at `wantAt` need a timer of its own, with these fire times pending? (pure) */
export function needsTimer(pendingAt: readonly number[], wantAt: number): boolean {
  return !pendingAt.some((at) => at <= wantAt);
}

/** What the timers that fired since the last take were. */
export interface FiredTimers {
  /** one of them was asked for as a resync (not a requeue, a backoff or the run's age) */
  resync: boolean;
}

export class WakeTimers {
  private readonly pendingAt: number[] = [];
  private fired = false;
  private firedResync = false;
  private firedDue = 0;

  /**
   * Asks to be woken at `at` (ms, workflow time); starts a timer only if none pending fires by then.
   * `resync`: the wake is the resync's, so that its firing can be told from an earlier requeue's.
   */
  wakeAt(at: number, now: number, resync = false): void {
    if (!needsTimer(this.pendingAt, at)) return;
    this.pendingAt.push(at);
    void sleep(Math.max(1, at - now)).then(() => {
      this.pendingAt.splice(this.pendingAt.indexOf(at), 1);
      this.fired = true;
      if (resync) this.firedResync = true;
      this.firedDue = Math.max(this.firedDue, at);
    }, () => undefined); // only a cancelled workflow cancels it, and then nothing waits for it
  }

  /** Once after any timer fired (the loop reconciles then): what fired; undefined if none did. */
  takeFired(): FiredTimers | undefined {
    if (!this.fired) return undefined;
    const out = { resync: this.firedResync };
    this.fired = false;
    this.firedResync = false;
    return out;
  }

  /** Whether a timer fired and was not taken yet, for the loop's wait condition. */
  get hasFired(): boolean {
    return this.fired;
  }

  /**
   * The latest fire time (ms, workflow time) of the timers that fired: the workflow's clock is at
   * least this, whatever Date.now() says (see ObjectLoop.onWake).
   */
  get firedDueAt(): number {
    return this.firedDue;
  }

  /** When the earliest pending timer fires, if any. */
  get nextAt(): number | undefined {
    return this.pendingAt.length ? Math.min(...this.pendingAt) : undefined;
  }
}
