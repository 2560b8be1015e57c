import { mergePodDeltas } from '../../workflows/common/pod-deltas';
import type { ReplicaOwnerEvent } from '../../workflows/replicaset/workflow';

/**
 * Merge two events for one key into one signal (`later` wins where they overlap): a burst of
 * watch events between two flushes costs one signal, and therefore at most one reconcile.
 */
export function mergeReplicaOwnerEvents(earlier: ReplicaOwnerEvent, later: ReplicaOwnerEvent): ReplicaOwnerEvent {
  // a later snapshot already holds what earlier pod deltas said; deltas after a snapshot stay, applied on top of it
  const out: ReplicaOwnerEvent = later.snapshot ? mergePodDeltas({}, later) : mergePodDeltas(earlier, later);
  const snapshot = later.snapshot ?? earlier.snapshot;
  if (snapshot) out.snapshot = snapshot;
  const owner = later.owner ?? earlier.owner;
  if (owner) out.owner = owner;
  const gone = later.ownerDeletedUid ?? earlier.ownerDeletedUid;
  if (gone) out.ownerDeletedUid = gone;
  if (earlier.relist || later.relist) out.relist = true;
  return out;
}
