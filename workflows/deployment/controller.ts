/**
 * The decision of one Deployment reconcile, modelled on upstream's syncDeployment
 * (pkg/controller/deployment/deployment_controller.go, kube-controller-manager v1.35). Runs inside Temporal
 * workflow code: no I/O, no clocks, no randomness, no Node built-ins. Time comes in as `now` (epoch ms).
 *
 * planDeployment replays one upstream sync against an in-memory copy of the Deployment and its
 * ReplicaSets and returns the writes that sync would get through (see Round in round.ts).
 */
import { isEverythingSelector, selectorError } from '../common/selector';
import { rolloutRecreate } from './recreate';
import { rolloutRolling } from './rolling';
import { EndOfSync, type RS, Round } from './round';
import { checkPausedConditions, getAllAndSyncRevision, isScalingEvent, sync, syncDeploymentStatus } from './sync';
import type { DeploymentPlan, PlanDeploymentInput } from './types';

// Here, not in sync.ts: upstream's syncDeployment is in deployment_controller.go and dispatches to rolling/recreate, which build on sync.ts.
/**
 * One reconcile of a Deployment (upstream's syncDeployment), in upstream's order:
 *  - an invalid selector: nothing; an empty selector: only observedGeneration (upstream refuses to select all);
 *  - being deleted: revision sync and status only;
 *  - Progressing Unknown DeploymentPaused / DeploymentResumed on pause / resume (with a progress deadline);
 *  - paused: scaling, history cleanup and status, no rollout;
 *  - a scaling event (desired-replicas annotation of an active RS differs from replicas): scaling and status;
 *  - otherwise a Recreate or RollingUpdate rollout step, then status with Progressing, and history cleanup
 *    once complete.
 * The plan holds the writes that sync gets through, in order; the caller runs them, re-observes and plans again.
 */
export function planDeployment(input: PlanDeploymentInput): DeploymentPlan {
  const d0 = input.deployment;
  if (selectorError(d0.selector) !== undefined) return { actions: [] };
  const rsList: RS[] = input.replicaSets.map((rs) => ({ ...rs, annotations: { ...(rs.annotations ?? {}) }, version: 0 }));
  const r = new Round(d0, rsList, input.oldPodsRunning, input.now, input.upstreamTemplateHash);
  if (isEverythingSelector(d0.selector)) {
    if (d0.status.observedGeneration < d0.generation) {
      r.d.status.observedGeneration = d0.generation;
      r.writeDeployment('Deployment selects all pods (a non-empty selector is required)');
    }
    return r.plan();
  }
  try {
    if (r.d.deletionTimestamp) {
      const { newRS, oldRSs } = getAllAndSyncRevision(r, false);
      syncDeploymentStatus(r, [...oldRSs, newRS], newRS, 'Deployment is being deleted');
      return r.plan();
    }
    checkPausedConditions(r);
    if (r.d.paused) {
      sync(r);
      return r.plan();
    }
    const first = getAllAndSyncRevision(r, false);
    if (isScalingEvent(r.d, [...first.oldRSs, ...(first.newRS ? [first.newRS] : [])])) {
      sync(r);
      return r.plan();
    }
    if (r.d.strategy.type === 'Recreate') rolloutRecreate(r);
    else rolloutRolling(r);
  } catch (e) {
    if (!(e instanceof EndOfSync)) throw e;
  }
  return r.plan();
}
