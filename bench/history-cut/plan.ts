import type { Mode } from '../scenarios/types';

/**
 * The continue-as-new threshold's trade (`--history-cut`): a fleet of one-replica Deployments
 * churned alike under ours with the default threshold and with each cut
 * (`run --max-history-events`): a shorter run history is a cheaper replay when a run is rebuilt
 * (a restart, a failover, an eviction), for the price of more continue-as-new.
 */
export interface CutPlan {
  /** one-replica Deployments churned */
  deployments: number;
  /** flips of each Deployment's replicas between 1 and 2 */
  flips: number;
  /** between two flips of one Deployment */
  gapMs: number;
  /** the thresholds tried beside the default */
  cuts: number[];
  quietMs: number;
}

export function cutPlan(mode: Mode): CutPlan {
  return ({
    full: { deployments: 20, flips: 400, gapMs: 100, cuts: [2000, 1000], quietMs: 10_000 },
    quick: { deployments: 8, flips: 150, gapMs: 100, cuts: [1000], quietMs: 5_000 },
    smoke: { deployments: 2, flips: 20, gapMs: 100, cuts: [100], quietMs: 3_000 },
  } satisfies Record<Mode, CutPlan>)[mode];
}
