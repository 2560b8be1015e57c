import type { Mode } from '../scenarios/types';

/**
 * The workflow-cache trade (`--cache-cap`): one fleet size, upstream once, ours once with every
 * run cached and once per cap in `caps` (`run --max-cached-workflows`, per controller).
 * The uncapped run passes a cache above the fleet (`uncapped`).
 * A size is a number of one-replica Deployments, so each controller holds `size` runs: caps below
 * it force evictions, and a reconcile of an evicted run replays its history first.
 */
export interface CapPlan {
  size: number;
  caps: number[];
  /** pods deleted one at a time, each of another Deployment, for the reaction figures */
  deletes: number;
  settleS: number;
  idleS: number;
  quietMs: number;
  /**
   * the replay-cost history: one ReplicaSet churned until its history has this many events (below
   * 4,096, where the Temporal server suggests continuing as new and a run does) ...
   */
  replayEvents: number;
  /** ... or for this long */
  replayChurnS: number;
}

export function capPlan(mode: Mode, size?: number, caps?: number[]): CapPlan {
  const base = ({
    full: { size: 1000, caps: [500, 100], deletes: 20, settleS: 15, idleS: 60, quietMs: 10_000, replayEvents: 4000, replayChurnS: 240 },
    quick: { size: 100, caps: [50, 10], deletes: 10, settleS: 5, idleS: 20, quietMs: 5_000, replayEvents: 2000, replayChurnS: 90 },
    smoke: { size: 10, caps: [4], deletes: 3, settleS: 2, idleS: 5, quietMs: 3_000, replayEvents: 200, replayChurnS: 30 },
  } satisfies Record<Mode, CapPlan>)[mode];
  return { ...base, ...(size ? { size } : {}), ...(caps ? { caps } : {}) };
}

/** The cache the uncapped run passes: more than a controller's runs at this size, so none is evicted. */
export function uncapped(size: number): number {
  return 2 * size + 100;
}
