/**
 * The HPA's replica calculation against the cases of upstream's replica_calculator_test.go
 * (v1.35.4): same pods, levels, requests and expectations, run through our pure functions.
 */
import {
  calculateRequests,
  externalMetricReplicas,
  externalPerPodMetricReplicas,
  groupPods,
  objectMetricReplicas,
  objectPerPodMetricReplicas,
  podsMetricReplicas,
  rawResourceReplicas,
  resourceReplicas,
  samplesFromCustomMetrics,
  samplesFromPodMetrics,
  tolerancesFor,
  valuesFromExternalMetrics,
  MAX_INT32,
  MAX_INT64,
  type PodMetricsItem,
} from '../../workflows/hpa/replica-calculator';
import type { HpaPod, PodSample, Tolerances } from '../../workflows/hpa/types';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const GO_ZERO = -62135596800000;
/** upstream's test settings: 2 min CPU initialization period, 10 s initial readiness delay */
const CONFIG = { cpuInitializationPeriodMs: 120_000, initialReadinessDelayMs: 10_000, podLevelResources: true };
const TOL: Tolerances = { scaleDown: 0.1, scaleUp: 0.1 };
const HOT = NOW;
const COOL = NOW - 3 * 60_000;

interface Case {
  currentReplicas: number;
  podReadiness?: string[];
  podStartTime?: number[];
  podPhase?: string[];
  podDeletion?: boolean[];
  /** per pod, the request of each of its two containers (milli) */
  requests?: number[];
  /** per pod metrics item, the usage of each container */
  levels?: number[][];
  podNames?: string[];
  container?: string;
  tolerances?: Tolerances;
}

/** the pods upstream's harness lists: test-pod-<i>, two containers each carrying the pod's request */
function pods(tc: Case): HpaPod[] {
  const n = Math.max(tc.currentReplicas, tc.podPhase?.length ?? 0);
  return Array.from({ length: n }, (_, i) => {
    const req: Record<string, number> = tc.requests && i < tc.requests.length ? { cpu: tc.requests[i] } : {};
    return {
      name: `test-pod-${i}`,
      phase: tc.podPhase?.[i] ?? 'Running',
      deleting: tc.podDeletion?.[i] ?? false,
      startTimeMs: tc.podStartTime?.[i] ?? GO_ZERO,
      ready: { status: tc.podReadiness?.[i] ?? 'True' },
      containers: [
        { name: 'container1', requestsMilli: { ...req } },
        { name: 'container2', requestsMilli: { ...req } },
      ],
    };
  });
}

function podMetrics(tc: Case): PodMetricsItem[] {
  return (tc.levels ?? []).map((lv, i) => ({
    name: tc.podNames?.[i] ?? `test-pod-${i}`,
    timestampMs: GO_ZERO,
    windowMs: 60_000,
    containers: lv.map((v, j) => ({ name: `container${j + 1}`, usageMilli: { cpu: v } })),
  }));
}

/** each pod's containers all at the same level, as upstream's makePodMetricLevels */
function levels(...perContainer: number[]): number[][] {
  return perContainer.map((v) => [v, v]);
}

function runResource(tc: Case, targetUtilization: number) {
  return resourceReplicas({
    currentReplicas: tc.currentReplicas,
    tolerances: tc.tolerances ?? TOL,
    pods: pods(tc),
    config: CONFIG,
    nowMs: NOW,
    targetUtilization,
    resource: 'cpu',
    container: tc.container ?? '',
    metrics: samplesFromPodMetrics(podMetrics(tc), 'cpu', tc.container ?? ''),
  });
}

function expectResource(tc: Case, target: number, replicas: number, utilization: number, raw: number): void {
  const r = runResource(tc, target);
  expect(r).toMatchObject({ ok: true, replicas, utilization, rawUtilization: raw });
}

function customSamples(values: number[]) {
  return samplesFromCustomMetrics(values.map((v, i) => ({ pod: `test-pod-${i}`, milli: v, timestampMs: GO_ZERO })));
}

function runPods(tc: Case, values: number[], targetUsage: number) {
  return podsMetricReplicas({
    currentReplicas: tc.currentReplicas,
    tolerances: tc.tolerances ?? TOL,
    pods: pods(tc),
    config: CONFIG,
    nowMs: NOW,
    targetUsage,
    metricName: 'qps',
    metrics: customSamples(values),
  });
}

const DEPLOYMENT = { kind: 'Deployment', apiVersion: 'apps/v1', name: 'some-deployment' };
const objectValue = (milli: number) => ({ ok: true as const, value: { milli, timestampMs: NOW } });

describe('Resource utilization', () => {
  it('acceptance: 2 replicas, 100m requested, 150m used each, 50% target -> 6 replicas', () => {
    const r = resourceReplicas({
      currentReplicas: 2,
      tolerances: TOL,
      pods: [0, 1].map((i) => ({
        name: `web-${i}`,
        phase: 'Running',
        startTimeMs: NOW - 10 * 60_000,
        ready: { status: 'True', lastTransitionTimeMs: NOW - 9 * 60_000 },
        containers: [{ name: 'app', requestsMilli: { cpu: 100 } }],
      })),
      config: { cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000, podLevelResources: true },
      nowMs: NOW,
      targetUtilization: 50,
      resource: 'cpu',
      container: '',
      metrics: samplesFromPodMetrics(
        [0, 1].map((i) => ({ name: `web-${i}`, timestampMs: NOW - 5000, windowMs: 60_000, containers: [{ name: 'app', usageMilli: { cpu: 150 } }] })),
        'cpu',
        '',
      ),
    });
    expect(r).toEqual({ ok: true, replicas: 6, utilization: 150, rawUtilization: 150, timestampMs: NOW - 5000 });
  });

  it('scales up (3 pods at 30/50/70% of 1 CPU against 30% -> 5)', () => {
    expectResource({ currentReplicas: 3, requests: [1000, 1000, 1000], levels: levels(300, 500, 700) }, 30, 5, 50, 1000);
  });

  it('ContainerResource counts only the named container', () => {
    expectResource({ currentReplicas: 3, requests: [1000, 1000, 1000], levels: [[1000, 300], [1000, 500], [1000, 700]], container: 'container2' }, 30, 5, 50, 500);
  });

  it('an unready pod counts as 0% on a scale-up (less scale)', () => {
    expectResource({ currentReplicas: 3, podReadiness: ['False', 'True', 'True'], requests: [1000, 1000, 1000], levels: levels(300, 500, 700) }, 30, 4, 60, 1200);
  });

  it('a pod inside the CPU initialization period with a stale sample counts as unready', () => {
    expectResource({ currentReplicas: 3, podStartTime: [HOT, COOL, COOL], requests: [1000, 1000, 1000], levels: levels(300, 500, 700) }, 30, 4, 60, 1200);
  });

  it('no scale-up when the unready pods would flip the direction', () => {
    expectResource({ currentReplicas: 3, podReadiness: ['True', 'False', 'False'], requests: [1000, 1000, 1000], levels: levels(400, 500, 700) }, 30, 3, 40, 800);
  });

  it('ignores failed pods', () => {
    expectResource(
      { currentReplicas: 2, podReadiness: ['True', 'True', 'False', 'False'], podPhase: ['Running', 'Running', 'Failed', 'Failed'], requests: [1000, 1000, 1000, 1000], levels: levels(500, 700) },
      30, 4, 60, 1200,
    );
  });

  it('ignores pods being deleted', () => {
    expectResource(
      { currentReplicas: 2, podReadiness: ['True', 'True', 'False', 'False'], podDeletion: [false, false, true, true], requests: [1000, 1000, 1000, 1000], levels: levels(500, 700) },
      30, 4, 60, 1200,
    );
  });

  it('scales down (5 pods averaging 28% against 50% -> 3)', () => {
    expectResource({ currentReplicas: 5, requests: [1000, 1000, 1000, 1000, 1000], levels: levels(100, 300, 500, 250, 250) }, 50, 3, 28, 560);
  });

  it('scale-down leaves unready pods out', () => {
    expectResource(
      { currentReplicas: 5, podReadiness: ['True', 'True', 'True', 'False', 'False'], requests: [1000, 1000, 1000, 1000, 1000], levels: levels(100, 300, 500, 250, 250) },
      50, 2, 30, 600,
    );
  });

  it('scale-down leaves pending (unscheduled) pods out', () => {
    expectResource(
      {
        currentReplicas: 5,
        podReadiness: ['True', 'False', 'False', 'False', 'False'],
        podPhase: ['Running', 'Pending', 'Pending', 'Pending', 'Pending'],
        requests: [1000, 1000, 1000, 1000, 1000],
        levels: levels(100),
      },
      50, 1, 10, 200,
    );
  });

  it('scale-down ignores hot-CPU pods', () => {
    expectResource({ currentReplicas: 5, podStartTime: [COOL, COOL, COOL, HOT, HOT], requests: [1000, 1000, 1000, 1000, 1000], levels: levels(100, 300, 500, 250, 250) }, 50, 2, 30, 600);
  });

  it('stays within the 10% tolerance', () => {
    expectResource({ currentReplicas: 3, requests: [900, 1000, 1100], levels: levels(1010, 1030, 1020) }, 100, 3, 102, 2040);
  });

  it('per-HPA tolerances: 0% scales, a 200% scale-up tolerance holds, 34%/36% scale-down tolerances', () => {
    const base = { currentReplicas: 3, requests: [900, 1000, 1100] };
    expectResource({ ...base, tolerances: { scaleDown: 0, scaleUp: 0 }, levels: levels(909, 1010, 1111) }, 100, 4, 101, 2020);
    expectResource({ ...base, tolerances: { scaleDown: 0.1, scaleUp: 2 }, levels: levels(1890, 1910, 1900) }, 100, 3, 190, 3800);
    expectResource({ ...base, tolerances: { scaleDown: 2, scaleUp: 0.08 }, levels: levels(1100, 1080, 1090) }, 100, 4, 109, 2180);
    expectResource({ ...base, tolerances: { scaleDown: 0.36, scaleUp: 0.1 }, levels: levels(660, 640, 650) }, 100, 3, 65, 1300);
    expectResource({ ...base, tolerances: { scaleDown: 0.34, scaleUp: 0.1 }, levels: levels(660, 640, 650) }, 100, 2, 65, 1300);
  });

  it('superfluous metrics of unknown pods do not count toward utilization but the ready count scales', () => {
    expectResource({ currentReplicas: 4, requests: [1000, 1000, 1000, 1000], levels: levels(4000, 9500, 3000, 7000, 3200, 2000) }, 100, 24, 587, 11750);
  });

  it('missing metrics on a scale-down count as 100% of request', () => {
    expectResource({ currentReplicas: 4, requests: [1000, 1000, 1000, 1000], levels: levels(400, 95) }, 100, 3, 24, 495);
  });

  it('missing metrics that would flip the direction leave the count alone (eq, gt, lt)', () => {
    expectResource({ currentReplicas: 2, requests: [1000, 1000], levels: levels(1000) }, 100, 2, 100, 2000);
    expectResource({ currentReplicas: 2, requests: [1000, 1000], levels: levels(1900) }, 100, 2, 190, 3800);
    expectResource({ currentReplicas: 2, requests: [1000, 1000], levels: levels(600) }, 100, 2, 60, 1200);
  });

  it('missing plus unready pods on a scale-up and a scale-down', () => {
    expectResource({ currentReplicas: 3, podReadiness: ['False', 'True', 'True'], requests: [1000, 1000, 1000], levels: levels(100, 450) }, 50, 3, 45, 900);
    expectResource({ currentReplicas: 3, podReadiness: ['False', 'True', 'True'], requests: [1000, 1000, 1000], levels: levels(100, 2000) }, 50, 4, 200, 4000);
    expectResource({ currentReplicas: 4, podReadiness: ['False', 'True', 'True', 'True'], requests: [1000, 1000, 1000, 1000], levels: levels(100, 100, 100) }, 50, 3, 10, 200);
  });

  it('missing pods on a scale-down with a target over 100% count at the target', () => {
    expectResource({ currentReplicas: 4, podReadiness: ['False', 'True', 'True', 'True'], requests: [1000, 1000, 2000, 2000], levels: levels(200, 100, 100) }, 300, 2, 6, 200);
  });

  it('a rolling update surge pod without metrics does not make it scale', () => {
    expectResource({ currentReplicas: 2, podPhase: ['Running', 'Running', 'Running'], requests: [1000, 1000, 1000], levels: levels(100, 100) }, 50, 2, 10, 200);
  });

  it('errors with upstream texts', () => {
    expect(runResource({ currentReplicas: 1, requests: [1000], levels: levels(100), podNames: ['an-older-pod-name'] }, 100)).toEqual({ ok: false, error: 'no metrics returned matched known pods' });
    expect(runResource({ currentReplicas: 4, requests: [1000, 1000, 1000], levels: [] }, 100)).toEqual({
      ok: false,
      error: 'unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    });
    expect(runResource({ currentReplicas: 1, requests: [], levels: levels(200) }, 100)).toEqual({ ok: false, error: 'missing request for cpu in container container1 of Pod test-pod-0' });
    expect(runResource({ currentReplicas: 2, podReadiness: ['False', 'False'], requests: [1000, 1000], levels: levels(100, 100) }, 50)).toEqual({
      ok: false,
      error: 'did not receive metrics for targeted pods (pods might be unready)',
    });
    expect(runResource({ currentReplicas: 0, levels: levels(100) }, 50)).toEqual({ ok: false, error: 'no pods returned by selector while calculating replica count' });
  });

  it('the computed-tolerance regression: just outside the tolerance scales down to 9, just inside stays at 10', () => {
    const perPod = 300;
    const requests = [perPod + 100, perPod - 100, perPod + 10, perPod - 10, perPod + 2, perPod - 2, perPod + 1, perPod - 1, perPod, perPod];
    const tc = { currentReplicas: 10, requests, levels: levels(...Array(10).fill(150)) };
    const outside = Math.trunc((Math.abs(1 / (2 * 0.9)) + 0.01) * 100);
    const finalPods = Math.ceil(1500 / (3000 * (Math.abs(1 / (2 * 0.9)) + 0.01)) * 10);
    expectResource(tc, outside, finalPods, 50, 300);
    expectResource(tc, Math.trunc((Math.abs(1 / (2 * 0.9)) + 0.004) * 100), 10, 50, 300);
  });
});

describe('Resource average value and Pods metrics', () => {
  it('Pods: scale up, scale down, tolerance', () => {
    expect(runPods({ currentReplicas: 3 }, [20000, 10000, 30000], 15000)).toMatchObject({ ok: true, replicas: 4, usage: 20000 });
    expect(runPods({ currentReplicas: 5 }, [12000, 12000, 12000, 12000, 12000], 20000)).toMatchObject({ ok: true, replicas: 3, usage: 12000 });
    expect(runPods({ currentReplicas: 3 }, [20000, 21000, 21000], 20000)).toMatchObject({ ok: true, replicas: 3, usage: 20666 });
    expect(runPods({ currentReplicas: 3, tolerances: { scaleDown: 0.1, scaleUp: 0.01 } }, [20000, 21000, 21000], 20000)).toMatchObject({ ok: true, replicas: 4 });
  });

  it('Pods: readiness does not matter for non-CPU metrics, so an unready hot pod still counts', () => {
    const tc = { currentReplicas: 3, podReadiness: ['True', 'True', 'False'], podStartTime: [COOL, COOL, HOT] };
    expect(runPods(tc, [50000, 10000, 30000], 15000)).toMatchObject({ ok: true, replicas: 6, usage: 30000 });
    const tc2 = { currentReplicas: 3, podReadiness: ['False', 'True', 'False'], podStartTime: [HOT, COOL, HOT] };
    expect(runPods(tc2, [50000, 15000, 30000], 15000)).toMatchObject({ ok: true, replicas: 7, usage: 31666 });
  });

  it('Pods: missing metrics on a scale-down count at the target; surge pods without metrics change nothing', () => {
    expect(runPods({ currentReplicas: 5 }, [20000, 19000, 21000], 20000)).toMatchObject({ ok: true, replicas: 5, usage: 20000 });
    expect(runPods({ currentReplicas: 2, podPhase: ['Running', 'Running', 'Running'] }, [10000, 10000], 17000)).toMatchObject({ ok: true, replicas: 2, usage: 10000 });
  });

  it('Pods: a failed read is wrapped with the metric name', () => {
    expect(
      podsMetricReplicas({ currentReplicas: 3, tolerances: TOL, pods: pods({ currentReplicas: 3 }), config: CONFIG, nowMs: NOW, targetUsage: 1, metricName: 'qps', metrics: samplesFromCustomMetrics([]) }),
    ).toEqual({ ok: false, error: 'unable to get metric qps: no metrics returned from custom metrics API' });
  });

  it('Resource averageValue uses the plain average of the per-pod sums', () => {
    const tc = { currentReplicas: 3, requests: [1000, 1000, 1000] };
    const r = rawResourceReplicas({ currentReplicas: 3, tolerances: TOL, pods: pods(tc), config: CONFIG, nowMs: NOW, targetUsage: 500, resource: 'cpu', metrics: samplesFromPodMetrics(podMetrics({ ...tc, levels: levels(300, 500, 700) }), 'cpu', '') });
    expect(r).toMatchObject({ ok: true, replicas: 6, usage: 1000 });
  });
});

describe('Object and External metrics', () => {
  const objectBase = { metricName: 'qps', tolerances: TOL, namespace: 'test-namespace', ref: DEPLOYMENT };

  it('Object value: scale up, scale down, tolerance, ready pods only', () => {
    const p3 = pods({ currentReplicas: 3 });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 3, targetUsage: 15000, pods: p3, metric: objectValue(20000) })).toMatchObject({ ok: true, replicas: 4, usage: 20000 });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 5, targetUsage: 20000, pods: pods({ currentReplicas: 5 }), metric: objectValue(12000) })).toMatchObject({ ok: true, replicas: 3 });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 3, targetUsage: 20000, pods: p3, metric: objectValue(20666) })).toMatchObject({ ok: true, replicas: 3 });
    const unready = pods({ currentReplicas: 3, podReadiness: ['False', 'True', 'False'] });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 3, targetUsage: 10000, pods: unready, metric: objectValue(50000) })).toMatchObject({ ok: true, replicas: 5 });
  });

  it('Object value: from zero replicas ignores tolerance; overflow caps at MaxInt32', () => {
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 0, targetUsage: 15000, pods: [], metric: objectValue(20000) })).toMatchObject({ ok: true, replicas: 2 });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 0, targetUsage: 1000, pods: [], metric: objectValue(1050) })).toMatchObject({ ok: true, replicas: 2 });
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 3, targetUsage: 1, pods: pods({ currentReplicas: 3 }), metric: objectValue(MAX_INT64) })).toMatchObject({ ok: true, replicas: MAX_INT32 });
  });

  it('Object value: read failure text as upstream prints it', () => {
    expect(objectMetricReplicas({ ...objectBase, currentReplicas: 3, targetUsage: 1, pods: [], metric: { ok: false, error: 'boom' } })).toEqual({
      ok: false,
      error: 'unable to get metric qps: Deployment on test-namespace some-deployment/boom',
    });
  });

  it('Object averageValue divides by status.replicas', () => {
    expect(objectPerPodMetricReplicas({ ...objectBase, statusReplicas: 3, targetAverageUsage: 5000, metric: objectValue(20000) })).toMatchObject({ ok: true, replicas: 4, usage: 6667 });
    expect(objectPerPodMetricReplicas({ ...objectBase, statusReplicas: 5, targetAverageUsage: 2000, metric: objectValue(6000) })).toMatchObject({ ok: true, replicas: 3, usage: 1200 });
    expect(objectPerPodMetricReplicas({ ...objectBase, statusReplicas: 4, targetAverageUsage: 5000, metric: objectValue(20166) })).toMatchObject({ ok: true, replicas: 4, usage: 5042 });
    expect(objectPerPodMetricReplicas({ ...objectBase, statusReplicas: 4, targetAverageUsage: 5000, tolerances: { scaleDown: 0.1, scaleUp: 0.01 }, metric: objectValue(20208) })).toMatchObject({ ok: true, replicas: 5, usage: 5052 });
  });

  const extBase = { metricName: 'qps', selectorText: 'nil', tolerances: TOL, namespace: 'test-namespace' };
  const ext = (millis: number[]) => valuesFromExternalMetrics(millis.map((m) => ({ milli: m, timestampMs: NOW })));

  it('External value: sum against the target, counting ready pods; overflow caps at MaxInt64', () => {
    expect(externalMetricReplicas({ ...extBase, currentReplicas: 5, targetUsage: 14334, pods: pods({ currentReplicas: 5 }), metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 3, usage: 8600 });
    const unready = pods({ currentReplicas: 3, podReadiness: ['False', 'True', 'False'] });
    expect(externalMetricReplicas({ ...extBase, currentReplicas: 3, targetUsage: 4400, pods: unready, metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 2 });
    expect(externalMetricReplicas({ ...extBase, currentReplicas: 3, targetUsage: 8888, pods: pods({ currentReplicas: 3 }), metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 3 });
    expect(externalMetricReplicas({ ...extBase, currentReplicas: 3, targetUsage: MAX_INT64, pods: pods({ currentReplicas: 3 }), metric: ext([2 ** 62, 2 ** 62]) })).toMatchObject({ ok: true, replicas: 3, usage: MAX_INT64 });
    expect(externalMetricReplicas({ ...extBase, currentReplicas: 3, targetUsage: 1, pods: [], metric: ext([]) })).toEqual({
      ok: false,
      error: 'unable to get external metric test-namespace/qps/nil: no metrics returned from external metrics API',
    });
  });

  it('External averageValue: per pod of status.replicas; replica overflow caps at MaxInt32', () => {
    expect(externalPerPodMetricReplicas({ ...extBase, statusReplicas: 3, targetUsagePerPod: 2150, metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 4, usage: 2867 });
    expect(externalPerPodMetricReplicas({ ...extBase, statusReplicas: 5, targetUsagePerPod: 2867, metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 3, usage: 1720 });
    expect(externalPerPodMetricReplicas({ ...extBase, statusReplicas: 3, targetUsagePerPod: 2900, metric: ext([8600]) })).toMatchObject({ ok: true, replicas: 3, usage: 2867 });
    expect(externalPerPodMetricReplicas({ ...extBase, statusReplicas: 1, targetUsagePerPod: 1, metric: ext([MAX_INT64]) })).toMatchObject({ ok: true, replicas: MAX_INT32, usage: MAX_INT64 });
  });
});

describe('groupPods and requests', () => {
  const sample = (pod: string, timestampMs = NOW, windowMs = 60_000): [string, PodSample] => [pod, { pod, milli: 1, timestampMs, windowMs }];

  it('sorts pods into ready, unready, missing and ignored as upstream', () => {
    const pod = (name: string, extra: Partial<HpaPod>): HpaPod => ({ name, phase: 'Succeeded', containers: [], ...extra });
    const g = groupPods(
      [
        pod('no-condition', { startTimeMs: NOW }),
        pod('fresh', { startTimeMs: NOW - 60_000, ready: { status: 'True', lastTransitionTimeMs: NOW - 30_000 } }),
        pod('stale-in-init', { startTimeMs: NOW - 60_000, ready: { status: 'True', lastTransitionTimeMs: NOW - 30_000 } }),
        pod('unready-never-ready', { startTimeMs: NOW - 10 * 60_000, ready: { status: 'False', lastTransitionTimeMs: NOW - 9 * 60_000 - 54_000 } }),
        pod('was-ready', { startTimeMs: NOW - 10 * 60_000, ready: { status: 'False', lastTransitionTimeMs: NOW - 9 * 60_000 } }),
        pod('missing', { startTimeMs: NOW - 3 * 60_000 }),
        pod('pending', { phase: 'Pending' }),
        pod('deleted', { phase: 'Pending', deleting: true }),
        pod('failed', { phase: 'Failed' }),
      ],
      new Map([
        sample('no-condition'),
        sample('fresh', NOW, 30_000),
        sample('stale-in-init', NOW, 60_000),
        sample('unready-never-ready'),
        sample('was-ready'),
        sample('deleted'),
        sample('failed'),
      ]),
      'cpu',
      { cpuInitializationPeriodMs: 120_000, initialReadinessDelayMs: 10_000 },
      NOW,
    );
    expect(g.readyPodCount).toBe(2);
    expect([...g.unready].sort()).toEqual(['no-condition', 'pending', 'stale-in-init', 'unready-never-ready']);
    expect([...g.missing]).toEqual(['missing']);
    expect([...g.ignored].sort()).toEqual(['deleted', 'failed']);
    // memory ignores readiness entirely
    expect(groupPods([pod('m', {})], new Map([sample('m')]), 'memory', CONFIG, NOW).readyPodCount).toBe(1);
  });

  it('requests: container sums with sidecars, a named container, pod-level requests, errors', () => {
    const pod: HpaPod = {
      name: 'test-pod',
      containers: [
        { name: 'container1', requestsMilli: { cpu: 100 } },
        { name: 'container2', requestsMilli: { cpu: 50 } },
      ],
      initContainers: [
        { name: 'init', restartable: false, requestsMilli: { cpu: 20 } },
        { name: 'sidecar', restartable: true, requestsMilli: { cpu: 50 } },
      ],
    };
    expect(calculateRequests([pod], '', 'cpu', true)).toEqual({ ok: true, requests: new Map([['test-pod', 200]]) });
    expect(calculateRequests([pod], 'container1', 'cpu', true)).toEqual({ ok: true, requests: new Map([['test-pod', 100]]) });
    const podLevel = { ...pod, podRequestsMilli: { cpu: 800 } };
    expect(calculateRequests([podLevel], '', 'cpu', true)).toEqual({ ok: true, requests: new Map([['test-pod', 800]]) });
    expect(calculateRequests([podLevel], '', 'cpu', false)).toEqual({ ok: true, requests: new Map([['test-pod', 200]]) });
    expect(calculateRequests([podLevel], 'container1', 'cpu', true)).toEqual({ ok: true, requests: new Map([['test-pod', 100]]) });
    expect(calculateRequests([pod], 'non-existent-container', 'cpu', true)).toEqual({ ok: false, error: 'container non-existent-container not found in Pod test-pod' });
    const missing = { ...pod, containers: [{ name: 'container1', requestsMilli: {} }, pod.containers[1]] };
    expect(calculateRequests([missing], '', 'cpu', true)).toEqual({ ok: false, error: 'missing request for cpu in container container1 of Pod test-pod' });
    expect(calculateRequests([{ ...missing, podRequestsMilli: { cpu: 800 } }], '', 'cpu', true)).toEqual({ ok: true, requests: new Map([['test-pod', 800]]) });
  });

  it('tolerances come from behavior when HPAConfigurableTolerance is on', () => {
    const behavior = { scaleUp: { tolerance: '0.05' }, scaleDown: { tolerance: '250m' } };
    expect(tolerancesFor(behavior, { tolerance: 0.1, configurableTolerance: true })).toEqual({ scaleDown: 0.25, scaleUp: 0.05 });
    expect(tolerancesFor(behavior, { tolerance: 0.1, configurableTolerance: false })).toEqual({ scaleDown: 0.1, scaleUp: 0.1 });
    expect(tolerancesFor(undefined, { tolerance: 0.2, configurableTolerance: true })).toEqual({ scaleDown: 0.2, scaleUp: 0.2 });
  });

  it('the resource metrics client: a container without the resource drops the pod; a named container is taken alone', () => {
    const items: PodMetricsItem[] = [
      { name: 'a', timestampMs: 5, windowMs: 60_000, containers: [{ name: 'c1', usageMilli: { cpu: 100 } }, { name: 'c2', usageMilli: { cpu: 50 } }] },
      { name: 'b', timestampMs: 6, windowMs: 60_000, containers: [{ name: 'c1', usageMilli: { cpu: 100 } }, { name: 'c2', usageMilli: {} }] },
      { name: 'c', timestampMs: 7, windowMs: 60_000, containers: [] },
    ];
    const all = samplesFromPodMetrics(items, 'cpu', '');
    expect(all).toEqual({ ok: true, value: { timestampMs: 5, samples: [{ pod: 'a', milli: 150, timestampMs: 5, windowMs: 60_000 }] } });
    const c2 = samplesFromPodMetrics(items, 'cpu', 'c2');
    expect(c2.ok && c2.value.samples.map((s) => [s.pod, s.milli])).toEqual([['a', 50]]);
  });
});
