import type { Mode } from '../scenarios/types';

/**
 * The continue-as-new threshold's trade (`--history-cut`): ReplicaSets churned alike under ours
 * with the default threshold and with each cut (`run --max-history-events`). A shorter run
 * history is a cheaper replay when a run is rebuilt (a restart, a failover, an eviction), for the
 * price of more continue-as-new.
 */
export interface CutPlan {
  /** one-replica ReplicaSets churned */
  replicaSets: number;
  /**
   * each is churned until its runs together hold this many history events ... (just under a
   * multiple of every threshold tried, the server's 4,096 suggestion included, so that each
   * threshold's open runs are near their longest when the manager restarts: its worst case)
   */
  events: number;
  /** ... or for this long */
  churnS: number;
  /** between two flips of one ReplicaSet's replicas (1 and 0) */
  gapMs: number;
  /** the thresholds tried beside the default (10000: the server's suggestion at 4,096 decides, as before the default was cut) */
  cuts: number[];
}

export function cutPlan(mode: Mode): CutPlan {
  return ({
    full: { replicaSets: 10, events: 3900, churnS: 600, gapMs: 100, cuts: [10000, 2000] },
    quick: { replicaSets: 4, events: 1950, churnS: 240, gapMs: 100, cuts: [10000] },
    smoke: { replicaSets: 2, events: 190, churnS: 60, gapMs: 100, cuts: [100] },
  } satisfies Record<Mode, CutPlan>)[mode];
}
