/**
 * The feature gates the ReplicaSet and ReplicationController controllers consult, applied to what
 * they decide: off, PodDeletionCost ranks pods on scale-down as if none carried the
 * pod-deletion-cost annotation, and DeploymentReplicaSetTerminatingReplicas leaves
 * status.terminatingReplicas out (both beta and on by default in 1.35).
 */
import type { PodSummary, ReplicaStatus } from './types';

export type ReplicaOwnerGate = 'PodDeletionCost' | 'DeploymentReplicaSetTerminatingReplicas';

/** The pods as the scale-down ranking should see them. */
export function podsForRanking(pods: PodSummary[], gatesOff: readonly ReplicaOwnerGate[] | undefined): PodSummary[] {
  return gatesOff?.includes('PodDeletionCost') ? pods.map((p) => ({ ...p, deletionCost: 0 })) : pods;
}

/** The status as it is written. */
export function statusForGates(status: ReplicaStatus, gatesOff: readonly ReplicaOwnerGate[] | undefined): ReplicaStatus {
  if (!gatesOff?.includes('DeploymentReplicaSetTerminatingReplicas')) return status;
  const { terminatingReplicas: _dropped, ...rest } = status;
  return rest;
}
