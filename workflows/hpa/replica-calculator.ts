/**
 * The horizontal-pod-autoscaler's replica calculation (upstream pkg/controller/podautoscaler
 * replica_calculator.go and metrics/utilization.go, v1.35), as pure functions: each metric source
 * turns the pods, the metric readings and the current replica count into a proposed replica count
 * and the usage it saw, or into upstream's error text. No I/O, no clock: `nowMs` is an input.
 */
import type {
  ExternalValues,
  HpaConfig,
  HpaPod,
  MetricFetch,
  ObjectValue,
  PodSample,
  PodSamples,
  Tolerances,
} from './types';

export const MAX_INT32 = 2147483647;
/** int64's maximum as a number (rounded to 2^63): upstream's overflow cap. */
export const MAX_INT64 = 9223372036854775807;
/** Go's zero time.Time in epoch milliseconds: what an unset lastTransitionTime compares as. */
const GO_ZERO_TIME_MS = -62135596800000;

export type Calc<T> = ({ ok: true } & T) | { ok: false; error: string };

export const ERR_NO_PODS = 'no pods returned by selector while calculating replica count';
export const ERR_NO_METRICS_FOR_PODS = 'did not receive metrics for targeted pods (pods might be unready)';
export const ERR_NO_MATCHING_METRICS = 'no metrics returned matched known pods';

/** The tolerances an HPA gets: the flag's value, or its behavior's when HPAConfigurableTolerance is on. */
export function tolerancesFor(
  behavior: { scaleUp?: { tolerance?: string }; scaleDown?: { tolerance?: string } } | undefined,
  config: Pick<HpaConfig, 'tolerance' | 'configurableTolerance'>,
): Tolerances {
  const t = { scaleDown: config.tolerance, scaleUp: config.tolerance };
  if (!behavior || !config.configurableTolerance) return t;
  const down = approximateFloat(behavior.scaleDown?.tolerance);
  const up = approximateFloat(behavior.scaleUp?.tolerance);
  if (down !== undefined) t.scaleDown = down;
  if (up !== undefined) t.scaleUp = up;
  return t;
}

/** A quantity string as a float (upstream's AsApproximateFloat64), for tolerances like "0.05" or "50m". */
export function approximateFloat(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^([+-]?[0-9]*\.?[0-9]*)(m|k|M|G|T|P|E|u|n|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+)?$/.exec(q.trim());
  if (!m || m[1] === '' || m[1] === '.') return undefined;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  const dec: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
  const bin: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  if (suffix in dec) return n * dec[suffix];
  if (suffix in bin) return n * bin[suffix];
  return n * 10 ** Number(suffix.slice(1));
}

export function withinTolerance(t: Tolerances, usageRatio: number): boolean {
  return 1.0 - t.scaleDown <= usageRatio && usageRatio <= 1.0 + t.scaleUp;
}

/** "[down:10.0%, up:10.0%]", as upstream logs tolerances. */
export function formatTolerances(t: Tolerances): string {
  return `[down:${(t.scaleDown * 100).toFixed(1)}%, up:${(t.scaleUp * 100).toFixed(1)}%]`;
}

// ---------------------------------------------------------------------------------------------
// pods: which samples count

export interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/**
 * Sorts the pods as upstream's groupPods: deleted or failed pods are ignored; pending pods are
 * unready; pods without a sample are missing; for CPU, a pod without a Ready condition or start
 * time is unready, and so is one still inside the CPU initialization period that is not ready or
 * whose sample was taken less than one window after its readiness last changed, or, past that
 * period, one that is not ready and never became ready within the initial readiness delay.
 */
export function groupPods(
  pods: readonly HpaPod[],
  samples: ReadonlyMap<string, PodSample>,
  resource: string,
  config: Pick<HpaConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs'>,
  nowMs: number,
): PodGroups {
  const g: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    if (pod.deleting || pod.phase === 'Failed') {
      g.ignored.add(pod.name);
      continue;
    }
    if (pod.phase === 'Pending') {
      g.unready.add(pod.name);
      continue;
    }
    const sample = samples.get(pod.name);
    if (!sample) {
      g.missing.add(pod.name);
      continue;
    }
    if (resource === 'cpu') {
      let unready: boolean;
      const cond = pod.ready;
      if (!cond || pod.startTimeMs === undefined) {
        unready = true;
      } else {
        const transition = cond.lastTransitionTimeMs ?? GO_ZERO_TIME_MS;
        if (pod.startTimeMs + config.cpuInitializationPeriodMs > nowMs) {
          unready = cond.status === 'False' || sample.timestampMs < transition + sample.windowMs;
        } else {
          unready = cond.status === 'False' && pod.startTimeMs + config.initialReadinessDelayMs > transition;
        }
      }
      if (unready) {
        g.unready.add(pod.name);
        continue;
      }
    }
    g.readyPodCount++;
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// requests

function isPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

function podLevelRequestsSet(pod: HpaPod): boolean {
  return Object.keys(pod.podRequestsMilli ?? {}).some(isPodLevelResource);
}

/** The pod's effective request for one resource as the scheduler counts it (sidecars, init containers, overhead, pod-level). */
function podLevelRequest(pod: HpaPod, resource: string): number | undefined {
  const podLevel = pod.podRequestsMilli ?? {};
  let total: number | undefined;
  if (isPodLevelResource(resource) && resource in podLevel) {
    total = podLevel[resource];
  } else {
    let sum: number | undefined;
    for (const c of pod.containers) {
      if (resource in c.requestsMilli) sum = (sum ?? 0) + c.requestsMilli[resource];
    }
    let sidecars: number | undefined;
    let initMax: number | undefined;
    for (const c of pod.initContainers ?? []) {
      const own = c.requestsMilli[resource];
      let use: number | undefined;
      if (c.restartable) {
        if (own !== undefined) {
          sum = (sum ?? 0) + own;
          sidecars = (sidecars ?? 0) + own;
        }
        use = sidecars;
      } else if (own !== undefined || sidecars !== undefined) {
        use = (own ?? 0) + (sidecars ?? 0);
      }
      if (use !== undefined && (initMax === undefined || use > initMax)) initMax = use;
    }
    if (initMax !== undefined && (sum === undefined || initMax > sum)) sum = initMax;
    total = sum;
  }
  const overhead = pod.overheadMilli?.[resource];
  if (overhead !== undefined) total = (total ?? 0) + overhead;
  return total;
}

/**
 * Each pod's request for the resource, in milli-units: the named container's, or the pod-level
 * request when PodLevelResources is on and the pod sets one, or else the sum over its containers
 * and restartable init containers. Errors as upstream when a container has no request.
 */
export function calculateRequests(
  pods: readonly HpaPod[],
  container: string,
  resource: string,
  podLevelResources: boolean,
): Calc<{ requests: Map<string, number> }> {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    if (podLevelResources && container === '' && podLevelRequestsSet(pod)) {
      const r = podLevelRequest(pod, resource);
      if (r === undefined) return { ok: false, error: `missing pod-level request for ${resource} in Pod ${pod.name}` };
      requests.set(pod.name, r);
      continue;
    }
    const containers = [...pod.containers, ...(pod.initContainers ?? []).filter((c) => c.restartable)];
    let request = 0;
    let found = false;
    for (const c of containers) {
      if (container === '' || container === c.name) {
        const r = c.requestsMilli[resource];
        if (r === undefined) return { ok: false, error: `missing request for ${resource} in container ${c.name} of Pod ${pod.name}` };
        request += r;
      }
      if (container === c.name) {
        found = true;
        break;
      }
    }
    if (container !== '' && !found) return { ok: false, error: `container ${container} not found in Pod ${pod.name}` };
    requests.set(pod.name, request);
  }
  return { ok: true, requests };
}

// ---------------------------------------------------------------------------------------------
// ratios (upstream metrics/utilization.go)

/** Go's int64 division of non-huge values: truncates toward zero. Exact through BigInt. */
function intDiv(a: number, b: number): number {
  return Number(BigInt(Math.trunc(a)) / BigInt(Math.trunc(b)));
}

export function resourceUtilizationRatio(
  metrics: ReadonlyMap<string, number>,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): Calc<{ ratio: number; utilization: number; rawAverage: number }> {
  let metricsTotal = 0n;
  let requestsTotal = 0n;
  let n = 0;
  for (const [pod, value] of metrics) {
    const request = requests.get(pod);
    if (request === undefined) continue; // a sample for a pod we do not know
    metricsTotal += BigInt(Math.trunc(value));
    requestsTotal += BigInt(Math.trunc(request));
    n++;
  }
  if (requestsTotal === 0n) return { ok: false, error: ERR_NO_MATCHING_METRICS };
  const utilization = Number((metricsTotal * 100n) / requestsTotal);
  return { ok: true, ratio: utilization / targetUtilization, utilization, rawAverage: Number(metricsTotal / BigInt(n)) };
}

export function metricUsageRatio(metrics: ReadonlyMap<string, number>, targetUsage: number): { ratio: number; usage: number } {
  let total = 0n;
  for (const v of metrics.values()) total += BigInt(Math.trunc(v));
  const usage = Number(total / BigInt(metrics.size));
  return { ratio: usage / targetUsage, usage };
}

// ---------------------------------------------------------------------------------------------
// per-pod sources: Resource, ContainerResource (utilization and average value), Pods

export interface PodMetricInput {
  currentReplicas: number;
  tolerances: Tolerances;
  pods: readonly HpaPod[];
  config: Pick<HpaConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs' | 'podLevelResources'>;
  nowMs: number;
}

function sampleMap(samples: readonly PodSample[]): Map<string, PodSample> {
  const m = new Map<string, PodSample>();
  for (const s of samples) m.set(s.pod, s);
  return m;
}

/** ceil(x) as an int32, as Go's int32(math.Ceil(x)) for the values the HPA meets. */
function ceilReplicas(x: number): number {
  return Math.ceil(x) | 0;
}

/**
 * Resource / ContainerResource with an averageUtilization target: the replica count that brings
 * the average utilization (percent of request) to the target, with upstream's treatment of
 * unready pods (0% on a scale-up) and pods without metrics (100% of request, or the target if it
 * is higher, on a scale-down; 0% on a scale-up), and no change inside the tolerance or when those
 * assumptions would reverse the direction.
 */
export function resourceReplicas(
  input: PodMetricInput & { targetUtilization: number; resource: string; container: string; metrics: MetricFetch<PodSamples> },
): Calc<{ replicas: number; utilization: number; rawUtilization: number; timestampMs: number }> {
  const { currentReplicas, targetUtilization, resource, tolerances, pods } = input;
  if (!input.metrics.ok) return { ok: false, error: `unable to get metrics for resource ${resource}: ${input.metrics.error}` };
  const timestampMs = input.metrics.value.timestampMs;
  if (pods.length === 0) return { ok: false, error: ERR_NO_PODS };
  const byPod = sampleMap(input.metrics.value.samples);
  const groups = groupPods(pods, byPod, resource, input.config, input.nowMs);
  const metrics = new Map<string, number>();
  for (const [pod, s] of byPod) if (!groups.ignored.has(pod) && !groups.unready.has(pod)) metrics.set(pod, s.milli);
  if (metrics.size === 0) return { ok: false, error: ERR_NO_METRICS_FOR_PODS };

  const req = calculateRequests(pods, input.container, resource, input.config.podLevelResources);
  if (!req.ok) return req;
  const first = resourceUtilizationRatio(metrics, req.requests, targetUtilization);
  if (!first.ok) return first;
  const { ratio, utilization, rawAverage } = first;
  const done = (replicas: number) => ({ ok: true as const, replicas, utilization, rawUtilization: rawAverage, timestampMs });

  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1.0;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (withinTolerance(tolerances, ratio)) return done(currentReplicas);
    return done(ceilReplicas(ratio * groups.readyPodCount));
  }

  if (groups.missing.size > 0) {
    if (ratio < 1.0) {
      const fallback = Math.max(100, targetUtilization);
      for (const pod of groups.missing) metrics.set(pod, intDiv((req.requests.get(pod) ?? 0) * fallback, 100));
    } else if (ratio > 1.0) {
      for (const pod of groups.missing) metrics.set(pod, 0);
    }
  }
  if (scaleUpWithUnready) for (const pod of groups.unready) metrics.set(pod, 0);

  const second = resourceUtilizationRatio(metrics, req.requests, targetUtilization);
  if (!second.ok) return second;
  const newRatio = second.ratio;
  if (withinTolerance(tolerances, newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0)) {
    return done(currentReplicas);
  }
  const newReplicas = ceilReplicas(newRatio * metrics.size);
  if ((newRatio < 1.0 && newReplicas > currentReplicas) || (newRatio > 1.0 && newReplicas < currentReplicas)) {
    return done(currentReplicas);
  }
  return done(newReplicas);
}

/** The shared path of per-pod average-value targets (upstream's calcPlainMetricReplicas). */
function plainMetricReplicas(
  input: PodMetricInput & { targetUsage: number; resource: string },
  samples: readonly PodSample[],
): Calc<{ replicas: number; usage: number }> {
  const { currentReplicas, targetUsage, tolerances, pods } = input;
  if (pods.length === 0) return { ok: false, error: ERR_NO_PODS };
  const byPod = sampleMap(samples);
  const groups = groupPods(pods, byPod, input.resource, input.config, input.nowMs);
  const metrics = new Map<string, number>();
  for (const [pod, s] of byPod) if (!groups.ignored.has(pod) && !groups.unready.has(pod)) metrics.set(pod, s.milli);
  if (metrics.size === 0) return { ok: false, error: ERR_NO_METRICS_FOR_PODS };

  const { ratio, usage } = metricUsageRatio(metrics, targetUsage);
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1.0;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (withinTolerance(tolerances, ratio)) return { ok: true, replicas: currentReplicas, usage };
    return { ok: true, replicas: ceilReplicas(ratio * groups.readyPodCount), usage };
  }
  if (groups.missing.size > 0) {
    if (ratio < 1.0) for (const pod of groups.missing) metrics.set(pod, targetUsage);
    else if (ratio > 1.0) for (const pod of groups.missing) metrics.set(pod, 0);
  }
  if (scaleUpWithUnready) for (const pod of groups.unready) metrics.set(pod, 0);

  const newRatio = metricUsageRatio(metrics, targetUsage).ratio;
  if (withinTolerance(tolerances, newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0)) {
    return { ok: true, replicas: currentReplicas, usage };
  }
  const newReplicas = ceilReplicas(newRatio * metrics.size);
  if ((newRatio < 1.0 && newReplicas > currentReplicas) || (newRatio > 1.0 && newReplicas < currentReplicas)) {
    return { ok: true, replicas: currentReplicas, usage };
  }
  return { ok: true, replicas: newReplicas, usage };
}

/** Resource / ContainerResource with an averageValue target (upstream's GetRawResourceReplicas). */
export function rawResourceReplicas(
  input: PodMetricInput & { targetUsage: number; resource: string; metrics: MetricFetch<PodSamples> },
): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metrics.ok) return { ok: false, error: `unable to get metrics for resource ${input.resource}: ${input.metrics.error}` };
  const r = plainMetricReplicas(input, input.metrics.value.samples);
  return r.ok ? { ...r, timestampMs: input.metrics.value.timestampMs } : r;
}

/** Pods metrics: the average per-pod value against an averageValue target (upstream's GetMetricReplicas). */
export function podsMetricReplicas(
  input: PodMetricInput & { targetUsage: number; metricName: string; metrics: MetricFetch<PodSamples> },
): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metrics.ok) return { ok: false, error: `unable to get metric ${input.metricName}: ${input.metrics.error}` };
  const r = plainMetricReplicas({ ...input, resource: '' }, input.metrics.value.samples);
  return r.ok ? { ...r, timestampMs: input.metrics.value.timestampMs } : r;
}

// ---------------------------------------------------------------------------------------------
// whole-object sources: Object and External

export interface ObjectRef {
  kind: string;
  name: string;
  apiVersion?: string;
}

/** Running and Ready pods, or upstream's error when the selector matches nothing. */
export function readyPodsCount(pods: readonly HpaPod[]): Calc<{ count: number }> {
  if (pods.length === 0) return { ok: false, error: ERR_NO_PODS };
  return { ok: true, count: pods.filter((p) => p.phase === 'Running' && p.ready?.status === 'True').length };
}

/**
 * From a total-value usage ratio: the ready pods times the ratio, outside the tolerance; from zero
 * replicas (scale-to-zero HPAs), ceil(ratio) regardless of tolerance.
 */
export function usageRatioReplicaCount(currentReplicas: number, ratio: number, tolerances: Tolerances, pods: readonly HpaPod[]): Calc<{ replicas: number }> {
  if (currentReplicas === 0) return { ok: true, replicas: ceilReplicas(ratio) };
  if (withinTolerance(tolerances, ratio)) return { ok: true, replicas: currentReplicas };
  const ready = readyPodsCount(pods);
  if (!ready.ok) return { ok: false, error: `unable to calculate ready pods: ${ready.error}` };
  const f = ratio * ready.count;
  return { ok: true, replicas: f > MAX_INT32 ? MAX_INT32 : Math.ceil(f) };
}

function objectFetchError(metricName: string, ref: ObjectRef, namespace: string, err: string): string {
  // upstream's format string and arguments disagree; the text users see is this one
  return `unable to get metric ${metricName}: ${ref.kind} on ${namespace} ${ref.name}/${err}`;
}

/** Object metric with a value target (upstream's GetObjectMetricReplicas). */
export function objectMetricReplicas(input: {
  currentReplicas: number;
  targetUsage: number;
  metricName: string;
  tolerances: Tolerances;
  namespace: string;
  ref: ObjectRef;
  pods: readonly HpaPod[];
  metric: MetricFetch<ObjectValue>;
}): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metric.ok) return { ok: false, error: objectFetchError(input.metricName, input.ref, input.namespace, input.metric.error) };
  const usage = input.metric.value.milli;
  const r = usageRatioReplicaCount(input.currentReplicas, usage / input.targetUsage, input.tolerances, input.pods);
  return r.ok ? { ok: true, replicas: r.replicas, usage, timestampMs: input.metric.value.timestampMs } : r;
}

/** Object metric with an averageValue target: the value divided across status.replicas (upstream's GetObjectPerPodMetricReplicas). */
export function objectPerPodMetricReplicas(input: {
  statusReplicas: number;
  targetAverageUsage: number;
  metricName: string;
  tolerances: Tolerances;
  namespace: string;
  ref: ObjectRef;
  metric: MetricFetch<ObjectValue>;
}): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metric.ok) return { ok: false, error: objectFetchError(input.metricName, input.ref, input.namespace, input.metric.error) };
  const total = input.metric.value.milli;
  let replicas = input.statusReplicas;
  const ratio = total / (input.targetAverageUsage * replicas);
  if (!withinTolerance(input.tolerances, ratio)) replicas = ceilReplicas(total / input.targetAverageUsage);
  const usage = Math.ceil(total / input.statusReplicas);
  return { ok: true, replicas, usage, timestampMs: input.metric.value.timestampMs };
}

function sumCapped(values: readonly number[]): number {
  let sum = 0n;
  const cap = 9223372036854775807n;
  for (const v of values) {
    sum += BigInt(Math.trunc(v));
    if (sum > cap) return MAX_INT64;
  }
  return Number(sum);
}

function externalFetchError(namespace: string, metricName: string, selectorText: string, err: string): string {
  return `unable to get external metric ${namespace}/${metricName}/${selectorText}: ${err}`;
}

/** External metric with a value target: the sum of its values against the target (upstream's GetExternalMetricReplicas). */
export function externalMetricReplicas(input: {
  currentReplicas: number;
  targetUsage: number;
  metricName: string;
  /** the metric's selector as upstream prints it (goLabelSelectorString) */
  selectorText: string;
  tolerances: Tolerances;
  namespace: string;
  pods: readonly HpaPod[];
  metric: MetricFetch<ExternalValues>;
}): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metric.ok) return { ok: false, error: externalFetchError(input.namespace, input.metricName, input.selectorText, input.metric.error) };
  const usage = sumCapped(input.metric.value.millis);
  const r = usageRatioReplicaCount(input.currentReplicas, usage / input.targetUsage, input.tolerances, input.pods);
  return r.ok ? { ok: true, replicas: r.replicas, usage, timestampMs: input.metric.value.timestampMs } : r;
}

/** External metric with an averageValue target: the sum divided across status.replicas (upstream's GetExternalPerPodMetricReplicas). */
export function externalPerPodMetricReplicas(input: {
  statusReplicas: number;
  targetUsagePerPod: number;
  metricName: string;
  selectorText: string;
  tolerances: Tolerances;
  namespace: string;
  metric: MetricFetch<ExternalValues>;
}): Calc<{ replicas: number; usage: number; timestampMs: number }> {
  if (!input.metric.ok) return { ok: false, error: externalFetchError(input.namespace, input.metricName, input.selectorText, input.metric.error) };
  const total = sumCapped(input.metric.value.millis);
  let replicas = input.statusReplicas;
  const ratio = total / (input.targetUsagePerPod * replicas);
  if (!withinTolerance(input.tolerances, ratio)) {
    const f = Math.ceil(total / input.targetUsagePerPod);
    replicas = f > MAX_INT32 ? MAX_INT32 : f;
  }
  const usage = total >= MAX_INT64 ? MAX_INT64 : Math.ceil(total / input.statusReplicas);
  return { ok: true, replicas, usage, timestampMs: input.metric.value.timestampMs };
}

// ---------------------------------------------------------------------------------------------
// what the metrics client makes of the metrics APIs' answers

/** A metrics.k8s.io PodMetrics item, reduced to what the HPA reads (usage values in milli-units). */
export interface PodMetricsItem {
  name: string;
  timestampMs: number;
  windowMs: number;
  containers: { name: string; usageMilli: Record<string, number> }[];
}

/**
 * The resource metrics client's view of a PodMetrics list: per pod, the named container's usage,
 * or the sum over all containers (a pod with no containers, or one container lacking the
 * resource, has no sample); the list's timestamp is its first item's.
 */
export function samplesFromPodMetrics(items: readonly PodMetricsItem[], resource: string, container: string): MetricFetch<PodSamples> {
  if (items.length === 0) return { ok: false, error: 'no metrics returned from resource metrics API' };
  const samples: PodSample[] = [];
  for (const m of items) {
    if (container !== '') {
      const c = m.containers.find((x) => x.name === container);
      if (c && resource in c.usageMilli) samples.push({ pod: m.name, milli: c.usageMilli[resource], timestampMs: m.timestampMs, windowMs: m.windowMs });
      continue;
    }
    if (m.containers.length === 0 || m.containers.some((c) => !(resource in c.usageMilli))) continue;
    const sum = m.containers.reduce((acc, c) => acc + c.usageMilli[resource], 0);
    samples.push({ pod: m.name, milli: sum, timestampMs: m.timestampMs, windowMs: m.windowMs });
  }
  return { ok: true, value: { samples, timestampMs: items[0].timestampMs } };
}

/** A custom.metrics.k8s.io MetricValue for a pod; a missing windowSeconds means one minute. */
export interface CustomPodValue {
  pod: string;
  milli: number;
  timestampMs: number;
  windowSeconds?: number;
}

export function samplesFromCustomMetrics(items: readonly CustomPodValue[]): MetricFetch<PodSamples> {
  if (items.length === 0) return { ok: false, error: 'no metrics returned from custom metrics API' };
  const samples = items.map((m) => ({ pod: m.pod, milli: m.milli, timestampMs: m.timestampMs, windowMs: (m.windowSeconds ?? 60) * 1000 }));
  return { ok: true, value: { samples, timestampMs: items[0].timestampMs } };
}

export function valuesFromExternalMetrics(items: readonly { milli: number; timestampMs: number }[]): MetricFetch<ExternalValues> {
  if (items.length === 0) return { ok: false, error: 'no metrics returned from external metrics API' };
  return { ok: true, value: { millis: items.map((i) => i.milli), timestampMs: items[0].timestampMs } };
}

/** The wrapping each metrics API's client puts around a failed request. */
export const fetchErrors = {
  resource: (err: string) => `unable to fetch metrics from resource metrics API: ${err}`,
  custom: (err: string) => `unable to fetch metrics from custom metrics API: ${err}`,
  external: (err: string) => `unable to fetch metrics from external metrics API: ${err}`,
};
