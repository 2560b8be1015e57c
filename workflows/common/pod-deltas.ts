/** The pod part of a routed event: pods added or changed (latest state) and UIDs deleted. */
export interface PodDeltas<P extends { uid: string }> {
  pods?: P[];
  podsDeleted?: string[];
}

/**
 * Fold two batches of pod deltas for one owner into one, `later` winning: a pod changed after it
 * was reported deleted is live again, a pod deleted after a change is only deleted.
 */
export function mergePodDeltas<P extends { uid: string }>(earlier: PodDeltas<P>, later: PodDeltas<P>): PodDeltas<P> {
  const pods = new Map<string, P>();
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
  return { ...(pods.size ? { pods: [...pods.values()] } : {}), ...(deleted.size ? { podsDeleted: [...deleted] } : {}) };
}
