/**
 * Pauses: a replica of ours stopped with SIGSTOP for 20 to 60 s and then continued, as a long GC
 * pause, a frozen VM or a migration would hold it. Unlike a kill it comes back with the work it was
 * doing: Temporal has given that work to another replica by then, so whatever it still sends is
 * stale (the fence in activities/kube/fence.ts holds it back; `staleAttemptWrites` in
 * chaos/checks.ts finds what got out). Seeded as the kill storm is.
 */
import { pause } from './storm';

export interface PausePlan {
  pauses: number;
  /** the wait before each pause, drawn uniformly from [minGapMs, maxGapMs] */
  minGapMs: number;
  maxGapMs: number;
  /** how long a replica stays stopped, drawn uniformly from [minStopMs, maxStopMs] */
  minStopMs: number;
  maxStopMs: number;
}

export interface PlannedPause {
  gapMs: number;
  victim: number;
  stopMs: number;
}

export interface PauseRecord {
  /** ms since the pauses began */
  atMs: number;
  victim: number;
  pid: number;
  stoppedForMs: number;
}

/** The whole plan, decided up front from the seed. */
export function planPauses(plan: PausePlan, replicas: number, random: () => number): PlannedPause[] {
  if (replicas < 2) throw new Error('pauses need a second replica to take the work over');
  if (plan.minGapMs > plan.maxGapMs || plan.minStopMs > plan.maxStopMs) throw new Error('a minimum above its maximum');
  const draw = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  return Array.from({ length: plan.pauses }, () => ({
    gapMs: draw(plan.minGapMs, plan.maxGapMs),
    victim: Math.min(replicas - 1, Math.floor(random() * replicas)),
    stopMs: draw(plan.minStopMs, plan.maxStopMs),
  }));
}

/** A replica to pause: one the run started, by its own pid. */
export interface Pausable {
  pid: number;
}

/**
 * Runs the plan: each pause waits its gap, stops the slot's replica, waits, and continues it. The
 * replica is continued whatever happens (`signal` aborting included): a stopped process left behind
 * would hold its ports and its Temporal identity.
 */
export async function runPauses(slots: Pausable[], plan: PlannedPause[], signal: AbortSignal, log: (line: string) => void,
  send: (pid: number, sig: NodeJS.Signals) => void = (pid, sig) => process.kill(pid, sig)): Promise<PauseRecord[]> {
  const t0 = Date.now();
  const done: PauseRecord[] = [];
  for (const p of plan) {
    await pause(p.gapMs, signal);
    if (signal.aborted) break;
    const { pid } = slots[p.victim];
    const at = Date.now();
    send(pid, 'SIGSTOP');
    try {
      await pause(p.stopMs, signal);
    } finally {
      send(pid, 'SIGCONT');
    }
    done.push({ atMs: at - t0, victim: p.victim, pid, stoppedForMs: Date.now() - at });
    log(`pause ${done.length}/${plan.length}: replica ${p.victim} (pid ${pid}) stopped at ${((at - t0) / 1000).toFixed(1)} s for ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
  return done;
}
