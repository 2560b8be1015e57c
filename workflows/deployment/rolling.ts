/**
 * One RollingUpdate step, modelled on upstream's pkg/controller/deployment/rolling.go: grow the new
 * ReplicaSet within maxSurge, else shrink the old ones within maxUnavailable, else (once complete) clean up
 * history. Runs inside Temporal workflow code: no I/O, no clocks, no randomness, no Node built-ins.
 */
import { syncRolloutStatus } from './progress';
import { EndOfSync, type RS, type Round } from './round';
import { cleanupDeployment, getAllAndSyncRevision, scaleRSIfNeeded } from './sync';
import type { DeploymentView, ReplicaSetView } from './types';
import { compareByCreation, deploymentComplete, isActive, maxSurge, maxUnavailable, newRSNewReplicas, sortedBy, sum } from './util';

/** One ReplicaSet size change, in the order to apply them. */
export interface ScaleStep {
  name: string;
  from: number;
  to: number;
  why: string;
}

/**
 * The old ReplicaSets' scale-down of one rolling-update round (upstream's reconcileOldReplicaSets), given
 * every ReplicaSet, the active old ones and the new one:
 *  1. maxScaledDown = all pods (spec) - (replicas - maxUnavailable) - unavailable pods of the new RS; stop if <= 0;
 *  2. unhealthy replicas (spec - available) of old RSs go first, oldest RS first, at most maxScaledDown;
 *  3. then old RSs shrink oldest first by however many available pods exceed replicas - maxUnavailable.
 * `error` is set when step 2 meets an RS with more available than spec replicas: upstream then stops
 * (steps already taken stand) and reports nothing scaled down.
 */
export function oldReplicaSetsScaleDown(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  activeOldRSs: readonly ReplicaSetView[],
  newRS: ReplicaSetView,
): { steps: ScaleStep[]; scaledDown: number; error?: string } {
  const steps: ScaleStep[] = [];
  const oldCount = sum(activeOldRSs, (rs) => rs.replicas);
  if (oldCount === 0) return { steps, scaledDown: 0 };
  const allCount = sum(allRSs, (rs) => rs.replicas);
  const mu = maxUnavailable(d);
  const minAvailable = d.replicas - mu;
  const newUnavailable = newRS.replicas - newRS.status.availableReplicas;
  const maxScaledDown = allCount - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return { steps, scaledDown: 0 };

  // working sizes, by name
  const size = new Map<string, number>();
  for (const rs of activeOldRSs) size.set(rs.name, rs.replicas);
  const olds = sortedBy(activeOldRSs, compareByCreation);

  let cleaned = 0;
  for (const rs of olds) {
    if (cleaned >= maxScaledDown) break;
    const spec = size.get(rs.name) as number;
    if (spec === 0) continue;
    if (spec === rs.status.availableReplicas) continue;
    const count = Math.min(maxScaledDown - cleaned, spec - rs.status.availableReplicas);
    const to = spec - count;
    if (to > spec) {
      return {
        steps,
        scaledDown: 0,
        error: `when cleaning up unhealthy replicas, got invalid request to scale down ${rs.namespace}/${rs.name} ${spec} -> ${to}`,
      };
    }
    steps.push({ name: rs.name, from: spec, to, why: `remove ${count} unavailable replica(s) of old ReplicaSet` });
    size.set(rs.name, to);
    cleaned += count;
  }

  // upstream counts availability over the active old RSs and the new one only
  const available = sum(activeOldRSs, (rs) => rs.status.availableReplicas) + newRS.status.availableReplicas;
  let scaled = 0;
  if (available > minAvailable) {
    const target = available - minAvailable;
    for (const rs of olds) {
      if (scaled >= target) break;
      const spec = size.get(rs.name) as number;
      if (spec === 0) continue;
      const count = Math.min(spec, target - scaled);
      const to = spec - count;
      steps.push({
        name: rs.name,
        from: spec,
        to,
        why: `scale down old ReplicaSet (rolling update: ${available} available, at least ${minAvailable} must stay, maxUnavailable ${mu})`,
      });
      size.set(rs.name, to);
      scaled += count;
    }
  }
  return { steps, scaledDown: cleaned + scaled };
}

export function rolloutRolling(r: Round): void {
  const d = r.d;
  const { newRS: maybeNew, oldRSs } = getAllAndSyncRevision(r, true);
  const newRS = maybeNew as RS;
  const allRSs = [...oldRSs, newRS];

  // reconcileNewReplicaSet
  let scaledUp = false;
  if (newRS.replicas > d.replicas) {
    scaledUp = scaleRSIfNeeded(r, newRS, d.replicas, 'new ReplicaSet above replicas').scaled;
  } else if (newRS.replicas < d.replicas) {
    const count = newRSNewReplicas(d, allRSs, newRS);
    if (count.error) throw new EndOfSync(count.error);
    scaledUp = scaleRSIfNeeded(r, newRS, count.replicas, `rolling update, maxSurge ${maxSurge(d)}`).scaled;
  }
  if (scaledUp) return syncRolloutStatus(r, allRSs, newRS, 'scaled up new ReplicaSet');

  // reconcileOldReplicaSets
  const activeOld = oldRSs.filter(isActive);
  const down = oldReplicaSetsScaleDown(d, allRSs, activeOld, newRS);
  const current = new Map<string, RS>(activeOld.map((rs) => [rs.name, rs]));
  for (const step of down.steps) {
    const rs = current.get(step.name) as RS;
    current.set(step.name, scaleRSIfNeeded(r, rs, step.to, step.why).rs);
  }
  if (!down.error && down.scaledDown > 0) return syncRolloutStatus(r, allRSs, newRS, 'scaled down old ReplicaSets');

  if (deploymentComplete(d, d.status)) cleanupDeployment(r, oldRSs);
  syncRolloutStatus(r, allRSs, newRS, 'rolling update');
}
