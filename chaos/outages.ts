/**
 * One replica at a time taken out for 20 to 60 s and then let back, with the work it was doing:
 * - pauses: stopped with SIGSTOP and continued, as a long GC pause, a frozen VM or a migration
 *   would hold it;
 * - partitions: its connections to Temporal cut (a relay in front of Temporal per replica) while
 *   it still reaches the API server.
 * Temporal gives its work to another replica meanwhile, so whatever it still sends for that work is
 * stale: the fence (activities/kube/fence.ts) holds it back, and `staleAttemptWrites`
 * (chaos/checks.ts) finds what got out. Seeded as the kill storm is.
 */
import { pause } from './storm';

export interface OutagePlan {
  outages: number;
  /** the wait before each, from the last one's end, drawn uniformly from [minGapMs, maxGapMs] */
  minGapMs: number;
  maxGapMs: number;
  /** how long the replica stays out, drawn uniformly from [minOutMs, maxOutMs] */
  minOutMs: number;
  maxOutMs: number;
}

export interface PlannedOutage {
  gapMs: number;
  victim: number;
  outMs: number;
}

export interface OutageRecord {
  /** ms since the outages began */
  atMs: number;
  victim: number;
  outForMs: number;
}

/** The whole plan, decided up front from the seed. */
export function planOutages(plan: OutagePlan, replicas: number, random: () => number): PlannedOutage[] {
  if (replicas < 2) throw new Error('an outage needs a second replica to take the work over');
  if (plan.minGapMs > plan.maxGapMs || plan.minOutMs > plan.maxOutMs) throw new Error('a minimum above its maximum');
  const draw = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  return Array.from({ length: plan.outages }, () => ({
    gapMs: draw(plan.minGapMs, plan.maxGapMs),
    victim: Math.min(replicas - 1, Math.floor(random() * replicas)),
    outMs: draw(plan.minOutMs, plan.maxOutMs),
  }));
}

/** How a replica is taken out and let back. */
export interface Outage {
  /** e.g. `SIGSTOP`, `cut from Temporal` */
  name: string;
  begin(victim: number): void | Promise<void>;
  end(victim: number): void | Promise<void>;
}

/** SIGSTOP and SIGCONT of the slot's replica, by its own pid (read at the moment: a slot may have a new one). */
export function pauseOf(slots: Array<{ pid: number }>, send: (pid: number, sig: NodeJS.Signals) => void = (pid, sig) => process.kill(pid, sig)): Outage {
  const stopped = new Map<number, number>();
  return {
    name: 'SIGSTOP',
    begin: (v) => {
      stopped.set(v, slots[v].pid);
      send(slots[v].pid, 'SIGSTOP');
    },
    end: (v) => send(stopped.get(v) ?? slots[v].pid, 'SIGCONT'),
  };
}

/**
 * Runs the plan: each outage waits its gap, takes the slot's replica out, waits, and lets it back.
 * It is let back whatever happens (`signal` aborting included): a replica left stopped would hold
 * its ports and its Temporal identity.
 */
export async function runOutages(outage: Outage, plan: PlannedOutage[], signal: AbortSignal, log: (line: string) => void): Promise<OutageRecord[]> {
  const t0 = Date.now();
  const done: OutageRecord[] = [];
  for (const p of plan) {
    await pause(p.gapMs, signal);
    if (signal.aborted) break;
    const at = Date.now();
    await outage.begin(p.victim);
    try {
      await pause(p.outMs, signal);
    } finally {
      await outage.end(p.victim);
    }
    done.push({ atMs: at - t0, victim: p.victim, outForMs: Date.now() - at });
    log(`${outage.name} ${done.length}/${plan.length}: replica ${p.victim} out at ${((at - t0) / 1000).toFixed(1)} s for ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
  return done;
}
