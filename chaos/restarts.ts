/**
 * Restarts of the parts the managers depend on, mid-scenario: kube-apiserver with etcd under it
 * (every watch breaks and the stores come back from etcd's data), then the Temporal server (every
 * worker poll and every open activity's connection breaks; histories come back from its store).
 * Each part dies by kill -9 and `up` starts it again on its data and its old port; the parts
 * that depend on it (kube-scheduler, kwok) stay up and reconnect, as they would in a cluster.
 */
import { stopProcess } from '../starter/local/processes';
import { up } from '../starter/local/stack';
import { pause } from './storm';

export type RestartedPart = 'etcd' | 'kube-apiserver' | 'temporal';

/** One planned restart: the parts killed together, after a pause from the previous one's end. */
export interface PlannedRestart {
  parts: RestartedPart[];
  afterMs: number;
  /** kept down this long before they start again (an outage, not a restart) */
  holdMs?: number;
}

export interface RestartRecord {
  parts: RestartedPart[];
  /** ms since the restarts began */
  atMs: number;
  /** until every part answered again */
  downForMs: number;
  /** writes by controllers the API server's audit log shows while the parts were down (filled in by the suite) */
  controllerWrites?: number;
}

/** The restarts of one pass: the API server's storage first, then Temporal. */
export function restartPlan(gapMs: number): PlannedRestart[] {
  return [
    { parts: ['etcd', 'kube-apiserver'], afterMs: gapMs },
    { parts: ['temporal'], afterMs: gapMs },
  ];
}

/**
 * Temporal held down for minutes, once in a quick run (2 min) and twice in a full one (2 min, then
 * 5 min, 30 s after the first ended), while the change is under way.
 */
export function temporalOutagePlan(gapMs: number, full: boolean): PlannedRestart[] {
  const two: PlannedRestart = { parts: ['temporal'], afterMs: gapMs, holdMs: 120_000 };
  return full ? [two, { parts: ['temporal'], afterMs: 30_000, holdMs: 300_000 }] : [two];
}

/** Runs the plan against the stack in `dataDir`; stops early when `signal` aborts (a part held down is started again first). */
export async function runRestarts(dataDir: string, plan: PlannedRestart[], signal: AbortSignal, log: (line: string) => void): Promise<RestartRecord[]> {
  const t0 = Date.now();
  const done: RestartRecord[] = [];
  for (const r of plan) {
    await pause(r.afterMs, signal);
    if (signal.aborted) break;
    const at = Date.now();
    for (const part of r.parts) {
      // only ever a process the stack started (its pid file and binary agree), killed at once
      if ((await stopProcess(dataDir, part, 0, 'SIGKILL')) === 'not-running') throw new Error(`${part} is not running in ${dataDir}`);
    }
    await pause(r.holdMs ?? 0, signal);
    // `up` starts what died on the same data and ports; what depends on it (the scheduler, kwok's
    // kubelets) keeps running, as it would in a cluster whose API server restarts
    await up({ dataDir, restartDependents: false, log: (l) => log(`[stack] ${l}`) });
    done.push({ parts: r.parts, atMs: at - t0, downForMs: Date.now() - at });
    log(`restart ${done.length}/${plan.length}: ${r.parts.join(' + ')} at ${((at - t0) / 1000).toFixed(1)} s, back in ${((Date.now() - at) / 1000).toFixed(1)} s`);
  }
  return done;
}
