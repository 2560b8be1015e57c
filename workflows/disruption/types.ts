/**
 * Payloads of the disruption controller (upstream pkg/controller/disruption): compact views of a
 * PodDisruptionBudget and of the pods its selector matches, and what the watch sends.
 */
import type { IntOrPercent } from '../common/int-or-percent';
import type { LabelSelector } from '../common/meta';

export type { IntOrPercent, LabelSelector };

/** A metav1.Condition as the PDB's status carries it. */
export interface PdbCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface PdbStatus {
  observedGeneration?: number;
  /** pods the eviction API let go, by name, with when it did (RFC 3339) */
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: PdbCondition[];
}

export interface PdbView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  /** null matches no pod, {} every pod of the namespace */
  selector: LabelSelector | null;
  minAvailable?: IntOrPercent;
  maxUnavailable?: IntOrPercent;
  status: PdbStatus;
}

/** A pod's controller, as its controllerRef names it. */
export interface ControllerRefView {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** What the controller reads of a pod its PDB selects. */
export interface PdbPodView {
  name: string;
  uid: string;
  /** it has a deletionTimestamp */
  deleting: boolean;
  /** its Ready condition is True */
  ready: boolean;
  controllerRef?: ControllerRefView;
}

/**
 * What the watch sends a PDB's workflow. `pdb` is the budget as it stands. With `allPods`, `pods`
 * is every pod the selector matches (a new or relisted budget, a changed selector); without it,
 * pods that were added or changed. `podsGone` names pods deleted or no longer selected.
 */
export interface PdbEvent {
  pdb?: PdbView;
  pdbGone?: boolean;
  pods?: PdbPodView[];
  allPods?: boolean;
  podsGone?: string[];
  /** pods that match several budgets, of which this one was picked (upstream warns on the pod) */
  shared?: Array<{ name: string; uid: string }>;
}

/** A pod's DisruptionTarget condition that may have gone stale: True on a pod that is not going away. */
export interface StaleConditionPod {
  namespace: string;
  name: string;
  uid: string;
  /** the condition's lastTransitionTime, ms since the epoch */
  since: number;
}
