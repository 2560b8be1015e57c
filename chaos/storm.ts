/**
 * The kill storm: every few seconds a random replica of ours dies by kill -9 and a new one takes
 * its place, while a scenario runs. The gaps and victims come from a seeded generator, so a run
 * that found a bug can be repeated with the same moments (`--seed`).
 */

/** mulberry32: a small, well-mixed 32-bit generator; enough to choose victims and gaps reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface StormPlan {
  kills: number;
  /** the wait before each kill, drawn uniformly from [minGapMs, maxGapMs] */
  minGapMs: number;
  maxGapMs: number;
}

/** One planned kill: after `gapMs`, the replica in slot `victim`. */
export interface PlannedKill {
  gapMs: number;
  victim: number;
}

/** The whole storm, decided up front from the seed: the same seed, the same storm. */
export function planStorm(plan: StormPlan, replicas: number, random: () => number): PlannedKill[] {
  if (replicas < 1) throw new Error('a storm needs at least one replica');
  if (plan.minGapMs > plan.maxGapMs) throw new Error('minGapMs above maxGapMs');
  return Array.from({ length: plan.kills }, () => ({
    gapMs: Math.round(plan.minGapMs + random() * (plan.maxGapMs - plan.minGapMs)),
    victim: Math.min(replicas - 1, Math.floor(random() * replicas)),
  }));
}

/** Waits `ms`, or less when `signal` aborts first; its listener goes with it (a sampler waits on one signal every second). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A replica the storm may kill: only ever one the run started, by its own pid. */
export interface Replica {
  pid: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** What happened at one kill, for the report. */
export interface KillRecord {
  /** ms since the storm started */
  atMs: number;
  victim: number;
  pid: number;
  /** how long the replacement took to be ready */
  replacedAfterMs: number;
}

/**
 * Runs `kills` against the replicas in `slots`: each kill waits its gap, kills the slot's replica
 * with SIGKILL and starts its replacement (awaited, so at most one replica is down at a time, as
 * a supervisor restarting a crashed pod would have it). Stops early when `signal` aborts.
 */
export async function runStorm(slots: Replica[], kills: PlannedKill[], restart: (slot: number) => Promise<Replica>,
  signal: AbortSignal, log: (line: string) => void): Promise<KillRecord[]> {
  const t0 = Date.now();
  const done: KillRecord[] = [];
  for (const k of kills) {
    await pause(k.gapMs, signal);
    if (signal.aborted) break;
    const victim = slots[k.victim];
    const at = Date.now();
    await victim.kill('SIGKILL');
    slots[k.victim] = await restart(k.victim);
    done.push({ atMs: at - t0, victim: k.victim, pid: victim.pid, replacedAfterMs: Date.now() - at });
    log(`kill ${done.length}/${kills.length}: replica ${k.victim} (pid ${victim.pid}) at ${((at - t0) / 1000).toFixed(1)} s, replaced in ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
  return done;
}
