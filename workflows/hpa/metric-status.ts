/**
 * Per-metric replica proposals and the status.currentMetrics entries upstream (horizontal.go,
 * v1.35) writes for them, plus the combination of all of an HPA's metrics into one proposal with
 * the ScalingActive condition and the Events it records. Pure: the metric readings come in.
 */
import type { V1LabelSelector, V2MetricSpec, V2MetricStatus } from '@kubernetes/client-node';
import { formatQuantity, parseQuantity, type QuantityFormat } from '../common/quantity';
import { events as hpaEvents, scalingActive, type ConditionUpdate } from './conditions';
import {
  externalMetricReplicas,
  externalPerPodMetricReplicas,
  objectMetricReplicas,
  objectPerPodMetricReplicas,
  podsMetricReplicas,
  rawResourceReplicas,
  resourceReplicas,
} from './replica-calculator';
import type { ExternalValues, HpaConfig, HpaEvent, HpaPod, MetricFetch, ObjectValue, PodSamples, Tolerances } from './types';

/** A quantity's MilliValue(): rounded up to a whole milli-unit. */
export function milliValueOf(q: string): number {
  const p = parseQuantity(q);
  const shift = p.scale + 3;
  if (shift >= 0) return Number(p.value * 10n ** BigInt(shift));
  const div = 10n ** BigInt(-shift);
  const quotient = p.value / div;
  const exact = quotient * div === p.value;
  return Number(exact || p.value < 0n ? quotient : quotient + 1n);
}

/** NewMilliQuantity(v, format).String() */
export function milliQuantity(milli: number, format: QuantityFormat = 'DecimalSI'): string {
  return formatQuantity({ value: BigInt(Math.trunc(milli)), scale: -3, format });
}

/** Memory in BinarySI (as metrics-server reports it), anything else in DecimalSI. */
export function resourceQuantity(resource: string, milli: number): string {
  return milliQuantity(milli, resource === 'memory' ? 'BinarySI' : 'DecimalSI');
}

/** A *metav1.LabelSelector as Go's %v / %+v prints it (its generated String()): "nil" when absent. */
export function goLabelSelectorString(sel: V1LabelSelector | undefined | null): string {
  if (!sel) return 'nil';
  const labels = sel.matchLabels ?? {};
  const keys = Object.keys(labels).sort();
  const ml = `map[string]string{${keys.map((k) => `${k}: ${labels[k]},`).join('')}}`;
  const exprs = (sel.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:${ml},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

/** What the controller has to read from the metrics APIs for one metric spec. */
export type MetricReadPlan =
  | { kind: 'resource'; resource: string; container: string }
  | { kind: 'pods'; metricName: string; selector?: V1LabelSelector }
  | { kind: 'object'; metricName: string; selector?: V1LabelSelector; ref: { apiVersion?: string; kind: string; name: string } }
  | { kind: 'external'; metricName: string; selector?: V1LabelSelector }
  | { kind: 'none' };

export function readPlanFor(spec: V2MetricSpec): MetricReadPlan {
  switch (spec.type) {
    case 'Resource':
      return spec.resource ? { kind: 'resource', resource: spec.resource.name, container: '' } : { kind: 'none' };
    case 'ContainerResource':
      return spec.containerResource
        ? { kind: 'resource', resource: spec.containerResource.name, container: spec.containerResource.container }
        : { kind: 'none' };
    case 'Pods':
      return spec.pods ? { kind: 'pods', metricName: spec.pods.metric.name, selector: spec.pods.metric.selector } : { kind: 'none' };
    case 'Object':
      return spec.object
        ? { kind: 'object', metricName: spec.object.metric.name, selector: spec.object.metric.selector, ref: spec.object.describedObject }
        : { kind: 'none' };
    case 'External':
      return spec.external ? { kind: 'external', metricName: spec.external.metric.name, selector: spec.external.metric.selector } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}

/** What the controller read for one metric spec (the field its read plan names). */
export interface MetricReading {
  podSamples?: MetricFetch<PodSamples>;
  object?: MetricFetch<ObjectValue>;
  external?: MetricFetch<ExternalValues>;
}

export interface MetricContext {
  namespace: string;
  /** scale.spec.replicas */
  specReplicas: number;
  /** scale.status.replicas */
  statusReplicas: number;
  pods: readonly HpaPod[];
  tolerances: Tolerances;
  config: Pick<HpaConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs' | 'podLevelResources'>;
  nowMs: number;
}

export type MetricProposal =
  | { ok: true; replicas: number; metricName: string; timestampMs: number; status: V2MetricStatus }
  | { ok: false; error: string; condition: ConditionUpdate; events: HpaEvent[] };

const NOT_READ: MetricFetch<never> = { ok: false, error: 'metric was not read' };

function failure(reason: string, conditionErr: string, returnedErr: string): MetricProposal {
  return {
    ok: false,
    error: returnedErr,
    condition: scalingActive.unableToCompute(reason, conditionErr),
    events: [hpaEvents.metricFailure(reason, conditionErr)],
  };
}

/** One metric's proposal, status entry and name, or its failure (upstream's computeReplicasForMetric). */
export function computeReplicasForMetric(spec: V2MetricSpec, reading: MetricReading, ctx: MetricContext): MetricProposal {
  const base = { currentReplicas: ctx.specReplicas, tolerances: ctx.tolerances, pods: ctx.pods, config: ctx.config, nowMs: ctx.nowMs };
  switch (spec.type) {
    case 'Resource':
    case 'ContainerResource': {
      const isContainer = spec.type === 'ContainerResource';
      const src = isContainer ? spec.containerResource : spec.resource;
      const container = isContainer && spec.containerResource ? spec.containerResource.container : '';
      const reason = isContainer ? 'FailedGetContainerResourceMetric' : 'FailedGetResourceMetric';
      const outer = (e: string) => (isContainer ? `failed to get ${container} container metric value: ${e}` : `failed to get ${src?.name} resource metric value: ${e}`);
      if (!src) return failure(reason, 'metric source is missing', outer('metric source is missing'));
      const resource = src.name;
      const metrics = reading.podSamples ?? NOT_READ;
      if (src.target.averageValue !== undefined) {
        const r = rawResourceReplicas({ ...base, targetUsage: milliValueOf(src.target.averageValue), resource, metrics });
        if (!r.ok) {
          const e = `failed to get ${resource} usage: ${r.error}`;
          return failure(reason, e, outer(e));
        }
        const current = { averageValue: resourceQuantity(resource, r.usage) };
        return { ok: true, replicas: r.replicas, timestampMs: r.timestampMs, metricName: `${resource} resource`, status: statusFor(spec, current) };
      }
      if (src.target.averageUtilization === undefined) {
        const e = 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set';
        return failure(reason, e, outer(e));
      }
      const r = resourceReplicas({ ...base, targetUtilization: src.target.averageUtilization, resource, container, metrics });
      if (!r.ok) {
        const e = `failed to get ${resource} utilization: ${r.error}`;
        return failure(reason, e, outer(e));
      }
      const metricName = isContainer
        ? `${resource} container resource utilization (percentage of request)`
        : `${resource} resource utilization (percentage of request)`;
      const current = { averageUtilization: r.utilization, averageValue: resourceQuantity(resource, r.rawUtilization) };
      return { ok: true, replicas: r.replicas, timestampMs: r.timestampMs, metricName, status: statusFor(spec, current) };
    }
    case 'Pods': {
      const src = spec.pods;
      const outer = (e: string) => `failed to get pods metric value: ${e}`;
      if (!src) return failure('FailedGetPodsMetric', 'metric source is missing', outer('metric source is missing'));
      const r = podsMetricReplicas({
        ...base,
        targetUsage: milliValueOf(src.target.averageValue ?? '0'),
        metricName: src.metric.name,
        metrics: reading.podSamples ?? NOT_READ,
      });
      if (!r.ok) return failure('FailedGetPodsMetric', r.error, outer(r.error));
      return {
        ok: true,
        replicas: r.replicas,
        timestampMs: r.timestampMs,
        metricName: `pods metric ${src.metric.name}`,
        status: { type: 'Pods', pods: { metric: identifier(src.metric), current: { averageValue: milliQuantity(r.usage) } } },
      };
    }
    case 'Object': {
      const src = spec.object;
      const outer = (e: string) => `failed to get object metric value: ${e}`;
      if (!src) return failure('FailedGetObjectMetric', 'metric source is missing', outer('metric source is missing'));
      const common = { metricName: src.metric.name, tolerances: ctx.tolerances, namespace: ctx.namespace, ref: src.describedObject, metric: reading.object ?? NOT_READ };
      const status = (current: { value?: string; averageValue?: string }): V2MetricStatus => ({
        type: 'Object',
        object: { describedObject: src.describedObject, metric: identifier(src.metric), current },
      });
      if (src.target.type === 'Value' && src.target.value !== undefined) {
        const r = objectMetricReplicas({ ...common, currentReplicas: ctx.specReplicas, targetUsage: milliValueOf(src.target.value), pods: ctx.pods });
        if (!r.ok) return failure('FailedGetObjectMetric', r.error, outer(r.error));
        return {
          ok: true,
          replicas: r.replicas,
          timestampMs: r.timestampMs,
          metricName: `${src.describedObject.kind} metric ${src.metric.name}`,
          status: status({ value: milliQuantity(r.usage) }),
        };
      }
      if (src.target.type === 'AverageValue' && src.target.averageValue !== undefined) {
        const r = objectPerPodMetricReplicas({ ...common, statusReplicas: ctx.statusReplicas, targetAverageUsage: milliValueOf(src.target.averageValue) });
        if (!r.ok) return failure('FailedGetObjectMetric', r.error, outer(`failed to get ${src.metric.name} object metric: ${r.error}`));
        return {
          ok: true,
          replicas: r.replicas,
          timestampMs: r.timestampMs,
          // upstream names this one as if it were external
          metricName: `external metric ${src.metric.name}(${goLabelSelectorString(src.metric.selector)})`,
          status: status({ averageValue: milliQuantity(r.usage) }),
        };
      }
      const e = 'invalid object metric source: neither a value target nor an average value target was set';
      return failure('FailedGetObjectMetric', e, outer(e));
    }
    case 'External': {
      const src = spec.external;
      const name = src?.metric.name ?? '';
      const outer = (e: string) => `failed to get ${name} external metric value: ${e}`;
      if (!src) return failure('FailedGetExternalMetric', 'metric source is missing', outer('metric source is missing'));
      const selectorText = goLabelSelectorString(src.metric.selector);
      const common = { metricName: name, selectorText, tolerances: ctx.tolerances, namespace: ctx.namespace, metric: reading.external ?? NOT_READ };
      const metricName = `external metric ${name}(${selectorText})`;
      const status = (current: { value?: string; averageValue?: string }): V2MetricStatus => ({
        type: 'External',
        external: { metric: identifier(src.metric), current },
      });
      if (src.target.averageValue !== undefined) {
        const r = externalPerPodMetricReplicas({ ...common, statusReplicas: ctx.statusReplicas, targetUsagePerPod: milliValueOf(src.target.averageValue) });
        if (!r.ok) return failure('FailedGetExternalMetric', r.error, outer(`failed to get ${name} external metric: ${r.error}`));
        return { ok: true, replicas: r.replicas, timestampMs: r.timestampMs, metricName, status: status({ averageValue: milliQuantity(r.usage) }) };
      }
      if (src.target.value !== undefined) {
        const r = externalMetricReplicas({ ...common, currentReplicas: ctx.specReplicas, targetUsage: milliValueOf(src.target.value), pods: ctx.pods });
        if (!r.ok) return failure('FailedGetExternalMetric', r.error, outer(`failed to get external metric ${name}: ${r.error}`));
        return { ok: true, replicas: r.replicas, timestampMs: r.timestampMs, metricName, status: status({ value: milliQuantity(r.usage) }) };
      }
      const e = 'invalid external metric source: neither a value target nor an average value target was set';
      return failure('FailedGetExternalMetric', e, outer(e));
    }
    default: {
      const e = `unknown metric source type ${JSON.stringify(spec.type)}`;
      return { ok: false, error: e, condition: scalingActive.unableToCompute('InvalidMetricSourceType', e), events: [hpaEvents.metricFailure('InvalidMetricSourceType', e)] };
    }
  }
}

function identifier(m: { name: string; selector?: V1LabelSelector }): { name: string; selector?: V1LabelSelector } {
  return m.selector ? { name: m.name, selector: m.selector } : { name: m.name };
}

function statusFor(spec: V2MetricSpec, current: { averageUtilization?: number; averageValue?: string }): V2MetricStatus {
  if (spec.type === 'ContainerResource' && spec.containerResource) {
    return { type: 'ContainerResource', containerResource: { name: spec.containerResource.name, container: spec.containerResource.container, current } };
  }
  return { type: 'Resource', resource: { name: spec.resource?.name ?? '', current } };
}

export interface MetricsProposal {
  /** -1 when the HPA cannot act on its metrics (upstream's failure signal) */
  replicas: number;
  metricName: string;
  timestampMs: number;
  /** one entry per spec; a failed metric leaves `{ type: '' }` as upstream's zero MetricStatus */
  statuses: V2MetricStatus[];
  /** the aggregated error, also when some metrics still gave a proposal */
  error?: string;
  /** the ScalingActive condition to set */
  condition: ConditionUpdate;
  /** Events in the order upstream records them (FailedComputeMetricsReplicas last, when replicas is -1) */
  events: HpaEvent[];
}

/**
 * All metrics together (upstream's computeReplicasForMetrics after selector validation): the
 * largest proposal wins; when every metric failed, or some failed and the rest would scale
 * below spec.replicas, the HPA does nothing and ScalingActive takes the first failure.
 */
export function computeReplicasForMetrics(specs: readonly V2MetricSpec[], readings: readonly MetricReading[], ctx: MetricContext): MetricsProposal {
  let replicas = 0;
  let metricName = '';
  let timestampMs = 0;
  const statuses: V2MetricStatus[] = specs.map(() => ({ type: '' }));
  const evts: HpaEvent[] = [];
  let invalid = 0;
  let firstError: string | undefined;
  let firstCondition: ConditionUpdate | undefined;
  specs.forEach((spec, i) => {
    const p = computeReplicasForMetric(spec, readings[i] ?? {}, ctx);
    if (!p.ok) {
      evts.push(...p.events);
      if (invalid === 0) {
        firstError = p.error;
        firstCondition = p.condition;
      }
      invalid++;
      return;
    }
    statuses[i] = p.status;
    if (replicas === 0 || p.replicas > replicas) {
      replicas = p.replicas;
      metricName = p.metricName;
      timestampMs = p.timestampMs;
    }
  });
  const error = firstError !== undefined ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError}` : undefined;
  if (invalid >= specs.length || (invalid > 0 && replicas < ctx.specReplicas)) {
    const condition = firstCondition ?? scalingActive.unableToCompute('', '');
    evts.push(hpaEvents.failedComputeMetricsReplicas(error ?? ''));
    return { replicas: -1, metricName: '', timestampMs: 0, statuses, error, condition, events: evts };
  }
  return { replicas, metricName, timestampMs, statuses, error, condition: scalingActive.validMetricFound(metricName), events: evts };
}
