/**
 * Plain, JSON-safe data the horizontal-pod-autoscaler's pure layer works on. Times are epoch
 * milliseconds handed in by the caller; amounts are milli-units (a CPU request of 100m is 100, a
 * memory request of 1Ki is 1024000), as upstream's calculator works in MilliValue()s. Values are
 * JavaScript numbers: exact up to 2^53 milli-units, which covers any realistic request or usage.
 */

/** What the calculator needs of one pod selected by the scale target's selector. */
export interface HpaPod {
  name: string;
  /** status.phase */
  phase?: string;
  /** metadata.deletionTimestamp is set */
  deleting?: boolean;
  /** status.startTime */
  startTimeMs?: number;
  /** the Ready condition, when the pod has one */
  ready?: { status: string; lastTransitionTimeMs?: number };
  containers: HpaContainer[];
  initContainers?: HpaInitContainer[];
  /** spec.resources.requests (pod-level resources), milli-units */
  podRequestsMilli?: Record<string, number>;
  /** spec.overhead, milli-units */
  overheadMilli?: Record<string, number>;
}

export interface HpaContainer {
  name: string;
  /** resources.requests, milli-units; a resource without a request is absent */
  requestsMilli: Record<string, number>;
}

export interface HpaInitContainer extends HpaContainer {
  /** restartPolicy: Always (a sidecar) */
  restartable: boolean;
}

/** One pod's metric value, as the resource or custom metrics API reported it. */
export interface PodSample {
  pod: string;
  milli: number;
  timestampMs: number;
  windowMs: number;
}

/** A metrics API read: its data, or the error text the metrics client gave. */
export type MetricFetch<T> = { ok: true; value: T } | { ok: false; error: string };

/** Per-pod samples plus the list's timestamp (its first item's), as the metrics client returns them. */
export interface PodSamples {
  samples: PodSample[];
  timestampMs: number;
}

/** A single object's metric value (custom metrics API). */
export interface ObjectValue {
  milli: number;
  timestampMs: number;
}

/** All values of an external metric matching its selector. */
export interface ExternalValues {
  millis: number[];
  timestampMs: number;
}

/** How far the usage ratio may stray from 1.0 before the HPA acts, each way. */
export interface Tolerances {
  scaleDown: number;
  scaleUp: number;
}

/** The controller-wide settings of the calculation (upstream's --horizontal-pod-autoscaler-* flags). */
export interface HpaConfig {
  /** --horizontal-pod-autoscaler-tolerance (0.1) */
  tolerance: number;
  /** --horizontal-pod-autoscaler-cpu-initialization-period (5m) */
  cpuInitializationPeriodMs: number;
  /** --horizontal-pod-autoscaler-initial-readiness-delay (30s) */
  initialReadinessDelayMs: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization (5m) */
  downscaleStabilizationWindowMs: number;
  /** HPAConfigurableTolerance (beta, on in 1.35): honour behavior.scaleUp/scaleDown.tolerance */
  configurableTolerance: boolean;
  /** PodLevelResources (beta, on in 1.35): pod-level requests count when no container is named */
  podLevelResources: boolean;
}

export const DEFAULT_HPA_CONFIG: HpaConfig = {
  tolerance: 0.1,
  cpuInitializationPeriodMs: 5 * 60_000,
  initialReadinessDelayMs: 30_000,
  downscaleStabilizationWindowMs: 5 * 60_000,
  configurableTolerance: true,
  podLevelResources: true,
};

/** An unstabilized recommendation the HPA made at a time (upstream keeps these in memory; we keep them in workflow state). */
export interface TimedRecommendation {
  timestampMs: number;
  replicas: number;
}

/** A rescale the HPA made: how many replicas it added or removed (never negative). */
export interface ScaleEvent {
  timestampMs: number;
  replicaChange: number;
  /** older than the longest policy period when last checked: the next event may reuse this slot */
  outdated: boolean;
}

/** Everything the HPA remembers between syncs. Serializable as is. */
export interface HpaHistory {
  recommendations: TimedRecommendation[];
  scaleUpEvents: ScaleEvent[];
  scaleDownEvents: ScaleEvent[];
}

export function emptyHistory(): HpaHistory {
  return { recommendations: [], scaleUpEvents: [], scaleDownEvents: [] };
}

/** An HPA condition as written to status.conditions (times as RFC 3339 strings). */
export interface HpaCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** An Event the controller records about the HPA. */
export interface HpaEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}
