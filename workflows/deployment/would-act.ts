import { claimAll } from '../common/controller-ref';
import type { DeploymentObservation } from './cache';
import { planDeployment } from './controller';
import { findNewReplicaSet } from './util';

/**
 * Would the Deployment's workflow call an activity, or set a timer, if it reconciled now on this
 * observation? The steps of its reconcile in their order: claim (adopt or release), then one
 * round of upstream's syncDeployment. A round that writes nothing but asks to look again later
 * (the progress deadline's check) counts as acting: the gate then sends, so the timer is the one
 * this view asks for. The informer's signal gate asks it of the cache's snapshot;
 * test/workflow/deployment-gate.test.ts holds the two to each other.
 */
export function deploymentWouldAct(seen: DeploymentObservation, now: number): boolean {
  const d = seen.deployment;
  if (!d) return true;
  const claim = claimAll(d, seen.replicaSets);
  if (claim.adopt.length || claim.release.length) return true;
  const newRS = findNewReplicaSet(d, claim.owned);
  const oldPodsRunning = claim.owned
    .filter((rs) => rs.uid !== newRS?.uid)
    .reduce((n, rs) => n + (seen.activePodsByReplicaSet[rs.uid] ?? 0), 0);
  const plan = planDeployment({ deployment: d, replicaSets: claim.owned, oldPodsRunning, now, upstreamTemplateHash: true });
  return plan.actions.length > 0 || plan.requeueAfterMs !== undefined;
}
