/**
 * From the metrics' proposal to the replica count the HPA sets (upstream horizontal.go, v1.35):
 * stabilization over the recommendation history, the scale-up limit of HPAs without `behavior`,
 * `behavior`'s scaling policies over the scale-event history, min/max clamping, and the
 * AbleToScale / ScalingLimited conditions that explain the result. The histories are plain arrays
 * kept in workflow state; they are updated (returned anew) exactly as upstream updates its
 * in-memory ones: an entry that fell out of every window is overwritten in place, otherwise the
 * new one is appended, so the lists stay as long as the windows need and no longer.
 */
import type { V2HorizontalPodAutoscalerBehavior, V2HPAScalingPolicy, V2HPAScalingRules } from '@kubernetes/client-node';
import { ableToScale, scalingLimited, type ConditionUpdate, type LimitReason } from './conditions';
import type { HpaHistory, ScaleEvent, TimedRecommendation } from './types';

const MAX_INT32 = 2147483647;
const MIN_INT32 = -2147483648;

/** Scaling rules with every field the controller reads filled in. */
export interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy: string;
  policies: V2HPAScalingPolicy[];
  tolerance?: string;
}

export interface Behavior {
  scaleUp: ScalingRules;
  scaleDown: ScalingRules;
}

/** The API server's defaults for behavior.scaleUp: no stabilization; max of +4 pods or +100% per 15 s. */
export function defaultScaleUpRules(from: V2HPAScalingRules | undefined): ScalingRules {
  return fill(from, {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  });
}

/** The API server's defaults for behavior.scaleDown: -100% per 15 s; the window stays unset (the controller's flag fills it). */
export function defaultScaleDownRules(from: V2HPAScalingRules | undefined): ScalingRules {
  return fill(from, { stabilizationWindowSeconds: undefined, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
}

function fill(from: V2HPAScalingRules | undefined, to: ScalingRules): ScalingRules {
  if (!from) return to;
  const out: ScalingRules = { ...to, policies: [...to.policies] };
  if (from.selectPolicy !== undefined) out.selectPolicy = from.selectPolicy;
  if (from.stabilizationWindowSeconds !== undefined) out.stabilizationWindowSeconds = from.stabilizationWindowSeconds;
  if (from.policies !== undefined) out.policies = from.policies;
  if (from.tolerance !== undefined) out.tolerance = from.tolerance;
  return out;
}

/**
 * The behavior as the controller uses it: API defaults for what the user left out, and the
 * scale-down window from --horizontal-pod-autoscaler-downscale-stabilization when unset.
 */
export function effectiveBehavior(behavior: V2HorizontalPodAutoscalerBehavior, downscaleStabilizationWindowMs: number): Behavior {
  const scaleUp = defaultScaleUpRules(behavior.scaleUp);
  const scaleDown = defaultScaleDownRules(behavior.scaleDown);
  if (scaleDown.stabilizationWindowSeconds === undefined) scaleDown.stabilizationWindowSeconds = Math.trunc(downscaleStabilizationWindowMs / 1000);
  return { scaleUp, scaleDown };
}

// ---------------------------------------------------------------------------------------------
// recommendation history

/** The first sync of an HPA seeds its history with the current replica count (upstream's recordInitialRecommendation). */
export function recordInitialRecommendation(recs: readonly TimedRecommendation[], currentReplicas: number, nowMs: number): TimedRecommendation[] {
  return recs.length === 0 ? [{ timestampMs: nowMs, replicas: currentReplicas }] : [...recs];
}

function recordRecommendation(recs: readonly TimedRecommendation[], oldIndex: number, rec: TimedRecommendation): TimedRecommendation[] {
  const out = [...recs];
  if (oldIndex >= 0) out[oldIndex] = rec;
  else out.push(rec);
  return out;
}

/**
 * No-behavior stabilization: the highest recommendation within the downscale window (including
 * the new one); the new one is recorded over the last entry older than the window, or appended.
 */
export function stabilizeRecommendation(
  recs: readonly TimedRecommendation[],
  desired: number,
  windowMs: number,
  nowMs: number,
): { replicas: number; recommendations: TimedRecommendation[] } {
  let max = desired;
  let oldIndex = -1;
  const cutoff = nowMs - windowMs;
  recs.forEach((r, i) => {
    if (r.timestampMs < cutoff) oldIndex = i;
    else if (r.replicas > max) max = r.replicas;
  });
  return { replicas: max, recommendations: recordRecommendation(recs, oldIndex, { timestampMs: nowMs, replicas: desired }) };
}

/** Upstream's fixed scale-up limit without behavior: max(2 × current, 4). */
export function scaleUpLimit(currentReplicas: number): number {
  return Math.trunc(Math.max(2.0 * currentReplicas, 4.0));
}

/** Clamp without behavior (upstream's convertDesiredReplicasWithRules). */
export function convertDesiredReplicasWithRules(
  currentReplicas: number,
  desired: number,
  minReplicas: number,
  maxReplicas: number,
): { replicas: number; reason: LimitReason } {
  const limit = scaleUpLimit(currentReplicas);
  const [maxAllowed, maxReason]: [number, LimitReason] = maxReplicas > limit ? [limit, 'ScaleUpLimit'] : [maxReplicas, 'TooManyReplicas'];
  if (desired < minReplicas) return { replicas: minReplicas, reason: 'TooFewReplicas' };
  if (desired > maxAllowed) return { replicas: maxAllowed, reason: maxReason };
  return { replicas: desired, reason: 'DesiredWithinRange' };
}

export interface Normalized {
  replicas: number;
  history: HpaHistory;
  /** AbleToScale then ScalingLimited, in the order upstream sets them */
  conditions: ConditionUpdate[];
}

/** HPAs without `behavior` (upstream's normalizeDesiredReplicas). */
export function normalizeDesiredReplicas(args: {
  history: HpaHistory;
  currentReplicas: number;
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  downscaleStabilizationWindowMs: number;
  nowMs: number;
}): Normalized {
  const s = stabilizeRecommendation(args.history.recommendations, args.desiredReplicas, args.downscaleStabilizationWindowMs, args.nowMs);
  const able = s.replicas !== args.desiredReplicas ? ableToScale.scaleDownStabilized() : ableToScale.readyForNewScale();
  const c = convertDesiredReplicasWithRules(args.currentReplicas, s.replicas, args.minReplicas, args.maxReplicas);
  return {
    replicas: c.replicas,
    history: { ...args.history, recommendations: s.recommendations },
    conditions: [able, scalingLimited(c.replicas !== s.replicas, c.reason)],
  };
}

// ---------------------------------------------------------------------------------------------
// with behavior

/**
 * Stabilization with behavior: the recommendation is held between the lowest recommendation in
 * the scale-up window and the highest in the scale-down window (both including the new one),
 * starting from the current count. The new recommendation overwrites the last entry older than
 * both windows, or is appended.
 */
export function stabilizeRecommendationWithBehaviors(args: {
  recommendations: readonly TimedRecommendation[];
  currentReplicas: number;
  desiredReplicas: number;
  scaleUpWindowSeconds: number;
  scaleDownWindowSeconds: number;
  nowMs: number;
}): { replicas: number; recommendations: TimedRecommendation[]; stabilized: ConditionUpdate } {
  const upCutoff = args.nowMs - args.scaleUpWindowSeconds * 1000;
  const downCutoff = args.nowMs - args.scaleDownWindowSeconds * 1000;
  let up = args.desiredReplicas;
  let down = args.desiredReplicas;
  let oldIndex = -1;
  args.recommendations.forEach((r, i) => {
    if (r.timestampMs > upCutoff) up = Math.min(r.replicas, up);
    if (r.timestampMs > downCutoff) down = Math.max(r.replicas, down);
    if (r.timestampMs < upCutoff && r.timestampMs < downCutoff) oldIndex = i;
  });
  let replicas = args.currentReplicas;
  if (replicas < up) replicas = up;
  if (replicas > down) replicas = down;
  const recommendations = recordRecommendation(args.recommendations, oldIndex, { timestampMs: args.nowMs, replicas: args.desiredReplicas });
  const stabilized = args.desiredReplicas >= args.currentReplicas ? ableToScale.scaleUpStabilized() : ableToScale.scaleDownStabilized();
  return { replicas, recommendations, stabilized };
}

/** Replicas added (or removed) by the events newer than the period. */
export function replicasChangePerPeriod(periodSeconds: number, events: readonly ScaleEvent[], nowMs: number): number {
  const cutoff = nowMs - periodSeconds * 1000;
  let n = 0;
  for (const e of events) if (e.timestampMs > cutoff) n += e.replicaChange;
  return n;
}

/** The highest count the scale-up policies allow now (upstream's calculateScaleUpLimitWithScalingRules). */
export function scaleUpLimitWithRules(currentReplicas: number, upEvents: readonly ScaleEvent[], downEvents: readonly ScaleEvent[], rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? MAX_INT32 : MIN_INT32;
  for (const p of rules.policies) {
    const start = currentReplicas - replicasChangePerPeriod(p.periodSeconds, upEvents, nowMs) + replicasChangePerPeriod(p.periodSeconds, downEvents, nowMs);
    let proposed = 0;
    if (p.type === 'Pods') proposed = start + p.value;
    else if (p.type === 'Percent') proposed = Math.ceil(start * (1 + p.value / 100));
    result = pickMin ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

/** The lowest count the scale-down policies allow now (upstream's calculateScaleDownLimitWithBehaviors). */
export function scaleDownLimitWithRules(currentReplicas: number, upEvents: readonly ScaleEvent[], downEvents: readonly ScaleEvent[], rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? MIN_INT32 : MAX_INT32;
  for (const p of rules.policies) {
    const start = currentReplicas - replicasChangePerPeriod(p.periodSeconds, upEvents, nowMs) + replicasChangePerPeriod(p.periodSeconds, downEvents, nowMs);
    let proposed = 0;
    if (p.type === 'Pods') proposed = start - p.value;
    else if (p.type === 'Percent') proposed = Math.trunc(start * (1 - p.value / 100));
    result = pickMin ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** Clamp with behavior: policies' rate limits, then min/max (upstream's convertDesiredReplicasWithBehaviorRate). */
export function convertDesiredReplicasWithBehaviorRate(args: {
  currentReplicas: number;
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  behavior: Behavior;
  history: HpaHistory;
  nowMs: number;
}): { replicas: number; reason: LimitReason } {
  const { currentReplicas, desiredReplicas, history, nowMs } = args;
  if (desiredReplicas > currentReplicas) {
    let limit = scaleUpLimitWithRules(currentReplicas, history.scaleUpEvents, history.scaleDownEvents, args.behavior.scaleUp, nowMs);
    if (limit < currentReplicas) limit = currentReplicas; // recent scale-ups used up the budget: hold
    const [maxAllowed, reason]: [number, LimitReason] = args.maxReplicas > limit ? [limit, 'ScaleUpLimit'] : [args.maxReplicas, 'TooManyReplicas'];
    if (desiredReplicas > maxAllowed) return { replicas: maxAllowed, reason };
  } else if (desiredReplicas < currentReplicas) {
    let limit = scaleDownLimitWithRules(currentReplicas, history.scaleUpEvents, history.scaleDownEvents, args.behavior.scaleDown, nowMs);
    if (limit > currentReplicas) limit = currentReplicas;
    const [minAllowed, reason]: [number, LimitReason] = args.minReplicas < limit ? [limit, 'ScaleDownLimit'] : [args.minReplicas, 'TooFewReplicas'];
    if (desiredReplicas < minAllowed) return { replicas: minAllowed, reason };
  }
  return { replicas: desiredReplicas, reason: 'DesiredWithinRange' };
}

/** HPAs with `behavior` (upstream's normalizeDesiredReplicasWithBehaviors). */
export function normalizeDesiredReplicasWithBehaviors(args: {
  history: HpaHistory;
  behavior: V2HorizontalPodAutoscalerBehavior;
  currentReplicas: number;
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  downscaleStabilizationWindowMs: number;
  nowMs: number;
}): Normalized {
  const behavior = effectiveBehavior(args.behavior, args.downscaleStabilizationWindowMs);
  const s = stabilizeRecommendationWithBehaviors({
    recommendations: args.history.recommendations,
    currentReplicas: args.currentReplicas,
    desiredReplicas: args.desiredReplicas,
    scaleUpWindowSeconds: behavior.scaleUp.stabilizationWindowSeconds ?? 0,
    scaleDownWindowSeconds: behavior.scaleDown.stabilizationWindowSeconds ?? 0,
    nowMs: args.nowMs,
  });
  const able = s.replicas !== args.desiredReplicas ? s.stabilized : ableToScale.readyForNewScale();
  const history = { ...args.history, recommendations: s.recommendations };
  const c = convertDesiredReplicasWithBehaviorRate({
    currentReplicas: args.currentReplicas,
    desiredReplicas: s.replicas,
    minReplicas: args.minReplicas,
    maxReplicas: args.maxReplicas,
    behavior,
    history,
    nowMs: args.nowMs,
  });
  return { replicas: c.replicas, history, conditions: [able, scalingLimited(c.replicas !== s.replicas, c.reason)] };
}

// ---------------------------------------------------------------------------------------------
// scale events

function longestPolicyPeriod(rules: ScalingRules): number {
  return rules.policies.reduce((m, p) => Math.max(m, p.periodSeconds), 0);
}

function storeIn(events: readonly ScaleEvent[], longestPeriodSeconds: number, change: number, nowMs: number): ScaleEvent[] {
  const cutoff = nowMs - longestPeriodSeconds * 1000;
  const out = events.map((e) => (e.timestampMs < cutoff ? { ...e, outdated: true } : { ...e }));
  let oldIndex = -1;
  out.forEach((e, i) => {
    if (e.outdated) oldIndex = i;
  });
  const ev: ScaleEvent = { timestampMs: nowMs, replicaChange: change, outdated: false };
  if (oldIndex >= 0) out[oldIndex] = ev;
  else out.push(ev);
  return out;
}

/**
 * Records a successful rescale from prev to next replicas (upstream's storeScaleEvent): nothing for
 * HPAs without behavior; otherwise, events older than the direction's longest policy period are
 * marked outdated and the new one takes the last outdated slot, or is appended.
 */
export function storeScaleEvent(
  history: HpaHistory,
  behavior: V2HorizontalPodAutoscalerBehavior | undefined,
  downscaleStabilizationWindowMs: number,
  prevReplicas: number,
  newReplicas: number,
  nowMs: number,
): HpaHistory {
  if (!behavior) return history;
  const b = effectiveBehavior(behavior, downscaleStabilizationWindowMs);
  if (newReplicas > prevReplicas) {
    return { ...history, scaleUpEvents: storeIn(history.scaleUpEvents, longestPolicyPeriod(b.scaleUp), newReplicas - prevReplicas, nowMs) };
  }
  return { ...history, scaleDownEvents: storeIn(history.scaleDownEvents, longestPolicyPeriod(b.scaleDown), prevReplicas - newReplicas, nowMs) };
}
