/**
 * The metrics stand-in's pure part: what the three metrics APIs answer, computed from objects
 * already read (pods from the watch cache, nodes, a ConfigMap, a described object). No I/O here,
 * so the unit tests cover every rule without a cluster.
 *
 * Where values come from (also in README's local-stack section):
 *  - resource usage (metrics.k8s.io): pod annotations metrics.temporal-kcm.io/cpu and /memory
 *    (usage of EACH container) and metrics.temporal-kcm.io/containers (JSON, per container);
 *  - custom metrics (custom.metrics.k8s.io): annotation custom.metrics.temporal-kcm.io/<metric> on
 *    the pod or on the described object;
 *  - external metrics (external.metrics.k8s.io): ConfigMap temporal-kcm-external-metrics, key = metric.
 */
import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import { addQuantities, formatQuantity, parseQuantity, tryParseQuantity, zeroQuantity } from '../../../workflows/common/quantity';
import { parseSelectorString, requirementsMatch, type StringRequirement } from '../../../workflows/common/label-selector-string';

export const CPU_ANNOTATION = 'metrics.temporal-kcm.io/cpu';
export const MEMORY_ANNOTATION = 'metrics.temporal-kcm.io/memory';
export const CONTAINERS_ANNOTATION = 'metrics.temporal-kcm.io/containers';
/** optional: the pod's PodMetrics window in whole seconds (`5s`), instead of WINDOW_SECONDS */
export const WINDOW_ANNOTATION = 'metrics.temporal-kcm.io/window';
export const CUSTOM_ANNOTATION_PREFIX = 'custom.metrics.temporal-kcm.io/';
export const EXTERNAL_CONFIGMAP = 'temporal-kcm-external-metrics';

/** metrics-server scrapes every 15 s by default; its window is about one scrape interval. */
export const WINDOW_SECONDS = 15;

export const METRICS_GV = { group: 'metrics.k8s.io', version: 'v1beta1' };
export const CUSTOM_GV = { group: 'custom.metrics.k8s.io', version: 'v1beta2' };
export const EXTERNAL_GV = { group: 'external.metrics.k8s.io', version: 'v1beta1' };
export const GROUP_VERSIONS = [METRICS_GV, CUSTOM_GV, EXTERNAL_GV];

// ---------------------------------------------------------------------------------------------
// label selectors as query strings (k8s.io/apimachinery/pkg/labels.Parse)
// ---------------------------------------------------------------------------------------------

/** A parsed requirement: the HPA's own parser (workflows/common), so both ends read selectors alike. */
export type Requirement = StringRequirement;

/** A bad selector, annotation or ConfigMap entry: the request's fault (400). */
export class SelectorParseError extends Error {}

/** Parse a label selector string; '' selects everything. Throws SelectorParseError. */
export function parseSelector(selector: string | null | undefined): Requirement[] {
  const p = parseSelectorString((selector ?? '').trim());
  if (!p.ok) throw new SelectorParseError(`${p.error} in selector "${(selector ?? '').trim()}"`);
  return p.requirements;
}

export const selectorMatches = requirementsMatch;

/** metav1.LabelSelector form of a parsed selector (as a MetricIdentifier carries it); null when empty. */
export function toLabelSelector(reqs: readonly Requirement[]): { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> } | null {
  if (!reqs.length) return null;
  const matchLabels: Record<string, string> = {};
  const matchExpressions: Array<{ key: string; operator: string; values?: string[] }> = [];
  for (const r of reqs) {
    if (r.op === 'in' && r.values.length === 1 && !(r.key in matchLabels)) matchLabels[r.key] = r.values[0];
    else if (r.op === 'in') matchExpressions.push({ key: r.key, operator: 'In', values: r.values });
    else if (r.op === 'notin') matchExpressions.push({ key: r.key, operator: 'NotIn', values: r.values });
    else if (r.op === 'exists') matchExpressions.push({ key: r.key, operator: 'Exists' });
    else if (r.op === '!') matchExpressions.push({ key: r.key, operator: 'DoesNotExist' });
    // Gt/Lt have no LabelSelector form; they still filter
  }
  return {
    ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
    ...(matchExpressions.length ? { matchExpressions } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// resource usage from pod annotations
// ---------------------------------------------------------------------------------------------

export interface Usage {
  cpu: string;
  memory: string;
}

export interface ContainerUsage {
  name: string;
  usage: Usage;
}

/** A pod's reported usage, undefined when it reports none; `error` says why an annotated pod is skipped. */
export interface PodUsage {
  containers?: ContainerUsage[];
  /** the window to report, `15s` unless the window annotation says otherwise */
  window?: string;
  error?: string;
}

/** Whole seconds 1..3600 (`5s`, `90s`), printed as Go prints a time.Duration (`5s`, `1m30s`). */
export function parseWindow(v: string): string | undefined {
  const m = v.trim().match(/^(\d+)s$/);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (n < 1 || n > 3600) return undefined;
  if (n < 60) return `${n}s`;
  const h = Math.floor(n / 3600);
  const min = Math.floor((n % 3600) / 60);
  return `${h ? `${h}h` : ''}${min}m${n % 60}s`;
}

function quantityOrError(v: unknown, what: string): { q?: string; error?: string } {
  if (typeof v !== 'string') return { error: `${what}: want a quantity string, got ${JSON.stringify(v)}` };
  const q = tryParseQuantity(v.trim());
  if (!q) return { error: `${what}: "${v}" is not a quantity` };
  if (q.value < 0n) return { error: `${what}: "${v}" is negative` };
  return { q: formatQuantity(q) };
}

/**
 * The usage a Running pod reports: every container of spec.containers gets the pod-level cpu and
 * memory annotations, overridden per container by the containers annotation; a resource named
 * nowhere reports 0 (metrics-server always reports both). A pod that is not Running, or carries
 * none of the three annotations, reports nothing (like a pod metrics-server has not scraped yet).
 */
export function podUsage(pod: V1Pod): PodUsage {
  const ann = pod.metadata?.annotations ?? {};
  if (pod.status?.phase !== 'Running') return {};
  if (!(CPU_ANNOTATION in ann) && !(MEMORY_ANNOTATION in ann) && !(CONTAINERS_ANNOTATION in ann)) return {};
  const base: Partial<Usage> = {};
  for (const [res, key] of [['cpu', CPU_ANNOTATION], ['memory', MEMORY_ANNOTATION]] as const) {
    if (!(key in ann)) continue;
    const r = quantityOrError(ann[key], key);
    if (r.error) return { error: r.error };
    base[res] = r.q;
  }
  let perContainer: Record<string, Partial<Usage>> = {};
  if (CONTAINERS_ANNOTATION in ann) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(ann[CONTAINERS_ANNOTATION]);
    } catch (e) {
      return { error: `${CONTAINERS_ANNOTATION}: not JSON (${(e as Error).message})` };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return { error: `${CONTAINERS_ANNOTATION}: want {"<container>":{"cpu":"..","memory":".."}}` };
    }
    for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        return { error: `${CONTAINERS_ANNOTATION}: container ${name}: want {"cpu":"..","memory":".."}` };
      }
      const u: Partial<Usage> = {};
      for (const [res, val] of Object.entries(v as Record<string, unknown>)) {
        if (res !== 'cpu' && res !== 'memory') return { error: `${CONTAINERS_ANNOTATION}: container ${name}: unknown resource ${res}` };
        const r = quantityOrError(val, `${CONTAINERS_ANNOTATION}: container ${name} ${res}`);
        if (r.error) return { error: r.error };
        u[res] = r.q;
      }
      perContainer = { ...perContainer, [name]: u };
    }
  }
  let window = `${WINDOW_SECONDS}s`;
  if (WINDOW_ANNOTATION in ann) {
    const w = parseWindow(ann[WINDOW_ANNOTATION]);
    if (!w) return { error: `${WINDOW_ANNOTATION}: "${ann[WINDOW_ANNOTATION]}" is not a number of seconds like 5s (1s..3600s)` };
    window = w;
  }
  const containers = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name,
    usage: {
      cpu: perContainer[c.name]?.cpu ?? base.cpu ?? '0',
      memory: perContainer[c.name]?.memory ?? base.memory ?? '0',
    },
  }));
  return { containers, window };
}

/** RFC 3339 to the second, as metav1.Time serializes. */
export function metaTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface PodMetrics {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; creationTimestamp: string };
  timestamp: string;
  window: string;
  containers: ContainerUsage[];
}

export interface NodeMetrics {
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp: string };
  timestamp: string;
  window: string;
  usage: Usage;
}

export function podMetrics(pod: V1Pod, containers: ContainerUsage[], now: Date, window = `${WINDOW_SECONDS}s`): PodMetrics {
  return {
    metadata: {
      name: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
      ...(pod.metadata?.labels ? { labels: { ...pod.metadata.labels } } : {}),
      creationTimestamp: metaTime(now),
    },
    timestamp: metaTime(now),
    window,
    containers,
  };
}

/** PodMetrics of the reporting pods in `namespace` (all namespaces when undefined) that match the selector, sorted. */
export function listPodMetrics(pods: Iterable<V1Pod>, namespace: string | undefined, reqs: readonly Requirement[], now: Date): PodMetrics[] {
  const out: PodMetrics[] = [];
  for (const pod of pods) {
    if (namespace !== undefined && pod.metadata?.namespace !== namespace) continue;
    if (!selectorMatches(reqs, pod.metadata?.labels)) continue;
    const u = podUsage(pod);
    if (u.containers) out.push(podMetrics(pod, u.containers, now, u.window));
  }
  return out.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
}

/** Node usage = the sum of the reporting pods bound to it (0 when none). */
export function nodeMetrics(node: V1Node, pods: Iterable<V1Pod>, now: Date): NodeMetrics {
  let cpu = zeroQuantity('DecimalSI');
  let memory = zeroQuantity('BinarySI');
  for (const pod of pods) {
    if (pod.spec?.nodeName !== node.metadata?.name) continue;
    for (const c of podUsage(pod).containers ?? []) {
      cpu = addQuantities(cpu, parseQuantity(c.usage.cpu));
      memory = addQuantities(memory, parseQuantity(c.usage.memory));
    }
  }
  return {
    metadata: {
      name: node.metadata?.name ?? '',
      ...(node.metadata?.labels ? { labels: { ...node.metadata.labels } } : {}),
      creationTimestamp: metaTime(now),
    },
    timestamp: metaTime(now),
    window: `${WINDOW_SECONDS}s`,
    usage: { cpu: formatQuantity(cpu), memory: formatQuantity(memory) },
  };
}

// ---------------------------------------------------------------------------------------------
// custom metrics
// ---------------------------------------------------------------------------------------------

export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
  apiVersion: string;
}

export interface MetricValue {
  describedObject: ObjectRef;
  metric: { name: string; selector: ReturnType<typeof toLabelSelector> };
  timestamp: string;
  windowSeconds: number;
  value: string;
}

export interface AnnotatedObject {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

/** The object's custom metric value, canonical; undefined when absent; throws on a malformed quantity. */
export function customValue(obj: AnnotatedObject, metric: string): string | undefined {
  const raw = obj.metadata?.annotations?.[CUSTOM_ANNOTATION_PREFIX + metric];
  if (raw === undefined) return undefined;
  const q = tryParseQuantity(raw.trim());
  if (!q) throw new SelectorParseError(`annotation ${CUSTOM_ANNOTATION_PREFIX}${metric}="${raw}" on ${obj.metadata?.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata?.name} is not a quantity`);
  return formatQuantity(q);
}

export function metricValue(obj: AnnotatedObject, ref: Omit<ObjectRef, 'name' | 'namespace'>, metric: string, metricReqs: readonly Requirement[], value: string, now: Date): MetricValue {
  return {
    describedObject: {
      kind: ref.kind,
      ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
      name: obj.metadata?.name ?? '',
      apiVersion: ref.apiVersion,
    },
    metric: { name: metric, selector: toLabelSelector(metricReqs) },
    timestamp: metaTime(now),
    windowSeconds: WINDOW_SECONDS,
    value,
  };
}

/** MetricValues of the objects carrying the metric's annotation that match the label selector, sorted by name. */
export function listMetricValues(objs: Iterable<AnnotatedObject>, ref: Omit<ObjectRef, 'name' | 'namespace'>, metric: string, reqs: readonly Requirement[], metricReqs: readonly Requirement[], now: Date): MetricValue[] {
  const out: MetricValue[] = [];
  for (const o of objs) {
    if (!selectorMatches(reqs, o.metadata?.labels)) continue;
    const v = customValue(o, metric);
    if (v !== undefined) out.push(metricValue(o, ref, metric, metricReqs, v, now));
  }
  return out.sort((a, b) => `${a.describedObject.namespace ?? ''}/${a.describedObject.name}`.localeCompare(`${b.describedObject.namespace ?? ''}/${b.describedObject.name}`));
}

/** Custom metric names the cached pods carry: the custom group's discovery lists them as pods/<metric>. */
export function podCustomMetricNames(pods: Iterable<V1Pod>): string[] {
  const names = new Set<string>();
  for (const p of pods) {
    for (const k of Object.keys(p.metadata?.annotations ?? {})) {
      if (k.startsWith(CUSTOM_ANNOTATION_PREFIX) && k.length > CUSTOM_ANNOTATION_PREFIX.length) names.add(k.slice(CUSTOM_ANNOTATION_PREFIX.length));
    }
  }
  return [...names].sort();
}

// ---------------------------------------------------------------------------------------------
// external metrics
// ---------------------------------------------------------------------------------------------

export interface ExternalMetricValue {
  metricName: string;
  metricLabels: Record<string, string>;
  timestamp: string;
  window: number;
  value: string;
}

/**
 * The values of `metric` in the namespace's external-metrics ConfigMap: a quantity (one value, no
 * labels) or a JSON array of {labels, value}, filtered by the selector. Undefined when the
 * ConfigMap or the key is absent; throws SelectorParseError on a malformed entry.
 */
export function externalValues(cm: V1ConfigMap | undefined, metric: string, reqs: readonly Requirement[], now: Date): ExternalMetricValue[] | undefined {
  const raw = cm?.data?.[metric];
  if (raw === undefined) return undefined;
  const item = (labels: Record<string, string>, value: string): ExternalMetricValue =>
    ({ metricName: metric, metricLabels: labels, timestamp: metaTime(now), window: WINDOW_SECONDS, value });
  const text = raw.trim();
  if (!text.startsWith('[')) {
    const q = tryParseQuantity(text);
    if (!q) throw new SelectorParseError(`ConfigMap ${EXTERNAL_CONFIGMAP} key ${metric}: "${raw}" is neither a quantity nor a JSON array`);
    return selectorMatches(reqs, {}) ? [item({}, formatQuantity(q))] : [];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new SelectorParseError(`ConfigMap ${EXTERNAL_CONFIGMAP} key ${metric}: not JSON (${(e as Error).message})`);
  }
  const out: ExternalMetricValue[] = [];
  for (const [i, entry] of (parsed as unknown[]).entries()) {
    const e = entry as { labels?: unknown; value?: unknown };
    if (typeof e !== 'object' || e === null) throw new SelectorParseError(`ConfigMap ${EXTERNAL_CONFIGMAP} key ${metric}[${i}]: want {"labels":{..},"value":".."}`);
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries((e.labels ?? {}) as Record<string, unknown>)) {
      if (typeof v !== 'string') throw new SelectorParseError(`ConfigMap ${EXTERNAL_CONFIGMAP} key ${metric}[${i}]: label ${k} is not a string`);
      labels[k] = v;
    }
    const v = typeof e.value === 'number' ? String(e.value) : e.value;
    const q = typeof v === 'string' ? tryParseQuantity(v.trim()) : undefined;
    if (!q) throw new SelectorParseError(`ConfigMap ${EXTERNAL_CONFIGMAP} key ${metric}[${i}]: value ${JSON.stringify(e.value)} is not a quantity`);
    if (selectorMatches(reqs, labels)) out.push(item(labels, formatQuantity(q)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// request paths
// ---------------------------------------------------------------------------------------------

export type Route =
  | { kind: 'root' | 'health' | 'openapi-v2' | 'openapi-v3' | 'apis' }
  | { kind: 'group'; group: string }
  | { kind: 'discovery'; group: string; version: string }
  | { kind: 'pod-metrics'; namespace?: string; name?: string }
  | { kind: 'node-metrics'; name?: string }
  /** resource 'metrics' with name = the namespace: a metric describing the namespace itself */
  | { kind: 'custom'; namespace?: string; resource: string; name: string; metric: string }
  | { kind: 'external'; namespace: string; metric: string }
  | { kind: 'not-found' };

/** Map a request path to what it asks for (query string excluded). */
export function route(pathname: string): Route {
  const p = pathname.replace(/\/+$/, '') || '/';
  if (p === '/healthz' || p === '/readyz' || p === '/livez' || /^\/(healthz|readyz|livez)\/[\w-]+$/.test(p)) return { kind: 'health' };
  if (p === '/openapi/v2') return { kind: 'openapi-v2' };
  if (p === '/openapi/v3') return { kind: 'openapi-v3' };
  if (p === '/') return { kind: 'root' };
  const s = p.split('/').slice(1).map(decodeURIComponent);
  if (s[0] !== 'apis') return { kind: 'not-found' };
  if (s.length === 1) return { kind: 'apis' };
  const gv = GROUP_VERSIONS.find((g) => g.group === s[1]);
  if (!gv) return { kind: 'not-found' };
  if (s.length === 2) return { kind: 'group', group: gv.group };
  if (s[2] !== gv.version) return { kind: 'not-found' };
  if (s.length === 3) return { kind: 'discovery', group: gv.group, version: gv.version };
  const rest = s.slice(3);
  if (gv === METRICS_GV) {
    if (rest[0] === 'nodes' && rest.length <= 2) return { kind: 'node-metrics', name: rest[1] };
    if (rest[0] === 'pods' && rest.length <= 2) return { kind: 'pod-metrics', name: rest[1] };
    if (rest[0] === 'namespaces' && rest.length >= 3 && rest.length <= 4 && rest[2] === 'pods') return { kind: 'pod-metrics', namespace: rest[1], name: rest[3] };
    return { kind: 'not-found' };
  }
  if (gv === CUSTOM_GV) {
    if (rest[0] === 'namespaces' && rest.length === 4 && rest[2] === 'metrics') return { kind: 'custom', resource: 'metrics', name: rest[1], metric: rest[3] };
    if (rest[0] === 'namespaces' && rest.length === 5) return { kind: 'custom', namespace: rest[1], resource: rest[2], name: rest[3], metric: rest[4] };
    if (rest.length === 3) return { kind: 'custom', resource: rest[0], name: rest[1], metric: rest[2] };
    return { kind: 'not-found' };
  }
  if (rest[0] === 'namespaces' && rest.length === 3) return { kind: 'external', namespace: rest[1], metric: rest[2] };
  return { kind: 'not-found' };
}

// ---------------------------------------------------------------------------------------------
// discovery documents
// ---------------------------------------------------------------------------------------------

function groupDoc(g: { group: string; version: string }) {
  const v = { groupVersion: `${g.group}/${g.version}`, version: g.version };
  return { name: g.group, versions: [v], preferredVersion: v };
}

export function apiGroupList() {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUP_VERSIONS.map(groupDoc) };
}

export function apiGroup(group: string) {
  const g = GROUP_VERSIONS.find((x) => x.group === group)!;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) };
}

export interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
}

/** APIResourceList of a group-version; the custom group lists the pod metrics the cache has seen. */
export function apiResourceList(group: string, customPodMetrics: string[] = []) {
  const g = GROUP_VERSIONS.find((x) => x.group === group)!;
  let resources: ApiResource[] = [];
  if (g === METRICS_GV) {
    resources = [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ];
  } else if (g === CUSTOM_GV) {
    resources = customPodMetrics.map((m) => ({ name: `pods/${m}`, singularName: '', namespaced: true, kind: 'MetricValueList', verbs: ['get'] }));
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${g.group}/${g.version}`, resources };
}

export function status(code: number, reason: string, message: string, details?: { name?: string; group?: string; kind?: string }) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}
