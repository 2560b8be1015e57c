/**
 * The horizontal-pod-autoscaler's status conditions and Events, with upstream's (v1.35) reasons
 * and message texts, as data the controller writes and records. 1.35 has no Backoff* reasons any
 * more (the "ScaleUpLimit"/"ScaleDownLimit" ScalingLimited reasons and the stabilization reasons
 * replaced them).
 */
import type { HpaCondition, HpaEvent } from './types';

export const AbleToScale = 'AbleToScale';
export const ScalingActive = 'ScalingActive';
export const ScalingLimited = 'ScalingLimited';

export type ConditionStatus = 'True' | 'False';

/** A condition to set: type, status, reason and the finished message. */
export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/**
 * Sets a condition in the list as upstream's setConditionInList: an existing condition of the
 * type is updated in place (its lastTransitionTime moves only when the status changes), a new one
 * is appended. Returns a new list; the input is not modified.
 */
export function setCondition(list: readonly HpaCondition[] | undefined, u: ConditionUpdate, nowIso: string): HpaCondition[] {
  const out = (list ?? []).map((c) => ({ ...c }));
  let cond = out.find((c) => c.type === u.type);
  if (!cond) {
    cond = { type: u.type, status: '' };
    out.push(cond);
  }
  if (cond.status !== u.status) cond.lastTransitionTime = nowIso;
  cond.status = u.status;
  cond.reason = u.reason;
  cond.message = u.message;
  return out;
}

/** Applies several updates in order (the order upstream sets them in one sync). */
export function setConditions(list: readonly HpaCondition[] | undefined, updates: readonly ConditionUpdate[], nowIso: string): HpaCondition[] {
  let out = (list ?? []).map((c) => ({ ...c }));
  for (const u of updates) out = setCondition(out, u, nowIso);
  return out;
}

// ---------------------------------------------------------------------------------------------
// AbleToScale

export const ableToScale = {
  succeededGetScale: (): ConditionUpdate => ({
    type: AbleToScale,
    status: 'True',
    reason: 'SucceededGetScale',
    message: 'the HPA controller was able to get the target\'s current scale',
  }),
  failedGetScale: (err: string): ConditionUpdate => ({
    type: AbleToScale,
    status: 'False',
    reason: 'FailedGetScale',
    message: `the HPA controller was unable to get the target's current scale: ${err}`,
  }),
  failedUpdateScale: (err: string): ConditionUpdate => ({
    type: AbleToScale,
    status: 'False',
    reason: 'FailedUpdateScale',
    message: `the HPA controller was unable to update the target scale: ${err}`,
  }),
  succeededRescale: (replicas: number): ConditionUpdate => ({
    type: AbleToScale,
    status: 'True',
    reason: 'SucceededRescale',
    message: `the HPA controller was able to update the target scale to ${replicas}`,
  }),
  readyForNewScale: (): ConditionUpdate => ({
    type: AbleToScale,
    status: 'True',
    reason: 'ReadyForNewScale',
    message: 'recommended size matches current size',
  }),
  scaleDownStabilized: (): ConditionUpdate => ({
    type: AbleToScale,
    status: 'True',
    reason: 'ScaleDownStabilized',
    message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
  }),
  scaleUpStabilized: (): ConditionUpdate => ({
    type: AbleToScale,
    status: 'True',
    reason: 'ScaleUpStabilized',
    message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
  }),
};

// ---------------------------------------------------------------------------------------------
// ScalingActive

export const scalingActive = {
  validMetricFound: (metricName: string): ConditionUpdate => ({
    type: ScalingActive,
    status: 'True',
    reason: 'ValidMetricFound',
    message: `the HPA was able to successfully calculate a replica count from ${metricName}`,
  }),
  scalingDisabled: (): ConditionUpdate => ({
    type: ScalingActive,
    status: 'False',
    reason: 'ScalingDisabled',
    message: 'scaling is disabled since the replica count of the target is zero',
  }),
  selectorMissing: (): ConditionUpdate => ({
    type: ScalingActive,
    status: 'False',
    reason: 'InvalidSelector',
    message: 'the HPA target\'s scale is missing a selector',
  }),
  invalidSelector: (parseError: string): ConditionUpdate => ({
    type: ScalingActive,
    status: 'False',
    reason: 'InvalidSelector',
    message: invalidSelectorMessage(parseError),
  }),
  ambiguousSelector: (selector: string, hpaKeys: readonly string[]): ConditionUpdate => ({
    type: ScalingActive,
    status: 'False',
    reason: 'AmbiguousSelector',
    message: ambiguousSelectorMessage(selector, hpaKeys),
  }),
  /** FailedGetResourceMetric, FailedGetContainerResourceMetric, FailedGetPodsMetric, FailedGetObjectMetric, FailedGetExternalMetric, InvalidMetricSourceType */
  unableToCompute: (reason: string, err: string): ConditionUpdate => ({
    type: ScalingActive,
    status: 'False',
    reason,
    message: `the HPA was unable to compute the replica count: ${err}`,
  }),
};

export function invalidSelectorMessage(parseError: string): string {
  return `couldn't convert selector into a corresponding internal selector object: ${parseError}`;
}

/** hpaKeys as "namespace/name"; upstream lists them in map order, we sort them. */
export function ambiguousSelectorMessage(selector: string, hpaKeys: readonly string[]): string {
  return `pods by selector ${selector} are controlled by multiple HPAs: [${[...hpaKeys].sort().join(' ')}]`;
}

// ---------------------------------------------------------------------------------------------
// ScalingLimited

export type LimitReason = 'DesiredWithinRange' | 'TooFewReplicas' | 'TooManyReplicas' | 'ScaleUpLimit' | 'ScaleDownLimit';

export const LIMIT_MESSAGES: Record<LimitReason, string> = {
  DesiredWithinRange: 'the desired count is within the acceptable range',
  TooFewReplicas: 'the desired replica count is less than the minimum replica count',
  TooManyReplicas: 'the desired replica count is more than the maximum replica count',
  ScaleUpLimit: 'the desired replica count is increasing faster than the maximum scale rate',
  ScaleDownLimit: 'the desired replica count is decreasing faster than the maximum scale rate',
};

/** ScalingLimited is True when the limit changed the count, False (with the same reason) when it did not. */
export function scalingLimited(limited: boolean, reason: LimitReason): ConditionUpdate {
  return { type: ScalingLimited, status: limited ? 'True' : 'False', reason, message: LIMIT_MESSAGES[reason] };
}

// ---------------------------------------------------------------------------------------------
// rescale reasons and Events

export const RESCALE_ABOVE_MAX = 'Current number of replicas above Spec.MaxReplicas';
export const RESCALE_BELOW_MIN = 'Current number of replicas below Spec.MinReplicas';
export const RESCALE_ALL_BELOW = 'All metrics below target';

/** "<metric name> above target", e.g. "cpu resource utilization (percentage of request) above target". */
export function rescaleAboveTarget(metricName: string): string {
  return `${metricName} above target`;
}

export const events = {
  successfulRescale: (replicas: number, reason: string): HpaEvent => ({
    type: 'Normal',
    reason: 'SuccessfulRescale',
    message: `New size: ${replicas}; reason: ${reason}`,
  }),
  failedRescale: (replicas: number, reason: string, err: string): HpaEvent => ({
    type: 'Warning',
    reason: 'FailedRescale',
    message: `New size: ${replicas}; reason: ${reason}; error: ${err}`,
  }),
  failedGetScale: (err: string): HpaEvent => ({ type: 'Warning', reason: 'FailedGetScale', message: err }),
  selectorRequired: (): HpaEvent => ({ type: 'Warning', reason: 'SelectorRequired', message: 'selector is required' }),
  invalidSelector: (parseError: string): HpaEvent => ({ type: 'Warning', reason: 'InvalidSelector', message: invalidSelectorMessage(parseError) }),
  ambiguousSelector: (selector: string, hpaKeys: readonly string[]): HpaEvent => ({
    type: 'Warning',
    reason: 'AmbiguousSelector',
    message: ambiguousSelectorMessage(selector, hpaKeys),
  }),
  /** the per-metric failure Events: reason as the ScalingActive condition's, the error text as message */
  metricFailure: (reason: string, err: string): HpaEvent => ({ type: 'Warning', reason, message: err }),
  failedComputeMetricsReplicas: (err: string): HpaEvent => ({ type: 'Warning', reason: 'FailedComputeMetricsReplicas', message: err }),
  failedUpdateStatus: (err: string): HpaEvent => ({ type: 'Warning', reason: 'FailedUpdateStatus', message: err }),
};
