/**
 * Payloads that cross the workflow boundary for the garbage collector. Compact projections of object
 * metadata (only what a GC decision reads) and the writes a decision asks for, each with its reason in words.
 * The decisions themselves live in ./logic.ts.
 */

import type { OwnerRef } from '../common/meta';

/** Finalizer the apiserver adds on a Foreground delete: the object goes once its blocking dependents are gone. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** Finalizer the apiserver adds on an Orphan delete: the object goes once its dependents let go of it. */
export const ORPHAN_FINALIZER = 'orphan';

export type GcFinalizer = typeof FOREGROUND_FINALIZER | typeof ORPHAN_FINALIZER;

/** Coordinates of one object. `namespace` is absent for a cluster-scoped object. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
}

/** metav1.OwnerReference. An owner reference carries no namespace: a namespaced owner lives in the dependent's namespace. */
export type OwnerReference = OwnerRef;

/** The metadata of one object as the GC reads it (metadata-only GET or watch). */
export interface ObjectMetaView {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
  resourceVersion: string;
  deletionTimestamp?: string; // RFC 3339
  finalizers: string[];
  ownerReferences: OwnerReference[];
}

/**
 * What the workflow learned about one owner reference of a dependent by reading the API (a GET by name
 * at the reference's coordinates, then a UID comparison; never a cache).
 *
 * - `exists`: an object of that kind and name with the reference's UID lives where the reference resolves
 *   (the dependent's namespace for a namespaced kind, cluster scope otherwise); `owner` carries it.
 * - `absent`: 404, or the object found there has another UID (the name was reused).
 *   A namespaced kind referenced from a cluster-scoped dependent cannot be resolved at all; report it
 *   as `absent` with `namespaced: true` (validation rejects it before its state is read).
 * - `unresolvable-kind`: discovery does not know the apiVersion/kind (yet); the decision is retried later.
 */
export interface OwnerLookup {
  ref: OwnerReference;
  state: 'exists' | 'absent' | 'unresolvable-kind';
  /** whether the owner's kind is namespaced, from discovery; absent when the kind is unresolvable */
  namespaced?: boolean;
  /** the owner's latest metadata, when it exists */
  owner?: ObjectMetaView;
  /**
   * Optional, for the OwnerRefInvalidNamespace event only: where an object with the reference's UID has
   * actually been seen (e.g. in the informer cache), when that is not where the reference resolves.
   * Upstream warns when such an object is namespaced and its namespace is not the dependent's.
   */
  observedElsewhere?: ObjectRef;
}

/** The owner references of one dependent, sorted as upstream's classifyReferences does. */
export interface OwnerClassification {
  /** the owner exists and is not waiting for its dependents' deletion */
  solid: OwnerReference[];
  /** the owner does not exist (404 or UID mismatch) */
  dangling: OwnerReference[];
  /** the owner exists, is being deleted and carries the foregroundDeletion finalizer */
  waitingForDependentsDeletion: OwnerReference[];
  /** discovery does not know the kind: nothing can be decided until it does */
  unresolved: OwnerReference[];
}

/** Why a reference is invalid, as upstream sees it. */
export type InvalidOwnerReasonCode =
  /** a cluster-scoped dependent names an owner of a namespaced kind: never valid, never retried */
  | 'NamespacedOwnerOfClusterScopedDependent'
  /** the owner's UID lives in another namespace than the dependent's: the reference is dangling */
  | 'OwnerInOtherNamespace';

export interface InvalidOwnerReference {
  ref: OwnerReference;
  code: InvalidOwnerReasonCode;
}

export interface WarningEventAction {
  type: 'warningEvent';
  /** the dependent that carries the bad reference (the event's involvedObject) */
  target: ObjectRef;
  reason: 'OwnerRefInvalidNamespace';
  message: string;
}

/**
 * One write a GC decision asks for. The workflow executes a list in order and stops at the first failure;
 * the next decision is made from fresh reads.
 */
export type GcAction =
  /**
   * DELETE with a UID precondition (and a resourceVersion precondition when given: on a Conflict, re-read;
   * if the ownerReferences are unchanged, upstream retries without the resourceVersion, otherwise re-decide).
   * NotFound or a failed UID precondition means it is already gone. `Orphan` only when the object itself
   * already carries the orphan finalizer (upstream honours it).
   */
  | {
      type: 'deleteObject';
      target: ObjectRef;
      resourceVersion?: string;
      propagation: 'Background' | 'Foreground' | 'Orphan';
      reason: string;
    }
  /** patch away the owner references with these UIDs (dangling owners, owners waiting for dependents) */
  | { type: 'removeOwnerReferences'; target: ObjectRef; ownerUids: string[]; reason: string }
  /**
   * set blockOwnerDeletion=false on these references of the target (upstream's cycle breaker: an object
   * about to be deleted in foreground stops blocking owners that are themselves waiting on it)
   */
  | { type: 'unblockOwnerReferences'; target: ObjectRef; ownerUids: string[]; reason: string }
  /** remove one GC finalizer from the target (a merge patch with the target's current resourceVersion) */
  | { type: 'removeFinalizer'; target: ObjectRef; finalizer: GcFinalizer; reason: string }
  /** remove the owner's UID from every dependent's ownerReferences; NotFound on a dependent is fine */
  | { type: 'orphanDependents'; owner: ObjectRef; dependents: ObjectRef[]; reason: string }
  /**
   * no write: run decideDependent for this object now (upstream puts it on the attemptToDelete queue).
   * Issued by decideForegroundOwner for a blocking dependent whose owner lookups it was not given.
   */
  | { type: 'evaluateDependent'; target: ObjectRef; reason: string }
  | WarningEventAction;

/** The full result of one attemptToDeleteItem-equivalent decision. */
export interface DependentPlan {
  actions: GcAction[];
  /**
   * true when nothing could be decided for now and upstream would requeue the item with backoff:
   * an owner's kind is unknown to discovery, or a reference has no lookup.
   */
  retry: boolean;
  /** present once every reference was classified */
  classification?: OwnerClassification;
  /** in words, why this plan */
  summary: string;
}

/** What decideForegroundOwner may be told about blocking dependents to decide their fate in the same pass. */
export interface DependentContext {
  /** the dependent's owner lookups (as for decideDependent) */
  lookups: OwnerLookup[];
  /** the objects whose ownerReferences name the dependent */
  ownDependents: ObjectMetaView[];
}
