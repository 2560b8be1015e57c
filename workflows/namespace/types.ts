/**
 * Payloads that cross the workflow boundary for the namespace controller: a compact view of the
 * Namespace, what discovery found, and what one resource's content deletion observed. The
 * decisions made from them live in ./logic.ts.
 */

/** The spec finalizer this controller owns; the namespace goes once it and every other one are gone. */
export const NAMESPACE_FINALIZER = 'kubernetes';

export type NamespaceConditionType =
  | 'NamespaceDeletionDiscoveryFailure'
  | 'NamespaceDeletionGroupVersionParsingFailure'
  | 'NamespaceDeletionContentFailure'
  | 'NamespaceContentRemaining'
  | 'NamespaceFinalizersRemaining';

/** core/v1 NamespaceCondition; conditions of other types written by others pass through untouched. */
export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** What the controller reads of a Namespace. */
export interface NamespaceView {
  name: string;
  uid: string;
  resourceVersion: string;
  deletionTimestamp?: string; // RFC 3339
  /** status.phase: Active or Terminating */
  phase?: string;
  /** spec.finalizers */
  finalizers: string[];
  conditions: NamespaceCondition[];
}

/** One namespaced resource the API serves at its group's preferred version and that can be deleted. */
export interface NamespacedResource {
  /** '' for the core group */
  group: string;
  version: string;
  /** plural name, e.g. 'deployments' */
  resource: string;
  kind: string;
  /** list is served: remaining content can be counted (without it the resource is taken as empty, as upstream) */
  list: boolean;
  /** deletecollection is served: one call empties it; otherwise each item is deleted */
  deleteCollection: boolean;
}

/** A group version whose discovery failed (an aggregated API that is down, say). */
export interface FailedGroupVersion {
  groupVersion: string;
  message: string;
}

export interface NamespacedDiscovery {
  resources: NamespacedResource[];
  /** group versions that could not be read; their resources are left for a later pass */
  failedGroups: FailedGroupVersion[];
  /** group versions whose name could not be parsed (upstream's GroupVersionParsingFailure) */
  unparsable: string[];
  /** discovery failed as a whole (e.g. /apis answered 503): nothing was found this pass */
  failure?: string;
}

export interface DeleteContentRequest {
  namespace: string;
  resource: NamespacedResource;
}

/**
 * What deleteNamespaceContent observed for one resource: the delete it issued and the content
 * listed after it. Raw facts only; classifyContent turns them into an outcome.
 */
export interface ContentObservation {
  resource: NamespacedResource;
  /** how the content was deleted: one collection call, item by item, or not at all (verbs not served) */
  method: 'deletecollection' | 'each' | 'none';
  /** items deleted one by one (method 'each') */
  deletedItems?: number;
  /** items listed after the delete */
  remaining: number;
  /** finalizer -> how many remaining items carry it */
  finalizers: Record<string, number>;
  /**
   * pods only: the longest terminationGracePeriodSeconds among non-terminal pods, read before the
   * delete (upstream's basis for how long to wait)
   */
  podGraceSeconds?: number;
  /** the API's message when reading or deleting failed; the pass goes on with the other resources */
  error?: string;
}

/** The verdict on one resource after a content pass. */
export interface ContentOutcome {
  remaining: number;
  finalizers: Record<string, number>;
  /** seconds to wait before looking again (graceful pods, finalizers), 0 when no wait is expected */
  estimateSeconds: number;
  /** why this resource failed, in upstream's words */
  error?: string;
}

/** The durable memory of one namespace's deletion, carried across continue-as-new. */
export interface NamespaceProgress {
  /** resources (by resourceKey) whose content was deleted and verified gone */
  emptied: string[];
}

export interface VerifyContentRequest {
  namespace: string;
  resources: NamespacedResource[];
}

/** Resources (by resourceKey) found holding content again, e.g. created in the race before termination. */
export interface VerifyContentResult {
  nonEmpty: string[];
  /** resourceKey -> API message for those that could not be listed (treated as not verified) */
  errors: Record<string, string>;
}

export interface NamespaceStatusUpdate {
  name: string;
  uid: string;
  /** the version the status was computed from; a newer one means look again */
  resourceVersion: string;
  phase: string;
  conditions: NamespaceCondition[];
}

export type StatusUpdateResult = { ok: true; resourceVersion: string } | { ok: false; reason: 'Conflict' | 'Gone' };

export interface FinalizeRequest {
  name: string;
  uid: string;
}

export type FinalizeResult =
  | { finalized: true; remainingFinalizers: string[] }
  /** the namespace is gone or another object holds its name: nothing left to do */
  | { finalized: false; reason: 'Gone' | 'NotOurs' | 'AlreadyFinalized' };
