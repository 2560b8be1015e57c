import type { Mode } from '../scenarios/types';

/**
 * The scale curve's sizes. A size is a number of one-replica Deployments: each brings a ReplicaSet
 * and a pod, so a size of 1000 is 3000 objects for the controllers to hold. The scale-up runs at
 * the same object counts (a ReplicaSet scaled from 0 to three pods per Deployment of the size).
 */
export interface CurvePlan {
  sizes: number[];
  /** after the one-replica catch-up, ours catches up again at the largest size with each of these replica counts */
  replicas: number[];
  settleS: number;
  idleS: number;
  quietMs: number;
}

export const OBJECTS_PER_DEPLOYMENT = 3;

export function curvePlan(mode: Mode, sizes?: number[], replicas?: number[]): CurvePlan {
  const base = ({
    // 1000 Deployments is as far as this 2-core machine's whole stack goes in a run of about an hour
    full: { sizes: [100, 300, 1000], replicas: [2, 3], settleS: 15, idleS: 60, quietMs: 10_000 },
    quick: { sizes: [10, 30, 100], replicas: [2], settleS: 5, idleS: 20, quietMs: 5_000 },
    smoke: { sizes: [3, 10], replicas: [2], settleS: 2, idleS: 5, quietMs: 3_000 },
  } satisfies Record<Mode, CurvePlan>)[mode];
  return { ...base, ...(sizes ? { sizes } : {}), ...(replicas ? { replicas } : {}) };
}
