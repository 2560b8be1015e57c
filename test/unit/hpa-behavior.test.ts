/**
 * The HPA's normalization: stabilization, the no-behavior scale-up limit, behavior policies and
 * the scale-event history, against the tables of upstream's horizontal_test.go (v1.35.4).
 */
import type { V2HPAScalingRules } from '@kubernetes/client-node';
import {
  convertDesiredReplicasWithBehaviorRate,
  convertDesiredReplicasWithRules,
  defaultScaleDownRules,
  defaultScaleUpRules,
  effectiveBehavior,
  normalizeDesiredReplicas,
  normalizeDesiredReplicasWithBehaviors,
  replicasChangePerPeriod,
  scaleDownLimitWithRules,
  scaleUpLimit,
  scaleUpLimitWithRules,
  stabilizeRecommendation,
  stabilizeRecommendationWithBehaviors,
  storeScaleEvent,
  type Behavior,
} from '../../workflows/hpa/behavior';
import { emptyHistory, type HpaHistory, type ScaleEvent, type TimedRecommendation } from '../../workflows/hpa/types';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MIN = 60_000;
const rec = (replicas: number, agoMs: number): TimedRecommendation => ({ replicas, timestampMs: NOW - agoMs });

/** upstream's generateScalingRules: Max policy, optional Pods and Percent policies, a stabilization window */
function rules(pods: number, podsPeriod: number, percent: number, percentPeriod: number, window: number): V2HPAScalingRules {
  const r: V2HPAScalingRules = { stabilizationWindowSeconds: window, selectPolicy: 'Max' };
  const policies = [];
  if (pods) policies.push({ type: 'Pods', value: pods, periodSeconds: podsPeriod });
  if (percent) policies.push({ type: 'Percent', value: percent, periodSeconds: percentPeriod });
  if (policies.length) r.policies = policies;
  return r;
}

/** upstream's generateEventsUniformDistribution: events at the centres of equal segments of the last periodSeconds */
function uniformEvents(changes: number[], periodSeconds: number): ScaleEvent[] {
  const seg = periodSeconds / changes.length;
  return changes.map((c, i) => ({ replicaChange: c, timestampMs: NOW - Math.trunc(periodSeconds - seg * (i + 1) + seg / 2) * 1000, outdated: false }));
}

describe('without behavior', () => {
  it('convertDesiredReplicasWithRules: within range, too few, zero, too many, scale-up limit', () => {
    expect(convertDesiredReplicasWithRules(5, 7, 3, 8)).toEqual({ replicas: 7, reason: 'DesiredWithinRange' });
    expect(convertDesiredReplicasWithRules(3, 1, 2, 8)).toEqual({ replicas: 2, reason: 'TooFewReplicas' });
    expect(convertDesiredReplicasWithRules(1, 0, 0, 10)).toEqual({ replicas: 0, reason: 'DesiredWithinRange' });
    expect(convertDesiredReplicasWithRules(20, 1000, 1, 10)).toEqual({ replicas: 10, reason: 'TooManyReplicas' });
    expect(convertDesiredReplicasWithRules(3, 1000, 1, 2000)).toEqual({ replicas: scaleUpLimit(3), reason: 'ScaleUpLimit' });
    expect(scaleUpLimit(3)).toBe(6);
    expect(scaleUpLimit(1)).toBe(4);
  });

  it('stabilizeRecommendation over the 5 min window, reusing the last stale slot (upstream TestNormalizeDesiredReplicas)', () => {
    const w = 5 * MIN;
    const cases: [TimedRecommendation[], number, number, number][] = [
      [[], 5, 5, 1],
      [[rec(4, 2 * MIN), rec(5, MIN)], 3, 5, 3],
      [[rec(1, 2 * MIN), rec(2, MIN)], 3, 3, 3],
      [[rec(10, 10 * MIN), rec(9, 9 * MIN)], 3, 3, 2],
      [[rec(10, 10 * MIN), rec(4, MIN), rec(5, 2 * MIN), rec(9, 9 * MIN)], 3, 5, 4],
    ];
    for (const [recs, desired, expected, logLength] of cases) {
      const s = stabilizeRecommendation(recs, desired, w, NOW);
      expect(s.replicas).toBe(expected);
      expect(s.recommendations).toHaveLength(logLength);
    }
    // the last entry older than the window is the one overwritten
    const s = stabilizeRecommendation([rec(10, 10 * MIN), rec(9, 9 * MIN)], 3, w, NOW);
    expect(s.recommendations).toEqual([rec(10, 10 * MIN), { replicas: 3, timestampMs: NOW }]);
  });

  it('normalizeDesiredReplicas sets ScaleDownStabilized / ReadyForNewScale and ScalingLimited', () => {
    const history: HpaHistory = { ...emptyHistory(), recommendations: [rec(10, 10 * MIN), rec(4, MIN)] };
    const n = normalizeDesiredReplicas({ history, currentReplicas: 4, desiredReplicas: 1, minReplicas: 1, maxReplicas: 5, downscaleStabilizationWindowMs: 5 * MIN, nowMs: NOW });
    expect(n.replicas).toBe(4);
    expect(n.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['AbleToScale', 'True', 'ScaleDownStabilized'],
      ['ScalingLimited', 'False', 'DesiredWithinRange'],
    ]);
    const up = normalizeDesiredReplicas({ history: emptyHistory(), currentReplicas: 3, desiredReplicas: 1000, minReplicas: 1, maxReplicas: 2000, downscaleStabilizationWindowMs: 5 * MIN, nowMs: NOW });
    expect(up.replicas).toBe(6);
    expect(up.conditions[0].reason).toBe('ReadyForNewScale');
    expect(up.conditions[1]).toEqual({
      type: 'ScalingLimited',
      status: 'True',
      reason: 'ScaleUpLimit',
      message: 'the desired replica count is increasing faster than the maximum scale rate',
    });
  });
});

describe('behavior policies (upstream TestScalingWithRules)', () => {
  interface Case {
    name: string;
    current: number;
    desired: number;
    min: number;
    max: number;
    up?: V2HPAScalingRules;
    down?: V2HPAScalingRules;
    upEvents?: ScaleEvent[];
    downEvents?: ScaleEvent[];
    expected: number;
    reason: string;
  }
  const cases: Case[] = [
    { name: 'within range', current: 5, desired: 7, min: 3, max: 8, expected: 7, reason: 'DesiredWithinRange' },
    { name: 'below min', current: 3, desired: 1, min: 2, max: 8, expected: 2, reason: 'TooFewReplicas' },
    { name: 'zero within range when min is 0', current: 1, desired: 0, min: 0, max: 10, expected: 0, reason: 'DesiredWithinRange' },
    { name: 'max < scale-up limit', current: 20, desired: 1000, min: 1, max: 10, expected: 10, reason: 'TooManyReplicas' },
    { name: 'more than max', current: 100, desired: 1000, min: 100, max: 150, expected: 150, reason: 'TooManyReplicas' },
    { name: 'user percent policy limits', current: 3, desired: 1000, min: 1, max: 2000, up: rules(0, 0, 1, 60, 0), expected: 4, reason: 'ScaleUpLimit' },
    { name: 'default scale-up behavior', current: 10, desired: 50, min: 1, max: 1000, expected: 20, reason: 'ScaleUpLimit' },
    { name: 'pods policy larger than percent', current: 10, desired: 500, min: 1, max: 1000, up: rules(100, 60, 100, 60, 0), expected: 110, reason: 'ScaleUpLimit' },
    { name: 'percent policy larger than pods', current: 10, desired: 500, min: 1, max: 1000, up: rules(2, 60, 100, 60, 0), expected: 20, reason: 'ScaleUpLimit' },
    { name: 'large pod policy', current: 10, desired: 50, min: 1, max: 1000, up: rules(100, 60, 0, 0, 0), expected: 50, reason: 'DesiredWithinRange' },
    { name: 'pod policy limit', current: 10, desired: 50, min: 1, max: 1000, up: rules(30, 60, 0, 0, 0), expected: 40, reason: 'ScaleUpLimit' },
    { name: 'percent policy limit', current: 10, desired: 50, min: 1, max: 1000, up: rules(0, 0, 200, 60, 0), expected: 30, reason: 'ScaleUpLimit' },
    { name: 'down: percent larger than pods', current: 100, desired: 2, min: 1, max: 1000, down: rules(20, 60, 1, 60, 300), expected: 80, reason: 'ScaleDownLimit' },
    { name: 'down: pods larger than percent', current: 100, desired: 2, min: 1, max: 1000, down: rules(2, 60, 1, 60, 300), expected: 98, reason: 'ScaleDownLimit' },
    { name: 'down: min limits a large pod policy', current: 10, desired: 0, min: 1, max: 1000, down: rules(100, 60, 0, 0, 300), expected: 1, reason: 'TooFewReplicas' },
    { name: 'down: min limits a large percent policy', current: 10, desired: 2, min: 5, max: 1000, down: rules(0, 0, 100, 60, 300), expected: 5, reason: 'TooFewReplicas' },
    { name: 'down: pod policy limit', current: 10, desired: 2, min: 1, max: 1000, down: rules(5, 60, 0, 0, 300), expected: 5, reason: 'ScaleDownLimit' },
    { name: 'down: percent policy allows', current: 10, desired: 5, min: 1, max: 1000, down: rules(0, 0, 50, 60, 300), expected: 5, reason: 'DesiredWithinRange' },
    { name: 'max with large pod policy and events', current: 100, desired: 500, min: 1, max: 200, up: rules(300, 60, 0, 0, 0), upEvents: uniformEvents([1, 5, 9], 120), expected: 200, reason: 'TooManyReplicas' },
    { name: 'recent scale-ups use up the budget: hold', current: 100, desired: 500, min: 1, max: 1000, up: rules(5, 120, 0, 0, 0), upEvents: uniformEvents([1, 5, 9], 120), expected: 100, reason: 'ScaleUpLimit' },
    { name: 'pod policy with previous scale-ups', current: 100, desired: 500, min: 1, max: 1000, up: rules(150, 120, 0, 0, 0), upEvents: uniformEvents([1, 5, 9], 120), expected: 235, reason: 'ScaleUpLimit' },
    { name: 'percent policy with previous scale-ups', current: 100, desired: 500, min: 1, max: 1000, up: rules(0, 0, 200, 120, 0), upEvents: uniformEvents([1, 5, 9], 120), expected: 255, reason: 'ScaleUpLimit' },
    {
      name: 'percent policy with previous scale-ups and downs',
      current: 6, desired: 24, min: 1, max: 1000, up: rules(0, 0, 300, 300, 0),
      upEvents: uniformEvents([4], 120), downEvents: uniformEvents([2], 120), expected: 16, reason: 'ScaleUpLimit',
    },
    { name: 'down: default policy ignores previous events', current: 10, desired: 5, min: 1, max: 1000, downEvents: uniformEvents([1, 5, 9], 120), expected: 5, reason: 'DesiredWithinRange' },
    { name: 'down: pod policy with previous events', current: 100, desired: 2, min: 1, max: 1000, down: rules(5, 120, 0, 0, 300), downEvents: uniformEvents([1, 5, 9], 120), expected: 100, reason: 'ScaleDownLimit' },
    { name: 'down: percent policy with previous events', current: 100, desired: 0, min: 1, max: 1000, down: rules(0, 0, 50, 120, 300), downEvents: uniformEvents([2, 4, 6], 120), expected: 56, reason: 'ScaleDownLimit' },
    {
      name: 'down: percent policy with previous ups and downs',
      current: 10, desired: 1, min: 1, max: 1000, down: rules(0, 0, 50, 180, 0),
      upEvents: uniformEvents([2], 120), downEvents: uniformEvents([4], 120), expected: 6, reason: 'ScaleDownLimit',
    },
    { name: 'down: previous events prevent more', current: 100, desired: 0, min: 1, max: 1000, down: rules(0, 0, 10, 120, 300), downEvents: uniformEvents([10, 10, 10], 120), expected: 100, reason: 'ScaleDownLimit' },
    { name: 'down: previous events still allow more', current: 10, desired: 5, min: 1, max: 1000, down: rules(0, 0, 1000, 120, 300), downEvents: uniformEvents([10, 10, 10], 120), expected: 5, reason: 'DesiredWithinRange' },
    { name: 'up: events in one of two periods', current: 100, desired: 200, min: 1, max: 1000, up: rules(1000, 30, 100, 60, 0), upEvents: uniformEvents([8, 12, 9, 11], 120), expected: 200, reason: 'DesiredWithinRange' },
  ];
  it.each(cases)('$name', (tc) => {
    const behavior: Behavior = { scaleUp: defaultScaleUpRules(tc.up), scaleDown: defaultScaleDownRules(tc.down) };
    const history: HpaHistory = { recommendations: [], scaleUpEvents: tc.upEvents ?? [], scaleDownEvents: tc.downEvents ?? [] };
    const r = convertDesiredReplicasWithBehaviorRate({ currentReplicas: tc.current, desiredReplicas: tc.desired, minReplicas: tc.min, maxReplicas: tc.max, behavior, history, nowMs: NOW });
    expect(r).toEqual({ replicas: tc.expected, reason: tc.reason });
  });

  it('Min select policy picks the smaller change each way; Disabled holds', () => {
    const r: V2HPAScalingRules = {
      stabilizationWindowSeconds: 300,
      selectPolicy: 'Min',
      policies: [
        { type: 'Pods', value: 2, periodSeconds: 60 },
        { type: 'Percent', value: 50, periodSeconds: 60 },
      ],
    };
    expect(scaleUpLimitWithRules(1, [], [], defaultScaleUpRules(r), NOW)).toBe(2);
    expect(scaleDownLimitWithRules(5, [], [], defaultScaleDownRules(r), NOW)).toBe(3);
    const off = defaultScaleUpRules({ selectPolicy: 'Disabled' });
    expect(scaleUpLimitWithRules(7, [], [], off, NOW)).toBe(7);
    const behavior: Behavior = { scaleUp: off, scaleDown: defaultScaleDownRules({ selectPolicy: 'Disabled' }) };
    expect(convertDesiredReplicasWithBehaviorRate({ currentReplicas: 7, desiredReplicas: 20, minReplicas: 1, maxReplicas: 50, behavior, history: emptyHistory(), nowMs: NOW })).toEqual({ replicas: 7, reason: 'ScaleUpLimit' });
    expect(convertDesiredReplicasWithBehaviorRate({ currentReplicas: 7, desiredReplicas: 2, minReplicas: 1, maxReplicas: 50, behavior, history: emptyHistory(), nowMs: NOW })).toEqual({ replicas: 7, reason: 'ScaleDownLimit' });
  });

  it('API defaults and the downscale flag fill an unset scale-down window', () => {
    const b = effectiveBehavior({ scaleUp: { stabilizationWindowSeconds: 60 } }, 5 * MIN);
    expect(b.scaleUp).toEqual({ stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] });
    expect(b.scaleDown).toEqual({ stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
    expect(effectiveBehavior({ scaleDown: { stabilizationWindowSeconds: 30 } }, 5 * MIN).scaleDown.stabilizationWindowSeconds).toBe(30);
  });
});

describe('scale events (upstream TestStoreScaleEvents)', () => {
  const ev = (change: number, agoSeconds: number): ScaleEvent => ({ replicaChange: change, timestampMs: NOW - agoSeconds * 1000, outdated: false });
  const cases: { name: string; prev: ScaleEvent[]; rules?: V2HPAScalingRules; expected: [number, boolean][]; changeIn60: number }[] = [
    { name: 'no behavior stores nothing', prev: [], expected: [], changeIn60: 0 },
    { name: 'first event with behavior', prev: [], rules: rules(10, 60, 100, 60, 0), expected: [[5, false]], changeIn60: 0 },
    { name: 'no behavior leaves an outdated entry', prev: [ev(7, 61)], expected: [[7, false]], changeIn60: 0 },
    { name: 'an outdated entry is replaced', prev: [ev(7, 61)], rules: rules(10, 60, 100, 60, 0), expected: [[5, false]], changeIn60: 0 },
    { name: 'a current entry stays', prev: [ev(7, 58)], rules: rules(10, 60, 100, 60, 0), expected: [[7, false], [5, false]], changeIn60: 7 },
    { name: 'one of two replaced', prev: [ev(7, 61), ev(6, 59)], rules: rules(10, 60, 0, 0, 0), expected: [[5, false], [6, false]], changeIn60: 6 },
    {
      name: 'different periods: the last outdated slot is reused, the other stays marked',
      prev: [ev(8, 29), ev(6, 59), ev(7, 61), ev(9, 61)],
      rules: rules(10, 60, 100, 30, 0),
      expected: [[8, false], [6, false], [7, true], [5, false]],
      changeIn60: 14,
    },
    { name: 'both current', prev: [ev(7, 58), ev(6, 59)], rules: rules(10, 120, 100, 30, 0), expected: [[7, false], [6, false], [5, false]], changeIn60: 13 },
  ];
  it.each(cases)('$name', (tc) => {
    expect(replicasChangePerPeriod(60, tc.prev, NOW)).toBe(tc.changeIn60);
    const up = storeScaleEvent({ ...emptyHistory(), scaleUpEvents: tc.prev }, tc.rules ? { scaleUp: tc.rules } : undefined, 5 * MIN, 10, 15, NOW);
    expect(up.scaleUpEvents.map((e) => [e.replicaChange, e.outdated])).toEqual(tc.expected);
    const down = storeScaleEvent({ ...emptyHistory(), scaleDownEvents: tc.prev }, tc.rules ? { scaleDown: tc.rules } : undefined, 5 * MIN, 10, 5, NOW);
    expect(down.scaleDownEvents.map((e) => [e.replicaChange, e.outdated])).toEqual(tc.expected);
  });
});

describe('stabilization with behavior (upstream TestNormalizeDesiredReplicasWithBehavior)', () => {
  const cases: { name: string; recs: TimedRecommendation[]; current: number; desired: number; expected: number; log?: number[]; up?: number; down?: number }[] = [
    { name: 'empty, scaling down', recs: [], current: 100, desired: 5, expected: 5, log: [5] },
    { name: 'scale-down stabilization', recs: [rec(4, 2 * MIN), rec(5, MIN)], current: 100, desired: 3, expected: 5, log: [4, 5, 3], down: 180 },
    { name: 'scale-up stabilization', recs: [rec(4, 2 * MIN), rec(5, MIN)], current: 1, desired: 7, expected: 4, log: [4, 5, 7], up: 300 },
    { name: 'no scale-down stabilization', recs: [rec(1, 2 * MIN), rec(2, MIN)], current: 100, desired: 3, expected: 3, log: [1, 2, 3], up: 300 },
    { name: 'no scale-up stabilization', recs: [rec(4, 2 * MIN), rec(5, MIN)], current: 1, desired: 3, expected: 3, log: [4, 5, 3], down: 300 },
    { name: 'reuse a stale slot going down', recs: [rec(10, 10 * MIN), rec(9, 9 * MIN)], current: 100, desired: 3, expected: 3, log: [10, 3] },
    { name: 'reuse a stale slot going up', recs: [rec(10, 10 * MIN), rec(9, 9 * MIN)], current: 1, desired: 100, expected: 100, log: [10, 100] },
    { name: 'down stabilization reusing one stale slot', recs: [rec(10, 10 * MIN), rec(4, MIN), rec(5, 2 * MIN), rec(9, 9 * MIN)], current: 100, desired: 3, expected: 5, log: [10, 4, 5, 3], down: 180 },
    { name: 'no up when the proposal goes down', recs: [rec(2, 100 * MIN), rec(3, 3 * MIN)], current: 2, desired: 1, expected: 2, up: 300, down: 300 },
    { name: 'no down when the proposal goes up', recs: [rec(2, 100 * MIN), rec(1, 3 * MIN)], current: 2, desired: 3, expected: 2, up: 300, down: 300 },
  ];
  it.each(cases)('$name', (tc) => {
    const s = stabilizeRecommendationWithBehaviors({
      recommendations: tc.recs,
      currentReplicas: tc.current,
      desiredReplicas: tc.desired,
      scaleUpWindowSeconds: tc.up ?? 0,
      scaleDownWindowSeconds: tc.down ?? 0,
      nowMs: NOW,
    });
    expect(s.replicas).toBe(tc.expected);
    if (tc.log) expect(s.recommendations.map((r) => r.replicas)).toEqual(tc.log);
  });

  it('normalizeDesiredReplicasWithBehaviors: ScaleUpStabilized then ScalingLimited, and the history is JSON-safe', () => {
    const history: HpaHistory = { ...emptyHistory(), recommendations: [rec(4, 2 * MIN), rec(5, MIN)] };
    const n = normalizeDesiredReplicasWithBehaviors({
      history: JSON.parse(JSON.stringify(history)) as HpaHistory,
      behavior: { scaleUp: { stabilizationWindowSeconds: 300 } },
      currentReplicas: 1,
      desiredReplicas: 7,
      minReplicas: 1,
      maxReplicas: 10,
      downscaleStabilizationWindowMs: 5 * MIN,
      nowMs: NOW,
    });
    expect(n.replicas).toBe(4);
    expect(n.conditions).toEqual([
      { type: 'AbleToScale', status: 'True', reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' },
      { type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' },
    ]);
    expect(JSON.parse(JSON.stringify(n.history))).toEqual(n.history);
  });
});
