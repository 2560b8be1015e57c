/**
 * One Recreate step, modelled on upstream's pkg/controller/deployment/recreate.go: old ReplicaSets to zero,
 * wait until their pods are gone, then the new ReplicaSet to full size. Runs inside Temporal workflow code:
 * no I/O, no clocks, no randomness, no Node built-ins.
 */
import { syncRolloutStatus } from './progress';
import type { RS, Round } from './round';
import { cleanupDeployment, getAllAndSyncRevision, scaleRSIfNeeded } from './sync';
import { deploymentComplete, isActive, sum } from './util';

export function rolloutRecreate(r: Round): void {
  const d = r.d;
  let { newRS, oldRSs } = getAllAndSyncRevision(r, false);
  let allRSs: (RS | undefined)[] = [...oldRSs, newRS];
  let scaledDown = false;
  for (const rs of oldRSs.filter(isActive)) {
    if (scaleRSIfNeeded(r, rs, 0, 'Recreate: old ReplicaSets go to 0 first').scaled) scaledDown = true;
  }
  if (scaledDown) return syncRolloutStatus(r, allRSs, newRS, 'scaled down old ReplicaSets');
  const oldRunning = sum(oldRSs, (rs) => rs.status.replicas) > 0 || r.oldPodsRunning > 0;
  if (oldRunning) return syncRolloutStatus(r, allRSs, newRS, 'waiting for old pods to stop');
  if (!newRS) {
    ({ newRS, oldRSs } = getAllAndSyncRevision(r, true));
    allRSs = [...oldRSs, newRS];
  }
  scaleRSIfNeeded(r, newRS as RS, d.replicas, 'Recreate: old pods are gone');
  if (deploymentComplete(d, d.status)) cleanupDeployment(r, oldRSs);
  syncRolloutStatus(r, allRSs, newRS, 'recreate');
}
