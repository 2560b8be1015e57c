import { podsForRanking, statusForGates, type ReplicaOwnerGate } from './gates';
import { DEFAULT_BURST_REPLICAS, calculateStatus, classifyPods, filterActivePods, isControlledBy, planReplicas, statusEqual } from './logic';
import type { PodSummary, ReplicaOwner } from './types';

export interface WouldActOptions {
  burstReplicas?: number;
  gatesOff?: readonly ReplicaOwnerGate[];
  now: number;
}

/**
 * Would the owner's workflow call an activity if it reconciled now on `pods` (its own pods and the
 * orphans its selector matches)? The same steps, in the same order, as its reconcile: adopt or
 * release, create or delete, then write a status that differs. The informer's signal gate asks it
 * of the shared cache; test/workflow/replicaset-gate.test.ts holds the two to each other.
 */
export function replicaOwnerWouldAct(owner: ReplicaOwner, pods: readonly PodSummary[], o: WouldActOptions): boolean {
  const classes = classifyPods(owner, pods);
  // an unparseable selector is not managed: the workflow does nothing with it
  if (classes.selectorError) return false;
  if (classes.toAdopt.length || classes.toRelease.length) return true;
  const plan = planReplicas(owner, filterActivePods(podsForRanking(classes.activeOwned, o.gatesOff)), { burstReplicas: o.burstReplicas ?? DEFAULT_BURST_REPLICAS, now: o.now });
  if (plan.action !== 'none') return true;
  const owned = pods.filter((p) => isControlledBy(p, owner));
  const status = statusForGates(calculateStatus(owner, classes.activeOwned, owned, undefined, o.now), o.gatesOff);
  return !statusEqual(status, owner.status);
}
