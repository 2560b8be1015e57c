/**
 * Payloads of the pod garbage collector. The full pod list never crosses the workflow boundary:
 * the listing activity runs the selection (./logic.ts) over it and hands back only the pods to
 * delete, each as a small target.
 */

export const CONTROLLER = 'podgc';

/** upstream's gcCheckPeriod */
export const DEFAULT_PERIOD_MS = 20_000;
/** upstream's quarantineTime: how long a node must stay missing before its pods go */
export const DEFAULT_QUARANTINE_MS = 40_000;
/** upstream's --terminated-pod-gc-threshold default */
export const DEFAULT_TERMINATED_POD_THRESHOLD = 12_500;
/** the most pods one listing hands back; the rest follow in the next pass, started at once */
export const DEFAULT_MAX_TARGETS = 500;

export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';
/** status.reason the kubelet gives a pod it evicted; such pods go first */
export const EVICTED_REASON = 'Evicted';
export const DISRUPTION_TARGET = 'DisruptionTarget';

/** Why a pod is collected, as upstream's metrics label it. */
export type PodGcReason = 'terminated' | 'terminating-out-of-service' | 'orphaned' | 'terminating-unscheduled';

/** What the selection reads of one pod (inside the listing activity). */
export interface PodGcPodView {
  namespace: string;
  name: string;
  uid: string;
  /** '' when the status has none */
  phase: string;
  /** status.reason */
  reason?: string;
  /** '' while unscheduled */
  nodeName: string;
  /** RFC 3339 */
  creationTimestamp: string;
  /** RFC 3339 */
  deletionTimestamp?: string;
  /** metadata.generation; 0 when the server does not track it */
  generation: number;
  /** the pod's DisruptionTarget condition, if any: re-marking keeps its transition time */
  disruptionTarget?: { status: string; lastTransitionTime?: string };
}

/** What the selection reads of one node. */
export interface PodGcNodeView {
  name: string;
  ready: boolean;
  outOfService: boolean;
}

/** One pod to force-delete, with what marking it Failed first needs. */
export interface PodGcTarget {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  nodeName?: string;
  /** already being deleted: deleting it again with grace 0 still matters, but makes no progress of its own */
  terminating?: true;
  generation?: number;
  disruptionTarget?: { status: string; lastTransitionTime?: string };
}

export interface PodGcSelection {
  /** oldest terminated pods beyond the threshold, evicted ones first */
  terminated: PodGcTarget[];
  /** terminating pods on not-ready nodes tainted out-of-service */
  terminatingOutOfService: PodGcTarget[];
  /** pods bound to a node whose quarantine is over and that is still absent from the node list (a live check decides) */
  orphaned: PodGcTarget[];
  /** terminating pods never scheduled */
  terminatingUnscheduled: PodGcTarget[];
  /** nodes pods are bound to that the node list lacks, sorted */
  missingNodes: string[];
  /** how many pods are terminated (upstream's count against the threshold) */
  terminatedCount: number;
  /** pods not yet being deleted were left out to keep the payload small: run again soon */
  truncated: boolean;
}

/** A pod DisruptionTarget condition as upstream's pod GC writes it for an orphan. */
export interface DisruptionCondition {
  reason: string;
  message: string;
}

/** Upstream's condition on pods of a node that no longer exists. */
export const ORPHAN_CONDITION: DisruptionCondition = { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };
