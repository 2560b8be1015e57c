/**
 * The rollout status of a Deployment, modelled on upstream's pkg/controller/deployment/progress.go: the
 * Progressing condition against the progress deadline, ReplicaFailure mirrored from the ReplicaSets, and
 * when to look again for a deadline that has not passed yet. Runs inside Temporal workflow code: no I/O,
 * no clocks, no randomness, no Node built-ins. Time comes in as `now` (epoch ms).
 */
import { parseTime } from '../replicaset/logic';
import type { RS, Round } from './round';
import { calculateDeploymentStatus } from './sync';
import type { DeploymentCondition, DeploymentStatus, DeploymentView, ReplicaSetView } from './types';
import {
  CONDITION_PROGRESSING,
  CONDITION_REPLICA_FAILURE,
  REASON_NEW_RS_AVAILABLE,
  REASON_RS_UPDATED,
  REASON_TIMED_OUT,
  deploymentComplete,
  deploymentProgressing,
  deploymentStatusEqual,
  deploymentTimedOut,
  getCondition,
  hasProgressDeadline,
  newCondition,
  removeCondition,
  setCondition,
} from './util';

/** ReplicaFailure conditions of the new ReplicaSet, else of any ReplicaSet, as Deployment conditions. */
function replicaFailures(allRSs: readonly (ReplicaSetView | undefined)[], newRS: ReplicaSetView | undefined): DeploymentCondition[] {
  const convert = (rs: ReplicaSetView): DeploymentCondition[] =>
    (rs.status.conditions ?? [])
      .filter((c) => c.type === CONDITION_REPLICA_FAILURE)
      .map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
        lastUpdateTime: c.lastTransitionTime,
        lastTransitionTime: c.lastTransitionTime,
      }));
  if (newRS) {
    const own = convert(newRS);
    if (own.length > 0) return own;
  }
  const out: DeploymentCondition[] = [];
  for (const rs of allRSs) if (rs) out.push(...convert(rs));
  return out;
}

/**
 * Upstream's syncRolloutStatus computation: calculateDeploymentStatus plus the Progressing condition
 * (NewReplicaSetAvailable when complete, ReplicaSetUpdated when the status moved forward — refreshing
 * lastUpdateTime and keeping a True condition's lastTransitionTime — ProgressDeadlineExceeded when the
 * condition went stale past the deadline; left alone once complete with nothing old left; removed when
 * there is no deadline), and ReplicaFailure mirrored from the ReplicaSets.
 */
export function calculateRolloutStatus(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView | undefined,
  now: number,
): DeploymentStatus {
  const s = calculateDeploymentStatus(d, allRSs, newRS, now);
  const deadline = hasProgressDeadline(d);
  if (!deadline) removeCondition(s, CONDITION_PROGRESSING);
  const current = getCondition(d.status, CONDITION_PROGRESSING);
  const complete = s.replicas === s.updatedReplicas && current !== undefined && current.reason === REASON_NEW_RS_AVAILABLE;
  if (deadline && !complete) {
    if (deploymentComplete(d, s)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" has successfully progressed.` : `Deployment "${d.name}" has successfully progressed.`;
      setCondition(s, newCondition(CONDITION_PROGRESSING, 'True', REASON_NEW_RS_AVAILABLE, msg, now));
    } else if (deploymentProgressing(d, s)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" is progressing.` : `Deployment "${d.name}" is progressing.`;
      const cond = newCondition(CONDITION_PROGRESSING, 'True', REASON_RS_UPDATED, msg, now);
      if (current) {
        if (current.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
        removeCondition(s, CONDITION_PROGRESSING);
      }
      setCondition(s, cond);
    } else if (deploymentTimedOut(d, s, now)) {
      const msg = newRS ? `ReplicaSet "${newRS.name}" has timed out progressing.` : `Deployment "${d.name}" has timed out progressing.`;
      setCondition(s, newCondition(CONDITION_PROGRESSING, 'False', REASON_TIMED_OUT, msg, now));
    }
  }
  const failures = replicaFailures(allRSs, newRS);
  if (failures.length > 0) setCondition(s, failures[0]);
  else removeCondition(s, CONDITION_REPLICA_FAILURE);
  return s;
}

/**
 * Upstream's requeueStuckDeployment: when a rollout with a deadline is neither complete nor timed out,
 * how long until its Progressing condition should be checked for the deadline (deadline + 1 s, as upstream
 * waits one second past it; at least 1 s). Undefined when no check is needed. `newStatus` defaults to the
 * Deployment's status.
 */
export function requeueForProgress(d: DeploymentView, now: number, newStatus: DeploymentStatus = d.status): number | undefined {
  const cond = getCondition(d.status, CONDITION_PROGRESSING);
  if (!hasProgressDeadline(d) || !cond) return undefined;
  if (deploymentComplete(d, newStatus) || cond.reason === REASON_TIMED_OUT) return undefined;
  const from = parseTime(cond.lastUpdateTime);
  if (from === undefined) return 1000;
  const after = from + (d.progressDeadlineSeconds as number) * 1000 - now;
  return Math.max(after, 0) + 1000;
}

/** syncRolloutStatus: status with Progressing and ReplicaFailure; when unchanged, maybe a deadline requeue. */
export function syncRolloutStatus(r: Round, allRSs: readonly (RS | undefined)[], newRS: RS | undefined, why: string): void {
  const s = calculateRolloutStatus(r.d, allRSs, newRS, r.now);
  if (deploymentStatusEqual(r.d.status, s)) {
    r.requeueAfterMs = requeueForProgress(r.d, r.now, s);
    return;
  }
  r.d.status = s;
  r.writeDeployment(`rollout status (${why})`);
}
