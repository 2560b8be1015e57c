/**
 * One HPA sync as upstream's reconcileAutoscaler (v1.35) decides it, split at its one write that
 * matters: `planSync` runs from "got the scale" to "rescale or not", `finishSync` takes the
 * outcome of the scale update and gives the status to write, the Events and the history to keep.
 * Everything here is pure; the workflow supplies the reads (scale, pods, metrics) and `nowMs`.
 */
import type { V2HorizontalPodAutoscalerBehavior, V2MetricSpec, V2MetricStatus } from '@kubernetes/client-node';
import { recordInitialRecommendation, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, storeScaleEvent } from './behavior';
import {
  ableToScale,
  events as hpaEvents,
  RESCALE_ABOVE_MAX,
  RESCALE_ALL_BELOW,
  RESCALE_BELOW_MIN,
  rescaleAboveTarget,
  scalingActive,
  setConditions,
  type ConditionUpdate,
} from './conditions';
import type { MetricsProposal } from './metric-status';
import type { HpaCondition, HpaConfig, HpaEvent, HpaHistory } from './types';

export interface HpaSpecView {
  minReplicas?: number;
  maxReplicas: number;
  metrics?: V2MetricSpec[];
  behavior?: V2HorizontalPodAutoscalerBehavior;
}

/**
 * The HPA's status. Upstream rewrites it each sync without observedGeneration; only a sync that
 * could not read the scale keeps the status it found, observedGeneration included.
 */
export interface HpaStatusView {
  observedGeneration?: number;
  currentReplicas: number;
  desiredReplicas: number;
  lastScaleTime?: string;
  currentMetrics?: V2MetricStatus[];
  conditions?: HpaCondition[];
}

export type SelectorCheck = { ok: true } | { ok: false; error: string; condition: ConditionUpdate; event: HpaEvent };

/**
 * The scale's status.selector checks upstream makes before reading metrics: present, parseable
 * (the caller parses and passes the parser's error), and its pods not selected by another HPA
 * (`hpasSelectingPods`: "namespace/name" of every HPA whose selector matches one of them).
 */
export function checkSelector(selector: string | undefined, parseError: string | undefined, hpasSelectingPods: readonly string[], selfKey: string): SelectorCheck {
  if (!selector) {
    return { ok: false, error: 'selector is required', condition: scalingActive.selectorMissing(), event: hpaEvents.selectorRequired() };
  }
  if (parseError !== undefined) {
    const c = scalingActive.invalidSelector(parseError);
    return { ok: false, error: c.message, condition: c, event: hpaEvents.invalidSelector(parseError) };
  }
  const keys = [...new Set([selfKey, ...hpasSelectingPods])];
  if (keys.length > 1) {
    const c = scalingActive.ambiguousSelector(selector, keys);
    return { ok: false, error: c.message, condition: c, event: hpaEvents.ambiguousSelector(selector, keys) };
  }
  return { ok: true };
}

/** Whether this sync reads metrics at all (the scale's replica count lies within [min, max] and is not a disabled zero). */
export function needsMetrics(spec: HpaSpecView, currentReplicas: number): boolean {
  const min = spec.minReplicas ?? 1;
  if (currentReplicas === 0 && min !== 0) return false;
  return currentReplicas <= spec.maxReplicas && currentReplicas >= min;
}

export interface SyncInput {
  spec: HpaSpecView;
  status: HpaStatusView | undefined;
  /** scale.spec.replicas */
  currentReplicas: number;
  /** the metrics' proposal, when needsMetrics(); a failed selector check gives `selector` instead */
  metrics?: MetricsProposal;
  selector?: SelectorCheck;
  history: HpaHistory;
  config: Pick<HpaConfig, 'downscaleStabilizationWindowMs'>;
  nowMs: number;
}

export interface SyncPlan {
  /** update the scale subresource to desiredReplicas, then call finishSync with the outcome */
  rescale: boolean;
  desiredReplicas: number;
  reason: string;
  /** conditions as they stand before the rescale */
  conditions: HpaCondition[];
  events: HpaEvent[];
  history: HpaHistory;
  metricStatuses?: V2MetricStatus[];
  /** the sync ends here (no usable metrics): write `status` and stop */
  status?: HpaStatusView;
  /** an error upstream would return from the sync (logged, and requeued with backoff) */
  error?: string;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function planSync(input: SyncInput): SyncPlan {
  const now = iso(input.nowMs);
  const updates: ConditionUpdate[] = [ableToScale.succeededGetScale()];
  const evts: HpaEvent[] = [];
  let history: HpaHistory = { ...input.history, recommendations: recordInitialRecommendation(input.history.recommendations, input.currentReplicas, input.nowMs) };
  const current = input.currentReplicas;
  const min = input.spec.minReplicas ?? 1;
  const max = input.spec.maxReplicas;
  const prior = input.status?.conditions;

  if (current === 0 && min !== 0) {
    updates.push(scalingActive.scalingDisabled());
    return { rescale: false, desiredReplicas: 0, reason: '', conditions: setConditions(prior, updates, now), events: evts, history };
  }
  if (current > max) {
    return { rescale: true, desiredReplicas: max, reason: RESCALE_ABOVE_MAX, conditions: setConditions(prior, updates, now), events: evts, history };
  }
  if (current < min) {
    return { rescale: true, desiredReplicas: min, reason: RESCALE_BELOW_MIN, conditions: setConditions(prior, updates, now), events: evts, history };
  }

  if (input.selector && !input.selector.ok) {
    evts.push(input.selector.event);
    updates.push(input.selector.condition);
    const err = input.selector.error;
    evts.push(hpaEvents.failedComputeMetricsReplicas(err));
    const conditions = setConditions(prior, updates, now);
    return {
      rescale: false,
      desiredReplicas: current,
      reason: '',
      conditions,
      events: evts,
      history,
      status: { ...keptStatus(input.status, current, undefined), conditions },
      error: err,
    };
  }
  const m = input.metrics;
  if (!m) throw new Error('planSync: metrics are required when the replica count is within [minReplicas, maxReplicas]');
  evts.push(...m.events);
  updates.push(m.condition);
  if (m.replicas === -1) {
    const conditions = setConditions(prior, updates, now);
    return {
      rescale: false,
      desiredReplicas: current,
      reason: '',
      conditions,
      events: evts,
      history,
      metricStatuses: m.statuses,
      status: { ...keptStatus(input.status, current, m.statuses), conditions },
      error: m.error,
    };
  }

  let desired = 0;
  let rescaleMetric = '';
  if (m.replicas > desired) {
    desired = m.replicas;
    rescaleMetric = m.metricName;
  }
  let reason = '';
  if (desired > current) reason = rescaleAboveTarget(rescaleMetric);
  if (desired < current) reason = RESCALE_ALL_BELOW;
  const args = { history, currentReplicas: current, desiredReplicas: desired, minReplicas: min, maxReplicas: max, downscaleStabilizationWindowMs: input.config.downscaleStabilizationWindowMs, nowMs: input.nowMs };
  const n = input.spec.behavior ? normalizeDesiredReplicasWithBehaviors({ ...args, behavior: input.spec.behavior }) : normalizeDesiredReplicas(args);
  updates.push(...n.conditions);
  history = n.history;
  return {
    rescale: n.replicas !== current,
    desiredReplicas: n.replicas,
    reason,
    conditions: setConditions(prior, updates, now),
    events: evts,
    history,
    metricStatuses: m.statuses,
    error: m.error,
  };
}

/** What upstream's setCurrentReplicasAndMetricsInStatus leaves: the old desired count and last scale time. */
function keptStatus(old: HpaStatusView | undefined, current: number, metrics: V2MetricStatus[] | undefined): HpaStatusView {
  const s: HpaStatusView = { currentReplicas: current, desiredReplicas: old?.desiredReplicas ?? 0 };
  if (old?.lastScaleTime) s.lastScaleTime = old.lastScaleTime;
  if (metrics) s.currentMetrics = metrics;
  return s;
}

export type RescaleOutcome = { ok: true } | { ok: false; error: string };

export interface SyncResult {
  status: HpaStatusView;
  events: HpaEvent[];
  history: HpaHistory;
  error?: string;
}

/**
 * The end of a sync: after a rescale (its outcome given) or without one. A successful rescale
 * sets AbleToScale SucceededRescale, records SuccessfulRescale and the scale event, and moves
 * lastScaleTime; a failed one records FailedRescale and sets AbleToScale FailedUpdateScale.
 */
export function finishSync(input: SyncInput, plan: SyncPlan, outcome: RescaleOutcome | undefined): SyncResult {
  const now = iso(input.nowMs);
  const current = input.currentReplicas;
  if (plan.status) return { status: plan.status, events: plan.events, history: plan.history, error: plan.error };
  if (plan.rescale) {
    if (!outcome || !outcome.ok) {
      const err = outcome && !outcome.ok ? outcome.error : 'scale was not updated';
      const conditions = setConditions(plan.conditions, [ableToScale.failedUpdateScale(err)], now);
      return {
        status: { ...keptStatus(input.status, current, plan.metricStatuses), conditions },
        events: [...plan.events, hpaEvents.failedRescale(plan.desiredReplicas, plan.reason, err)],
        history: plan.history,
        error: `failed to rescale: ${err}`,
      };
    }
    const conditions = setConditions(plan.conditions, [ableToScale.succeededRescale(plan.desiredReplicas)], now);
    const history = storeScaleEvent(plan.history, input.spec.behavior, input.config.downscaleStabilizationWindowMs, current, plan.desiredReplicas, input.nowMs);
    const status: HpaStatusView = { currentReplicas: current, desiredReplicas: plan.desiredReplicas, lastScaleTime: now, conditions };
    if (plan.metricStatuses) status.currentMetrics = plan.metricStatuses;
    return { status, events: [...plan.events, hpaEvents.successfulRescale(plan.desiredReplicas, plan.reason)], history, error: plan.error };
  }
  const status: HpaStatusView = { currentReplicas: current, desiredReplicas: current, conditions: plan.conditions };
  if (input.status?.lastScaleTime) status.lastScaleTime = input.status.lastScaleTime;
  if (plan.metricStatuses) status.currentMetrics = plan.metricStatuses;
  return { status, events: plan.events, history: plan.history, error: plan.error };
}

/**
 * A sync that could not read the target's scale (a bad apiVersion, an unknown kind, a failed GET):
 * the status found is kept with AbleToScale False FailedGetScale, and the Warning FailedGetScale
 * carries the error.
 */
export function scaleReadFailed(status: HpaStatusView | undefined, history: HpaHistory, err: string, nowMs: number): SyncResult {
  const conditions = setConditions(status?.conditions, [ableToScale.failedGetScale(err)], iso(nowMs));
  return {
    status: { ...(status ?? { currentReplicas: 0, desiredReplicas: 0 }), conditions },
    events: [hpaEvents.failedGetScale(err)],
    history,
    error: err,
  };
}
