import type { V2MetricSpec } from '@kubernetes/client-node';
import { labelSelectorToString } from '../../workflows/common/label-selector-string';
import { milliValueOf, readPlanFor, type MetricReading } from '../../workflows/hpa/metric-status';
import { podMetricsItem, type PodMetricsJson } from '../../workflows/hpa/projections';
import { fetchErrors, samplesFromCustomMetrics, samplesFromPodMetrics, valuesFromExternalMetrics } from '../../workflows/hpa/replica-calculator';
import type { MetricFetch } from '../../workflows/hpa/types';
import type { RestMapper } from '../kube/discovery';
import { ApiError, type KubeRest } from '../kube/rest';

/*
 * The HPA's reads of the three metrics APIs, as upstream's metrics client makes them (the same
 * paths and query parameters), reduced to the pure layer's MetricReading. A failed read is data,
 * not an exception: the HPA turns it into its FailedGet*Metric condition and Event.
 */

const RESOURCE_METRICS = '/apis/metrics.k8s.io/v1beta1';
const CUSTOM_METRICS = '/apis/custom.metrics.k8s.io/v1beta2';
const EXTERNAL_METRICS = '/apis/external.metrics.k8s.io/v1beta1';

interface MetricValueJson {
  describedObject?: { name?: string };
  timestamp?: string;
  windowSeconds?: number;
  value?: string;
}

const ms = (t: string | undefined): number => {
  const v = t ? Date.parse(t) : NaN;
  return Number.isNaN(v) ? 0 : v;
};

/**
 * What client-go's error prints for a failed request: the server's Status message when it sent
 * one, else the generic text for the status code naming the verb and resource (as the
 * aggregator's plain-text 503 "service unavailable" becomes "the server is currently unable to
 * handle the request (get pods.metrics.k8s.io)").
 */
export function clientErrorText(e: unknown, verb: string, groupResource: string): string {
  if (!(e instanceof ApiError)) return e instanceof Error ? e.message : String(e);
  if (e.reason !== 'Unknown' && e.serverMessage) return e.serverMessage;
  const suffix = ` (${verb} ${groupResource})`;
  switch (e.status) {
    case 0: return e.message;
    case 401: return `Unauthorized${suffix}`;
    case 403: return `Forbidden${suffix}`;
    case 404: return `the server could not find the requested resource${suffix}`;
    case 429: return `the server has received too many requests and has asked us to try again later${suffix}`;
    case 500: return `an error on the server ("${e.serverMessage.trim()}") has prevented the request from succeeding${suffix}`;
    case 503: return `the server is currently unable to handle the request${suffix}`;
    case 504: return `the server was unable to return a response in the time allotted, but may still be processing the request${suffix}`;
    default: return `an error on the server ("${e.serverMessage.trim()}") has prevented the request from succeeding${suffix}`;
  }
}

function query(params: Record<string, string>): string {
  const q = Object.entries(params).filter(([, v]) => v !== '').map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return q.length ? `?${q.join('&')}` : '';
}

async function fetchList<T>(rest: KubeRest, path: string, groupResource: string, wrap: (e: string) => string): Promise<MetricFetch<T[]>> {
  try {
    const body = (await rest.request<{ items?: T[] }>('GET', path)).body;
    return { ok: true, value: body.items ?? [] };
  } catch (e) {
    return { ok: false, error: wrap(clientErrorText(e, 'get', groupResource)) };
  }
}

/** Read what one metric spec needs, for the pods `podSelector` (the scale's selector string) picks. */
export async function readMetric(rest: KubeRest, mapper: RestMapper, namespace: string, podSelector: string, spec: V2MetricSpec): Promise<MetricReading> {
  const plan = readPlanFor(spec);
  const ns = `/namespaces/${encodeURIComponent(namespace)}`;
  switch (plan.kind) {
    case 'resource': {
      const r = await fetchList<PodMetricsJson>(rest, `${RESOURCE_METRICS}${ns}/pods${query({ labelSelector: podSelector })}`, 'pods.metrics.k8s.io', fetchErrors.resource);
      return { podSamples: r.ok ? samplesFromPodMetrics(r.value.map(podMetricsItem), plan.resource, plan.container) : r };
    }
    case 'pods': {
      const path = `${CUSTOM_METRICS}${ns}/pods/*/${encodeURIComponent(plan.metricName)}${query({ labelSelector: podSelector, metricLabelSelector: labelSelectorToString(plan.selector) })}`;
      const r = await fetchList<MetricValueJson>(rest, path, 'pods.custom.metrics.k8s.io', fetchErrors.custom);
      if (!r.ok) return { podSamples: r };
      return {
        podSamples: samplesFromCustomMetrics(r.value.map((m) => ({
          pod: m.describedObject?.name ?? '',
          milli: milliValueOf(m.value ?? '0'),
          timestampMs: ms(m.timestamp),
          ...(m.windowSeconds !== undefined ? { windowSeconds: m.windowSeconds } : {}),
        }))),
      };
    }
    case 'object': {
      const metricSelector = query({ metricLabelSelector: labelSelectorToString(plan.selector) });
      const group = plan.ref.apiVersion?.includes('/') ? plan.ref.apiVersion.slice(0, plan.ref.apiVersion.indexOf('/')) : '';
      let path: string;
      if (plan.ref.kind === 'Namespace' && group === '') {
        // a namespace's own metric: the HPA's namespace, whatever name the reference gives
        path = `${CUSTOM_METRICS}${ns}/metrics/${encodeURIComponent(plan.metricName)}${metricSelector}`;
      } else {
        const info = await mapper.lookupGroupKind(group, plan.ref.kind);
        if (!info) {
          return { object: { ok: false, error: fetchErrors.custom(`no matches for kind ${JSON.stringify(plan.ref.kind)} in group ${JSON.stringify(group)}`) } };
        }
        const qualified = group ? `${info.resource}.${group}` : info.resource;
        path = `${CUSTOM_METRICS}${ns}/${qualified}/${encodeURIComponent(plan.ref.name)}/${encodeURIComponent(plan.metricName)}${metricSelector}`;
      }
      const r = await fetchList<MetricValueJson>(rest, path, 'custom.metrics.k8s.io', fetchErrors.custom);
      if (!r.ok) return { object: r };
      if (r.value.length !== 1) {
        return { object: { ok: false, error: fetchErrors.custom(`the custom metrics API server returned ${r.value.length} results when we asked for exactly one`) } };
      }
      return { object: { ok: true, value: { milli: milliValueOf(r.value[0].value ?? '0'), timestampMs: ms(r.value[0].timestamp) } } };
    }
    case 'external': {
      const path = `${EXTERNAL_METRICS}${ns}/${encodeURIComponent(plan.metricName)}${query({ labelSelector: labelSelectorToString(plan.selector) })}`;
      const r = await fetchList<{ value?: string; timestamp?: string }>(rest, path, `${plan.metricName}.external.metrics.k8s.io`, fetchErrors.external);
      return { external: r.ok ? valuesFromExternalMetrics(r.value.map((m) => ({ milli: milliValueOf(m.value ?? '0'), timestampMs: ms(m.timestamp) }))) : r };
    }
    default:
      return {};
  }
}
