/**
 * Payloads of the DaemonSet controller (upstream pkg/controller/daemon): compact views of a
 * DaemonSet, its pods and revisions, and each node's verdict, which the watch computes.
 */
import type { ControllerRevisionView, RevisionedWorkloadView } from '../common/controller-history';
import type { OwnerRef } from '../common/meta';
import type { DaemonUpdateStrategy } from './predicates';

export interface DaemonSetStatusView {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
}

export interface DaemonSetView extends RevisionedWorkloadView {
  updateStrategy: DaemonUpdateStrategy;
  /** the deprecated templateGeneration annotation, when present */
  templateGeneration?: string;
  status: DaemonSetStatusView;
}

/** What the controller reads of a daemon pod. */
export interface DaemonPodView {
  name: string;
  uid: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  /** its controller, if any: claiming adopts orphans and releases pods the selector dropped */
  controllerRef?: OwnerRef;
  /** the node it is for: spec.nodeName, else its pinning affinity term */
  node?: string;
  /** spec.nodeName is set (the scheduler bound it) */
  scheduled: boolean;
  /** controller-revision-hash */
  hash?: string;
  /** pod-template-generation (deprecated) */
  templateGeneration?: string;
  phase: string;
  ready: boolean;
  /** when Ready last turned True (RFC 3339), for minReadySeconds */
  readySince?: string;
  creationTimestamp: string;
  deleting: boolean;
}

/** NodeShouldRunDaemonPod's answer for one node, as the watch computed it for this DaemonSet. */
export interface NodeVerdict {
  shouldRun: boolean;
  shouldContinueRunning: boolean;
}

/** What the controller reads of a ControllerRevision it owns. */
export interface DaemonRevisionView extends Omit<ControllerRevisionView, 'uid' | 'labels'>, Partial<Pick<ControllerRevisionView, 'uid' | 'labels'>> {
  /** controller-revision-hash, when labelled */
  hash?: string;
}

/** A failed daemon pod's deletion backoff on one node (upstream's flowcontrol.Backoff entry). */
export interface FailedPodBackoff {
  delayMs: number;
  lastUpdateMs: number;
}

/**
 * What the watch sends a DaemonSet's workflow. With `full`, `verdicts`, `pods` and `revisions` are
 * complete (a new or relisted DaemonSet, a changed template or selector); otherwise they are what
 * changed, and the `...Gone` lists what went away.
 */
export interface DaemonSetEvent {
  ds?: DaemonSetView;
  dsGone?: boolean;
  full?: boolean;
  verdicts?: Record<string, NodeVerdict>;
  nodesGone?: string[];
  pods?: DaemonPodView[];
  /** UIDs */
  podsGone?: string[];
  revisions?: DaemonRevisionView[];
  /** names */
  revisionsGone?: string[];
  /**
   * The event was too large for a payload and went out without its state (shrinkDaemonSetEvent):
   * the workflow reads the DaemonSet, the nodes' verdicts, its pods and revisions from the API.
   */
  lookAgain?: boolean;
}
