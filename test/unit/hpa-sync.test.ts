/**
 * Whole HPA syncs through the pure layer: metric statuses as upstream writes them, the
 * AbleToScale / ScalingActive / ScalingLimited conditions, the Events, and the stabilization
 * timeline kept in a JSON history across syncs (as the workflow will keep it across failovers).
 */
import type { V1Pod, V2HorizontalPodAutoscalerBehavior, V2MetricSpec } from '@kubernetes/client-node';
import { setCondition } from '../../workflows/hpa/conditions';
import { checkSelector, finishSync, needsMetrics, planSync, type HpaSpecView, type HpaStatusView, type RescaleOutcome, type SyncResult } from '../../workflows/hpa/logic';
import { computeReplicasForMetrics, goLabelSelectorString, milliQuantity, milliValueOf, readPlanFor, type MetricReading } from '../../workflows/hpa/metric-status';
import { hpaPodFromPod, podMetricsItem } from '../../workflows/hpa/projections';
import { samplesFromPodMetrics } from '../../workflows/hpa/replica-calculator';
import { DEFAULT_HPA_CONFIG, emptyHistory, type HpaHistory, type HpaPod } from '../../workflows/hpa/types';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const cpu50: V2MetricSpec = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } };

function runningPods(n: number, requestMilli = 100): HpaPod[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `web-${i}`,
    phase: 'Running',
    startTimeMs: T0 - 3_600_000,
    ready: { status: 'True', lastTransitionTimeMs: T0 - 3_500_000 },
    containers: [{ name: 'app', requestsMilli: { cpu: requestMilli } }],
  }));
}

function cpuReading(pods: HpaPod[], usageMilli: number, nowMs: number): MetricReading {
  return {
    podSamples: samplesFromPodMetrics(
      pods.map((p) => ({ name: p.name, timestampMs: nowMs - 1000, windowMs: 15_000, containers: [{ name: 'app', usageMilli: { cpu: usageMilli } }] })),
      'cpu',
      '',
    ),
  };
}

interface World {
  spec: HpaSpecView;
  status?: HpaStatusView;
  history: HpaHistory;
  replicas: number;
}

/** one sync with CPU usage per pod; a rescale succeeds unless told otherwise; the history goes through JSON as workflow state does */
function sync(w: World, usageMilli: number, nowMs: number, outcome: RescaleOutcome = { ok: true }): SyncResult {
  const pods = runningPods(w.replicas);
  const ctx = { namespace: 'default', specReplicas: w.replicas, statusReplicas: w.replicas, pods, tolerances: { scaleDown: 0.1, scaleUp: 0.1 }, config: DEFAULT_HPA_CONFIG, nowMs };
  const specs = w.spec.metrics ?? [cpu50];
  const metrics = needsMetrics(w.spec, w.replicas) ? computeReplicasForMetrics(specs, specs.map(() => cpuReading(pods, usageMilli, nowMs)), ctx) : undefined;
  const input = { spec: w.spec, status: w.status, currentReplicas: w.replicas, metrics, history: w.history, config: DEFAULT_HPA_CONFIG, nowMs };
  const plan = planSync(input);
  const result = finishSync(input, plan, plan.rescale ? outcome : undefined);
  w.status = result.status;
  w.history = JSON.parse(JSON.stringify(result.history)) as HpaHistory;
  if (plan.rescale && outcome.ok) w.replicas = plan.desiredReplicas;
  return result;
}

const conds = (r: SyncResult) => (r.status.conditions ?? []).map((c) => [c.type, c.status, c.reason]);

describe('a sync end to end', () => {
  it('acceptance: 2 replicas at 150m of 100m against 50% propose 6; without behavior the first step is capped at 4', () => {
    const w: World = { spec: { minReplicas: 1, maxReplicas: 10 }, history: emptyHistory(), replicas: 2 };
    const r = sync(w, 150, T0);
    expect(w.replicas).toBe(4);
    expect(r.events).toEqual([{ type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target' }]);
    expect(r.status.currentMetrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 150, averageValue: '150m' } } }]);
    expect(r.status).toMatchObject({ currentReplicas: 2, desiredReplicas: 4, lastScaleTime: '2026-11-24T12:00:00Z' });
    expect(r.status.conditions).toEqual([
      { type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 4', lastTransitionTime: '2026-11-24T12:00:00Z' },
      {
        type: 'ScalingActive',
        status: 'True',
        reason: 'ValidMetricFound',
        message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
        lastTransitionTime: '2026-11-24T12:00:00Z',
      },
      { type: 'ScalingLimited', status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate', lastTransitionTime: '2026-11-24T12:00:00Z' },
    ]);
  });

  it('acceptance with an (API-defaulted) behavior: straight to 6', () => {
    const w: World = { spec: { minReplicas: 1, maxReplicas: 10, behavior: {} }, history: emptyHistory(), replicas: 2 };
    const r = sync(w, 150, T0);
    expect(w.replicas).toBe(6);
    expect(r.events[0].message).toBe('New size: 6; reason: cpu resource utilization (percentage of request) above target');
    expect(conds(r)).toEqual([
      ['AbleToScale', 'True', 'SucceededRescale'],
      ['ScalingActive', 'True', 'ValidMetricFound'],
      ['ScalingLimited', 'False', 'DesiredWithinRange'],
    ]);
    expect(w.history.scaleUpEvents).toEqual([{ timestampMs: T0, replicaChange: 4, outdated: false }]);
  });

  it('a 30 s scale-down window: no scale-down until the last high recommendation is 30 s old, every sync through JSON', () => {
    const behavior: V2HorizontalPodAutoscalerBehavior = { scaleDown: { stabilizationWindowSeconds: 30 } };
    const w: World = { spec: { minReplicas: 1, maxReplicas: 10, behavior }, history: emptyHistory(), replicas: 6 };
    const timeline: [number, number, string][] = [];
    for (let s = 0; s <= 45; s += 5) {
      const usage = s < 10 ? 50 : 15; // 50% (steady at 6) until 10 s, then 15% (2 replicas' worth)
      const r = sync(w, usage, T0 + s * 1000);
      timeline.push([s, w.replicas, (r.status.conditions ?? []).find((c) => c.type === 'AbleToScale')?.reason ?? '']);
    }
    expect(timeline).toEqual([
      [0, 6, 'ReadyForNewScale'],
      [5, 6, 'ReadyForNewScale'],
      [10, 6, 'ScaleDownStabilized'],
      [15, 6, 'ScaleDownStabilized'],
      [20, 6, 'ScaleDownStabilized'],
      [25, 6, 'ScaleDownStabilized'],
      [30, 6, 'ScaleDownStabilized'],
      [35, 2, 'SucceededRescale'],
      // 15m per pod is still below target at 2 replicas (proposal 1), held by the window's recommendations of 2
      [40, 2, 'ScaleDownStabilized'],
      [45, 2, 'ScaleDownStabilized'],
    ]);
    // the recommendation list stays bounded: stale entries are overwritten
    expect(w.history.recommendations.length).toBeLessThanOrEqual(8);
  });

  it('without behavior the 5 min --horizontal-pod-autoscaler-downscale-stabilization window holds', () => {
    const w: World = { spec: { minReplicas: 1, maxReplicas: 10 }, history: emptyHistory(), replicas: 6 };
    sync(w, 50, T0);
    let firstDown = -1;
    for (let s = 15; s <= 330; s += 15) {
      sync(w, 15, T0 + s * 1000);
      if (w.replicas < 6 && firstDown < 0) firstDown = s;
    }
    expect(firstDown).toBe(315);
    expect(w.replicas).toBe(2);
  });

  it('ScalingDisabled at zero replicas, and out-of-range counts rescale without metrics', () => {
    const zero: World = { spec: { minReplicas: 1, maxReplicas: 10 }, history: emptyHistory(), replicas: 0 };
    const r0 = sync(zero, 100, T0);
    expect(r0.events).toEqual([]);
    expect(r0.status).toMatchObject({ currentReplicas: 0, desiredReplicas: 0 });
    expect(r0.status.conditions?.[1]).toMatchObject({ type: 'ScalingActive', status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });

    const above: World = { spec: { minReplicas: 1, maxReplicas: 10 }, history: emptyHistory(), replicas: 12 };
    const r1 = sync(above, 100, T0);
    expect(r1.events[0].message).toBe('New size: 10; reason: Current number of replicas above Spec.MaxReplicas');
    expect(r1.status.currentMetrics).toBeUndefined();
    const below: World = { spec: { minReplicas: 3, maxReplicas: 10 }, history: emptyHistory(), replicas: 1 };
    expect(sync(below, 100, T0).events[0].message).toBe('New size: 3; reason: Current number of replicas below Spec.MinReplicas');
  });

  it('a failed scale update: FailedRescale, AbleToScale FailedUpdateScale, old desired count kept', () => {
    const w: World = { spec: { minReplicas: 1, maxReplicas: 10, behavior: {} }, history: emptyHistory(), replicas: 2, status: { currentReplicas: 2, desiredReplicas: 2 } };
    const r = sync(w, 150, T0, { ok: false, error: 'conflict' });
    expect(w.replicas).toBe(2);
    expect(r.events).toEqual([{ type: 'Warning', reason: 'FailedRescale', message: 'New size: 6; reason: cpu resource utilization (percentage of request) above target; error: conflict' }]);
    expect(r.status.conditions?.[0]).toMatchObject({ type: 'AbleToScale', status: 'False', reason: 'FailedUpdateScale', message: 'the HPA controller was unable to update the target scale: conflict' });
    expect(r.status.desiredReplicas).toBe(2);
    expect(w.history.scaleUpEvents).toEqual([]);
  });
});

describe('metrics that fail', () => {
  const ctx = (replicas: number) => ({
    namespace: 'default', specReplicas: replicas, statusReplicas: replicas, pods: runningPods(replicas), tolerances: { scaleDown: 0.1, scaleUp: 0.1 }, config: DEFAULT_HPA_CONFIG, nowMs: T0,
  });

  it('a resource metric read error: FailedGetResourceMetric event and condition, FailedComputeMetricsReplicas, a { type: "" } status', () => {
    const m = computeReplicasForMetrics([cpu50], [{ podSamples: { ok: false, error: 'unable to fetch metrics from resource metrics API: the server is currently unable to handle the request' } }], ctx(3));
    const inner = 'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server is currently unable to handle the request';
    expect(m.replicas).toBe(-1);
    expect(m.statuses).toEqual([{ type: '' }]);
    expect(m.condition).toEqual({ type: 'ScalingActive', status: 'False', reason: 'FailedGetResourceMetric', message: `the HPA was unable to compute the replica count: ${inner}` });
    expect(m.events).toEqual([
      { type: 'Warning', reason: 'FailedGetResourceMetric', message: inner },
      { type: 'Warning', reason: 'FailedComputeMetricsReplicas', message: `invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${inner}` },
    ]);
    const input = { spec: { maxReplicas: 10 }, status: { currentReplicas: 3, desiredReplicas: 5, lastScaleTime: '2026-11-24T11:00:00Z' }, currentReplicas: 3, metrics: m, history: emptyHistory(), config: DEFAULT_HPA_CONFIG, nowMs: T0 };
    const res = finishSync(input, planSync(input), undefined);
    expect(res.status).toMatchObject({ currentReplicas: 3, desiredReplicas: 5, lastScaleTime: '2026-11-24T11:00:00Z', currentMetrics: [{ type: '' }] });
    expect(conds(res)).toEqual([
      ['AbleToScale', 'True', 'SucceededGetScale'],
      ['ScalingActive', 'False', 'FailedGetResourceMetric'],
    ]);
  });

  it('one invalid metric with another scaling up goes ahead; with another scaling down it holds', () => {
    const cheddar = { type: 'CheddarCheese' } as V2MetricSpec;
    const cpu30: V2MetricSpec = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 30 } } };
    const c = ctx(3);
    const up = computeReplicasForMetrics([cpu30, cheddar], [cpuReading(c.pods, 40, T0), {}], c);
    expect(up.replicas).toBe(4);
    expect(up.condition.reason).toBe('ValidMetricFound');
    expect(up.error).toBe('invalid metrics (1 invalid out of 2), first error is: unknown metric source type "CheddarCheese"');
    expect(up.events).toEqual([{ type: 'Warning', reason: 'InvalidMetricSourceType', message: 'unknown metric source type "CheddarCheese"' }]);
    const down = computeReplicasForMetrics([cpu30, cheddar], [cpuReading(c.pods, 10, T0), {}], c);
    expect(down.replicas).toBe(-1);
    expect(down.condition).toMatchObject({ reason: 'InvalidMetricSourceType', message: 'the HPA was unable to compute the replica count: unknown metric source type "CheddarCheese"' });
  });

  it('the largest proposal wins among several metrics', () => {
    const c = ctx(3);
    const cpu80: V2MetricSpec = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } };
    const m = computeReplicasForMetrics([cpu80, cpu50], [cpuReading(c.pods, 100, T0), cpuReading(c.pods, 100, T0)], c);
    expect(m.replicas).toBe(6);
    expect(m.statuses).toHaveLength(2);
  });

  it('selector problems: SelectorRequired, InvalidSelector, AmbiguousSelector', () => {
    expect(checkSelector('', undefined, [], 'default/web')).toMatchObject({
      ok: false,
      error: 'selector is required',
      condition: { reason: 'InvalidSelector', message: 'the HPA target\'s scale is missing a selector' },
      event: { type: 'Warning', reason: 'SelectorRequired', message: 'selector is required' },
    });
    expect(checkSelector('a in (', 'unable to parse requirement', [], 'default/web')).toMatchObject({
      ok: false,
      condition: { reason: 'InvalidSelector', message: 'couldn\'t convert selector into a corresponding internal selector object: unable to parse requirement' },
      event: { reason: 'InvalidSelector' },
    });
    expect(checkSelector('app=web', undefined, ['default/web', 'default/other'], 'default/web')).toMatchObject({
      ok: false,
      condition: { reason: 'AmbiguousSelector', message: 'pods by selector app=web are controlled by multiple HPAs: [default/other default/web]' },
      event: { reason: 'AmbiguousSelector' },
    });
    expect(checkSelector('app=web', undefined, ['default/web'], 'default/web')).toEqual({ ok: true });
    const sel = checkSelector('', undefined, [], 'default/web');
    const input = { spec: { maxReplicas: 10 }, status: undefined, currentReplicas: 3, selector: sel, history: emptyHistory(), config: DEFAULT_HPA_CONFIG, nowMs: T0 };
    const res = finishSync(input, planSync(input), undefined);
    expect(res.events.map((e) => e.reason)).toEqual(['SelectorRequired', 'FailedComputeMetricsReplicas']);
    expect(res.status.currentMetrics).toBeUndefined();
  });
});

describe('metric statuses and names', () => {
  const c = {
    namespace: 'default', specReplicas: 3, statusReplicas: 3, pods: runningPods(3), tolerances: { scaleDown: 0.1, scaleUp: 0.1 }, config: DEFAULT_HPA_CONFIG, nowMs: T0,
  };

  it('Pods, Object (value and average) and External statuses with upstream quantities and metric names', () => {
    const selector = { matchLabels: { queue: 'jobs', a: 'b' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }] };
    const specs: V2MetricSpec[] = [
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '15' } } },
      { type: 'Object', object: { describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'some-deployment' }, metric: { name: 'qps' }, target: { type: 'Value', value: '15' } } },
      { type: 'Object', object: { describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'some-deployment' }, metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '5' } } },
      { type: 'External', external: { metric: { name: 'queue', selector }, target: { type: 'AverageValue', averageValue: '2150m' } } },
      { type: 'External', external: { metric: { name: 'lag' }, target: { type: 'Value', value: '4400m' } } },
    ];
    const readings: MetricReading[] = [
      { podSamples: { ok: true, value: { timestampMs: T0, samples: [20000, 10000, 30000].map((v, i) => ({ pod: `web-${i}`, milli: v, timestampMs: T0, windowMs: 60_000 })) } } },
      { object: { ok: true, value: { milli: 20000, timestampMs: T0 } } },
      { object: { ok: true, value: { milli: 20000, timestampMs: T0 } } },
      { external: { ok: true, value: { millis: [8600], timestampMs: T0 } } },
      { external: { ok: true, value: { millis: [8600], timestampMs: T0 } } },
    ];
    const m = computeReplicasForMetrics(specs, readings, c);
    expect(m.statuses).toEqual([
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '20' } } },
      { type: 'Object', object: { describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'some-deployment' }, metric: { name: 'qps' }, current: { value: '20' } } },
      { type: 'Object', object: { describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'some-deployment' }, metric: { name: 'rps' }, current: { averageValue: '6667m' } } },
      { type: 'External', external: { metric: { name: 'queue', selector }, current: { averageValue: '2867m' } } },
      { type: 'External', external: { metric: { name: 'lag' }, current: { value: '8600m' } } },
    ]);
    expect(m.replicas).toBe(6);
    expect(m.metricName).toBe('external metric lag(nil)');
    expect(goLabelSelectorString(selector)).toBe(
      '&LabelSelector{MatchLabels:map[string]string{a: b,queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,Values:[x y],},},}',
    );
  });

  it('memory averages print in BinarySI; ContainerResource names its container', () => {
    const pods: HpaPod[] = runningPods(2).map((p) => ({ ...p, containers: [{ name: 'app', requestsMilli: { memory: 128 * 2 ** 20 * 1000 } }] }));
    const mem: V2MetricSpec = { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } } };
    const reading: MetricReading = {
      podSamples: samplesFromPodMetrics(pods.map((p) => ({ name: p.name, timestampMs: T0, windowMs: 60_000, containers: [{ name: 'app', usageMilli: { memory: 64 * 2 ** 20 * 1000 } }] })), 'memory', 'app'),
    };
    const m = computeReplicasForMetrics([mem], [reading], { ...c, specReplicas: 2, statusReplicas: 2, pods });
    expect(m.statuses).toEqual([{ type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', current: { averageUtilization: 50, averageValue: '64Mi' } } }]);
    expect(m.metricName).toBe('memory container resource utilization (percentage of request)');
    expect(readPlanFor(mem)).toEqual({ kind: 'resource', resource: 'memory', container: 'app' });
  });

  it('quantities: MilliValue rounds up, NewMilliQuantity prints canonically', () => {
    expect(milliValueOf('100m')).toBe(100);
    expect(milliValueOf('1.5')).toBe(1500);
    expect(milliValueOf('1n')).toBe(1);
    expect(milliValueOf('1Ki')).toBe(1024000);
    expect(milliQuantity(1500)).toBe('1500m');
    expect(milliQuantity(2000)).toBe('2');
    expect(milliQuantity(1024000, 'BinarySI')).toBe('1Ki');
  });

  it('setCondition moves lastTransitionTime only when the status changes', () => {
    const a = setCondition(undefined, { type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale', message: 'm1' }, '2026-11-24T12:00:00Z');
    const b = setCondition(a, { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'm2' }, '2026-11-24T12:05:00Z');
    expect(b).toEqual([{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'm2', lastTransitionTime: '2026-11-24T12:00:00Z' }]);
    const c2 = setCondition(b, { type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: 'm3' }, '2026-11-24T12:10:00Z');
    expect(c2[0].lastTransitionTime).toBe('2026-11-24T12:10:00Z');
    expect(a[0].reason).toBe('SucceededGetScale');
  });
});

describe('projections from API objects', () => {
  it('a Pod becomes an HpaPod; a PodMetrics a PodMetricsItem; together they give the acceptance proposal', () => {
    const pod: V1Pod = {
      metadata: { name: 'web-0' },
      spec: {
        containers: [{ name: 'app', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
        initContainers: [{ name: 'log', restartPolicy: 'Always', resources: { requests: { cpu: '10m' } } }],
      },
      status: { phase: 'Running', startTime: new Date(T0 - 600_000), conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 - 590_000) }] },
    };
    const p = hpaPodFromPod(pod);
    expect(p).toEqual({
      name: 'web-0',
      phase: 'Running',
      startTimeMs: T0 - 600_000,
      ready: { status: 'True', lastTransitionTimeMs: T0 - 590_000 },
      containers: [{ name: 'app', requestsMilli: { cpu: 100, memory: 67108864000 } }],
      initContainers: [{ name: 'log', restartable: true, requestsMilli: { cpu: 10 } }],
    });
    const item = podMetricsItem({ metadata: { name: 'web-0' }, timestamp: '2026-11-24T11:59:50Z', window: '15.2s', containers: [{ name: 'app', usage: { cpu: '140m' } }, { name: 'log', usage: { cpu: '10m' } }] });
    expect(item).toEqual({ name: 'web-0', timestampMs: T0 - 10_000, windowMs: 15_200, containers: [{ name: 'app', usageMilli: { cpu: 140 } }, { name: 'log', usageMilli: { cpu: 10 } }] });
    const p1 = { ...p, name: 'web-1' };
    const m = computeReplicasForMetrics([cpu50], [{ podSamples: samplesFromPodMetrics([item, { ...item, name: 'web-1' }], 'cpu', '') }], {
      namespace: 'default', specReplicas: 2, statusReplicas: 2, pods: [p, p1], tolerances: { scaleDown: 0.1, scaleUp: 0.1 }, config: DEFAULT_HPA_CONFIG, nowMs: T0,
    });
    // (140m + 10m) of (100m + 10m) requested: 136% against 50%
    expect(m).toMatchObject({ replicas: 6, statuses: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 136, averageValue: '150m' } } }] });
  });
});
