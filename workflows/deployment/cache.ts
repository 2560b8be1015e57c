import { newerVersion } from '../common/resource-version';
import type { DeploymentAction, DeploymentView, ReplicaSetView } from './types';

/**
 * A Deployment, the ReplicaSets it controls or may adopt and their active pods: read from the API
 * by observeDeployment, or taken from the shared informer cache and sent with the watch's signal.
 */
export interface DeploymentObservation {
  deployment?: DeploymentView;
  /** ReplicaSets it controls, plus orphans its selector matches (adoption candidates) */
  replicaSets: ReplicaSetView[];
  /** pods that are neither Succeeded nor Failed, per controlling ReplicaSet UID (Recreate waits on them) */
  activePodsByReplicaSet: Record<string, number>;
  /**
   * As of which resourceVersions: for a cache snapshot, how far the cache's Deployment and
   * ReplicaSet watches had got; for an API read, the Deployment's own version and the newest of
   * the ReplicaSets read ('0' for none).
   */
  versions?: { deployments: string; replicaSets: string };
}

/**
 * What the workflow has written or read that a cache snapshot must already include before it can
 * stand in for an API read (read-your-writes, as upstream's informer-fed controller gets by waiting
 * for its own update events): minimum watch positions, ReplicaSets it deleted that must be gone,
 * and `unknown` after a write whose outcome it cannot date (only an API read settles that).
 */
export interface CacheFloor {
  deployments?: string;
  replicaSets?: string;
  deletedReplicaSets?: string[];
  unknown?: boolean;
}

const later = (a: string | undefined, b: string | undefined): string | undefined => (!a ? b : !b ? a : newerVersion(b, a) ? b : a);
const atLeast = (have: string, need: string | undefined): boolean => !need || have === need || newerVersion(have, need);

/** After an API read, a snapshot must be at least as new as what was read. */
export function floorAfterRead(floor: CacheFloor, read: DeploymentObservation): CacheFloor {
  return { deployments: later(floor.deployments, read.versions?.deployments), replicaSets: later(floor.replicaSets, read.versions?.replicaSets) };
}

/** After one of the workflow's writes, with the version it produced (if the API said). */
export function floorAfterWrite(floor: CacheFloor, action: DeploymentAction, result: { ok: boolean; resourceVersion?: string }): CacheFloor {
  if (!result.ok) return { ...floor, unknown: true };
  if (action.type === 'deleteReplicaSet') return { ...floor, deletedReplicaSets: [...(floor.deletedReplicaSets ?? []), action.uid] };
  if (!result.resourceVersion) return { ...floor, unknown: true };
  const onDeployment = action.type === 'updateDeploymentAnnotations' || action.type === 'updateDeploymentStatus';
  return onDeployment
    ? { ...floor, deployments: later(floor.deployments, result.resourceVersion) }
    : { ...floor, replicaSets: later(floor.replicaSets, result.resourceVersion) };
}

/** Can this snapshot be planned from instead of reading the API? */
export function snapshotServes(s: DeploymentObservation | undefined, floor: CacheFloor): boolean {
  if (!s?.versions || !s.deployment || floor.unknown) return false;
  if (!atLeast(s.versions.deployments, floor.deployments) || !atLeast(s.versions.replicaSets, floor.replicaSets)) return false;
  const gone = new Set(floor.deletedReplicaSets ?? []);
  return !s.replicaSets.some((rs) => gone.has(rs.uid) && !rs.deletionTimestamp);
}

/** The newer of two snapshots (signals arrive in order, but a relist after a failover may be older than a merged event). */
export function newerSnapshot(a: DeploymentObservation | undefined, b: DeploymentObservation): DeploymentObservation {
  if (!a?.versions || !b.versions) return b;
  const older = newerVersion(a.versions.deployments, b.versions.deployments) || newerVersion(a.versions.replicaSets, b.versions.replicaSets);
  return older ? a : b;
}
