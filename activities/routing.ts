import type { ReplicaOwnerEvent } from '../workflows/replicaset/workflow';

/**
 * Merge two events for one key into one signal (`later` wins where they overlap): a burst of
 * watch events between two flushes costs one signal, and therefore at most one reconcile.
 */
export function mergeReplicaOwnerEvents(earlier: ReplicaOwnerEvent, later: ReplicaOwnerEvent): ReplicaOwnerEvent {
  const pods = new Map<string, NonNullable<ReplicaOwnerEvent['pods']>[number]>();
  const deleted = new Set<string>(earlier.podsDeleted ?? []);
  for (const p of earlier.pods ?? []) pods.set(p.uid, p);
  for (const p of later.pods ?? []) {
    pods.set(p.uid, p);
    deleted.delete(p.uid);
  }
  for (const u of later.podsDeleted ?? []) {
    pods.delete(u);
    deleted.add(u);
  }
  const out: ReplicaOwnerEvent = {};
  const owner = later.owner ?? earlier.owner;
  if (owner) out.owner = owner;
  const gone = later.ownerDeletedUid ?? earlier.ownerDeletedUid;
  if (gone) out.ownerDeletedUid = gone;
  if (pods.size) out.pods = [...pods.values()];
  if (deleted.size) out.podsDeleted = [...deleted];
  if (earlier.relist || later.relist) out.relist = true;
  return out;
}
