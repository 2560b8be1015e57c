/*
 * Controller references and the claim step, written once for every owner that claims by selector
 * (ReplicaSet and ReplicationController claim pods, Job claims pods, Deployment claims ReplicaSets).
 * Upstream has one such step too (pkg/controller's controller ref manager); these are its rules,
 * as pure functions, so a workflow can decide in its own code and an activity can apply them to
 * what it just listed.
 */
import type { LabelSelector, OwnerRef } from './meta';
import { selectorMatches } from './selector';

/** The reference marked controller, if any: an object has at most one. */
export function controllerRef(refs: readonly OwnerRef[] | undefined): OwnerRef | undefined {
  return refs?.find((r) => r.controller === true);
}

/** The owner doing the claiming. */
export interface Claimant {
  namespace: string;
  uid: string;
  deletionTimestamp?: string;
  selector: LabelSelector;
}

/** What claiming looks at in a candidate object. */
export interface ClaimCandidate {
  namespace: string;
  labels?: Record<string, string>;
  ownerReferences?: readonly OwnerRef[];
  deletionTimestamp?: string;
}

/**
 * What the owner does with one object:
 * - `owned`: it controls the object and its selector matches (kept even while the owner is being deleted, because keeping takes no write);
 * - `adopt`: an orphan that the selector matches, neither side being deleted;
 * - `release`: it controls the object but the selector no longer matches, and it is not being deleted;
 * - `ignore`: anything else (someone else's, or an owner being deleted that would have to write).
 *
 * The caller checks the selector is valid first: upstream does not claim with an invalid selector at all.
 */
export type ClaimDecision = 'owned' | 'adopt' | 'release' | 'ignore';

export function claimDecision(owner: Claimant, obj: ClaimCandidate): ClaimDecision {
  // owner references never cross namespaces; upstream's callers only list the owner's own
  if (owner.namespace && owner.namespace !== obj.namespace) return 'ignore';
  const ref = controllerRef(obj.ownerReferences);
  const matches = selectorMatches(owner.selector, obj.labels ?? {});
  if (ref) {
    if (ref.uid !== owner.uid) return 'ignore';
    if (matches) return 'owned';
    return owner.deletionTimestamp ? 'ignore' : 'release';
  }
  return owner.deletionTimestamp || !matches || obj.deletionTimestamp ? 'ignore' : 'adopt';
}

/** Every candidate sorted by its decision; `ignore`d ones are left out. */
export function claimAll<T extends ClaimCandidate>(owner: Claimant, objs: readonly T[]): { owned: T[]; adopt: T[]; release: T[] } {
  const out = { owned: [] as T[], adopt: [] as T[], release: [] as T[] };
  for (const o of objs) {
    const d = claimDecision(owner, o);
    if (d !== 'ignore') out[d].push(o);
  }
  return out;
}
