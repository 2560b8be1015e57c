/**
 * Quota usage, as kube-controller-manager v1.35's resource quota evaluators count it
 * (pkg/quota/v1/evaluator/core and the generic object-count evaluator): which quota resources
 * each evaluator answers for, what one object charges, and the sum over a namespace. Pure: the
 * observe activity runs it next to the objects it listed, and tests run it on plain JSON.
 *
 * Sums start from a zero DecimalSI quantity and add objects in list order, so a total prints in
 * the format of the first object that charged something, as upstream's do.
 */
import {
  Quantity,
  addQuantities,
  formatQuantity,
  fromInt,
  isZero,
  maxQuantity,
  parseQuantity,
  roundUpToInteger,
  zeroQuantity,
} from '../common/quantity';
import { labelKeyError, labelValueError } from '../common/selector';
import type {
  ContainerLike,
  ContainerStatusLike,
  NamespaceObjects,
  PodAffinityLike,
  PodLike,
  PvcLike,
  QuotaObjectKind,
  QuotaSpecLike,
  ResourceMap,
  ScopedResourceSelectorRequirement,
  ServiceLike,
  UsageResult,
} from './types';

type ResourceList = Map<string, Quantity>;

const REQUESTS_PREFIX = 'requests.';
const HUGEPAGES_PREFIX = 'hugepages-';
const DEVICE_CLASS_PREFIX = 'deviceclass.resource.kubernetes.io/';
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise */
export function objectCountName(groupResource: string): string {
  return `count/${groupResource}`;
}

/** `deployments.apps` -> { resource: 'deployments', group: 'apps' }; `secrets` -> group '' */
export function splitGroupResource(gr: string): { resource: string; group: string } {
  const dot = gr.indexOf('.');
  return dot < 0 ? { resource: gr, group: '' } : { resource: gr.slice(0, dot), group: gr.slice(dot + 1) };
}

// ---------------------------------------------------------------------------------------------
// which evaluator answers for which quota resource

const POD_RESOURCES = new Set([
  objectCountName('pods'), 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory',
  'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
]);
const SERVICE_RESOURCES = new Set([objectCountName('services'), 'services', 'services.nodeports', 'services.loadbalancers']);
const PVC_RESOURCES = new Set([objectCountName('persistentvolumeclaims'), 'persistentvolumeclaims', 'requests.storage']);

/** Object counts upstream also answers under a bare alias (`configmaps` as well as `count/configmaps`). */
const LEGACY_COUNTS: ReadonlyArray<QuotaObjectKind> = ['configmaps', 'resourcequotas', 'replicationcontrollers', 'secrets'];

/** Upstream's quota monitor never counts these. */
const IGNORED_COUNTS = new Set(['events', 'events.events.k8s.io']);

/** A resource name with no domain, or one in the kubernetes.io domain. */
function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** An extended resource a container may request (example.com/gpu), as the v1 helper decides it. */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return labelKeyError(`${REQUESTS_PREFIX}${name}`) === undefined;
}

/** Extended resources are quota'd only as requests.<name> (they cannot be overcommitted). */
function isExtendedResourceNameForQuota(name: string): boolean {
  const nonNative = !isNativeResource(name);
  const implicitFromDeviceClass = name.startsWith(`${REQUESTS_PREFIX}${DEVICE_CLASS_PREFIX}`);
  return (nonNative || implicitFromDeviceClass) && name.startsWith(REQUESTS_PREFIX);
}

export function podEvaluatorMatches(name: string): boolean {
  return POD_RESOURCES.has(name) || name.startsWith(HUGEPAGES_PREFIX) || name.startsWith(`${REQUESTS_PREFIX}${HUGEPAGES_PREFIX}`) ||
    isExtendedResourceNameForQuota(name);
}

export function serviceEvaluatorMatches(name: string): boolean {
  return SERVICE_RESOURCES.has(name);
}

export function pvcEvaluatorMatches(name: string): boolean {
  if (PVC_RESOURCES.has(name)) return true;
  return name.endsWith(`${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`) || name.endsWith(`${STORAGE_CLASS_SUFFIX}requests.storage`);
}

/** The group-resource an object-count resource counts, or undefined when another evaluator owns it. */
export function countedGroupResource(name: string): string | undefined {
  if (podEvaluatorMatches(name) || serviceEvaluatorMatches(name) || pvcEvaluatorMatches(name)) return undefined;
  for (const gr of LEGACY_COUNTS) if (name === gr || name === objectCountName(gr)) return gr;
  if (!name.startsWith('count/')) return undefined;
  const gr = name.slice('count/'.length);
  return gr && !IGNORED_COUNTS.has(gr) ? gr : undefined;
}

/** Which watched kinds can move the usage of a quota with these hard resources. */
export function trackedKinds(hardNames: Iterable<string>): QuotaObjectKind[] {
  const kinds = new Set<QuotaObjectKind>();
  for (const name of hardNames) {
    if (podEvaluatorMatches(name)) kinds.add('pods');
    else if (serviceEvaluatorMatches(name)) kinds.add('services');
    else if (pvcEvaluatorMatches(name)) kinds.add('persistentvolumeclaims');
    else {
      const gr = countedGroupResource(name);
      if (gr && (LEGACY_COUNTS as readonly string[]).includes(gr)) kinds.add(gr as QuotaObjectKind);
    }
  }
  return [...kinds];
}

/** What the observe activity must read to recount these hard resources. */
export interface QuotaListings {
  pods: boolean;
  services: boolean;
  persistentvolumeclaims: boolean;
  /** group-resources to count (legacy kinds and `count/<resource>.<group>`) */
  counts: string[];
}

/**
 * The reads a recount needs. With `kinds` only what those kinds feed is read (a pod changed:
 * list pods, leave the rest as the status has it); without, everything the quota tracks.
 */
export function quotaListings(hardNames: Iterable<string>, kinds?: readonly QuotaObjectKind[]): QuotaListings {
  const want = (k: string) => kinds === undefined || (kinds as readonly string[]).includes(k);
  const out: QuotaListings = { pods: false, services: false, persistentvolumeclaims: false, counts: [] };
  const counts = new Set<string>();
  for (const name of hardNames) {
    if (podEvaluatorMatches(name)) out.pods ||= want('pods');
    else if (serviceEvaluatorMatches(name)) out.services ||= want('services');
    else if (pvcEvaluatorMatches(name)) out.persistentvolumeclaims ||= want('persistentvolumeclaims');
    else {
      const gr = countedGroupResource(name);
      if (gr && want(gr)) counts.add(gr);
    }
  }
  out.counts = [...counts].sort();
  return out;
}

// ---------------------------------------------------------------------------------------------
// resource lists

function parseList(m: ResourceMap | null | undefined): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(m ?? {})) out.set(k, parseQuantity(v));
  return out;
}

/** adds `more` into `list`; a name seen first is copied as is (format included) */
function addInto(list: ResourceList, more: ResourceList): void {
  for (const [k, q] of more) {
    const have = list.get(k);
    list.set(k, have ? addQuantities(have, q) : q);
  }
}

function maxInto(list: ResourceList, more: ResourceList): void {
  for (const [k, q] of more) {
    const have = list.get(k);
    list.set(k, have ? maxQuantity(have, q) : q);
  }
}

function maxOf(first: ResourceList | undefined, ...rest: Array<ResourceList | undefined>): ResourceList {
  const out: ResourceList = new Map(first ?? []);
  for (const r of rest) if (r) maxInto(out, r);
  return out;
}

// ---------------------------------------------------------------------------------------------
// pods

function isSidecar(c: ContainerLike): boolean {
  return c.restartPolicy === 'Always';
}

/** The kubelet could not fit a requested resize: the spec no longer says what the pod holds. */
function isResizeInfeasible(pod: PodLike): boolean {
  const c = (pod.status?.conditions ?? []).find((x) => x.type === 'PodResizePending');
  return c?.reason === 'Infeasible';
}

function statusesByName(pod: PodLike): Map<string, ContainerStatusLike> {
  const out = new Map<string, ContainerStatusLike>();
  for (const s of pod.status?.containerStatuses ?? []) out.set(s.name, s);
  for (const s of pod.status?.initContainerStatuses ?? []) out.set(s.name, s);
  return out;
}

function isPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith(HUGEPAGES_PREFIX);
}

function hasPodLevel(m: ResourceMap | null | undefined): boolean {
  return Object.keys(m ?? {}).some(isPodLevelResource);
}

type Side = 'requests' | 'limits';

/**
 * One container's effective requests or limits. With in-place resize (GA in v1.35) a container
 * whose status reports resources is charged the larger of what its spec asks for and what it was
 * allocated or actually runs with; after an infeasible resize, only the latter two count.
 */
function containerResources(c: ContainerLike, status: ContainerStatusLike | undefined, pick: Side, infeasible: boolean): ResourceList {
  const spec = parseList(c.resources?.[pick]);
  if (!status || status.resources == null) return spec;
  const actual = parseList(status.resources[pick]);
  if (pick === 'requests') {
    const allocated = parseList(status.allocatedResources);
    return infeasible ? maxOf(actual, allocated) : maxOf(spec, actual, allocated);
  }
  return infeasible ? actual : maxOf(spec, actual);
}

/**
 * Requests or limits of all containers of a pod, as the sidecar KEP defines them: regular
 * containers and sidecars add up; each classic init container runs alone next to the sidecars
 * started before it, and the pod needs at least the largest of those moments.
 */
function aggregateContainers(pod: PodLike, pick: Side): ResourceList {
  const statuses = statusesByName(pod);
  const infeasible = isResizeInfeasible(pod);
  const total: ResourceList = new Map();
  for (const c of pod.spec?.containers ?? []) addInto(total, containerResources(c, statuses.get(c.name), pick, infeasible));

  const sidecars: ResourceList = new Map();
  const initPeak: ResourceList = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    if (isSidecar(c)) {
      const own = containerResources(c, statuses.get(c.name), pick, infeasible);
      addInto(total, own);
      addInto(sidecars, own);
      maxInto(initPeak, sidecars);
    } else {
      const moment: ResourceList = new Map();
      addInto(moment, parseList(c.resources?.[pick]));
      addInto(moment, sidecars);
      maxInto(initPeak, moment);
    }
  }
  maxInto(total, initPeak);
  return total;
}

/** What a pod requests: containers, then pod-level values (cpu, memory, hugepages) override, plus overhead. */
export function podRequests(pod: PodLike): ResourceList {
  const reqs = aggregateContainers(pod, 'requests');
  const podLevel = pod.spec?.resources?.requests;
  if (hasPodLevel(podLevel)) {
    for (const [k, q] of parseList(podLevel)) if (isPodLevelResource(k)) reqs.set(k, q);
  }
  addInto(reqs, parseList(pod.spec?.overhead));
  return reqs;
}

/** A pod's limits; overhead is added only to limits that are set and non-zero. */
export function podLimits(pod: PodLike): ResourceList {
  const limits = aggregateContainers(pod, 'limits');
  if (hasPodLevel(pod.spec?.resources?.requests) || hasPodLevel(pod.spec?.resources?.limits)) {
    for (const [k, q] of parseList(pod.spec?.resources?.limits)) if (isPodLevelResource(k)) limits.set(k, q);
  }
  for (const [k, q] of parseList(pod.spec?.overhead)) {
    const have = limits.get(k);
    if (have && !isZero(have)) limits.set(k, addQuantities(have, q));
  }
  return limits;
}

/** When a pod being deleted stops counting (deletion time + grace), or undefined when it is not being deleted. */
function graceDeadlineMs(pod: PodLike): number | undefined {
  const ts = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (!ts || grace === undefined || grace === null) return undefined;
  const at = Date.parse(ts);
  return Number.isNaN(at) ? undefined : at + grace * 1000;
}

/**
 * Whether a pod is charged compute quota: not once it has finished (Succeeded or Failed), and not
 * once it is stuck past its deletion grace period (a lost node must not pin the quota).
 */
export function quotaV1Pod(pod: PodLike, nowMs: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const deadline = graceDeadlineMs(pod);
  return !(deadline !== undefined && nowMs > deadline);
}

/** A quota usage from a pod's aggregate requests and limits. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', fromInt(1)]]);
  const both = (res: string) => {
    const r = requests.get(res);
    if (r) {
      out.set(res, r);
      out.set(`requests.${res}`, r);
    }
    const l = limits.get(res);
    if (l) out.set(`limits.${res}`, l);
  };
  both('cpu');
  both('memory');
  both('ephemeral-storage');
  for (const [name, q] of requests) {
    if (name.startsWith(HUGEPAGES_PREFIX)) {
      out.set(name, q);
      out.set(`${REQUESTS_PREFIX}${name}`, q);
    }
    if (isExtendedResourceName(name) || name.startsWith(DEVICE_CLASS_PREFIX)) out.set(`${REQUESTS_PREFIX}${name}`, q);
  }
  return out;
}

/** What one pod charges: its object count always, compute resources only while quotaV1Pod holds. */
export function podUsage(pod: PodLike, nowMs: number): ResourceList {
  const out: ResourceList = new Map([[objectCountName('pods'), fromInt(1)]]);
  if (!quotaV1Pod(pod, nowMs)) return out;
  addInto(out, computeUsage(podRequests(pod), podLimits(pod)));
  return out;
}

function positiveCpuOrMemory(m: ResourceMap | null | undefined): boolean {
  return Object.entries(m ?? {}).some(([k, v]) => (k === 'cpu' || k === 'memory') && parseQuantity(v).value > 0n);
}

/** BestEffort QoS: the class the API server recorded, else no cpu or memory request or limit anywhere. */
export function isBestEffort(pod: PodLike): boolean {
  if (pod.status?.qosClass) return pod.status.qosClass === 'BestEffort';
  const podLevel = pod.spec?.resources;
  if (podLevel != null) return !positiveCpuOrMemory(podLevel.requests) && !positiveCpuOrMemory(podLevel.limits);
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.every((c) => !positiveCpuOrMemory(c.resources?.requests) && !positiveCpuOrMemory(c.resources?.limits));
}

/** The Terminating scope: pods with an active deadline. */
export function isTerminating(pod: PodLike): boolean {
  const d = pod.spec?.activeDeadlineSeconds;
  return typeof d === 'number' && d >= 0;
}

function crossNamespaceTerms(a: PodAffinityLike | null | undefined): boolean {
  if (!a) return false;
  const cross = (t: { namespaces?: string[] | null; namespaceSelector?: unknown } | null | undefined) =>
    !!t && ((t.namespaces?.length ?? 0) > 0 || (t.namespaceSelector !== undefined && t.namespaceSelector !== null));
  return (a.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(cross) ||
    (a.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((w) => cross(w.podAffinityTerm));
}

/** Affinity or anti-affinity terms that name other namespaces (a list or a selector). */
export function usesCrossNamespacePodAffinity(pod: PodLike): boolean {
  const aff = pod.spec?.affinity;
  return !!aff && (crossNamespaceTerms(aff.podAffinity) || crossNamespaceTerms(aff.podAntiAffinity));
}

/** A scope selector requirement as a label requirement on {PriorityClass: <pod's class>}; throws when invalid. */
function priorityClassMatches(pod: PodLike, req: ScopedResourceSelectorRequirement): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) throw new Error(`scope selector ${req.scopeName}: operator ${req.operator} needs values`);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) throw new Error(`scope selector ${req.scopeName}: operator ${req.operator} takes no values`);
      break;
    default:
      throw new Error(`${JSON.stringify(req.operator)} is not a valid scope selector operator`);
  }
  for (const v of values) {
    const err = labelValueError(v);
    if (err) throw new Error(`scope selector ${req.scopeName}: ${err}`);
  }
  const cls = pod.spec?.priorityClassName ?? '';
  const present = cls !== '';
  switch (req.operator) {
    case 'In':
      return present && values.includes(cls);
    case 'NotIn':
      return !present || !values.includes(cls);
    case 'Exists':
      return present;
    default:
      return !present;
  }
}

/** Whether a pod falls under one scope requirement; throws on a selector upstream cannot parse. */
export function podMatchesScope(pod: PodLike, req: ScopedResourceSelectorRequirement): boolean {
  switch (req.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      // Exists needs no parsing: any class at all
      if (req.operator === 'Exists') return (pod.spec?.priorityClassName ?? '') !== '';
      return priorityClassMatches(pod, req);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
    default:
      return false;
  }
}

/** spec.scopes read as Exists requirements, then the scope selector's expressions: all must hold. */
function scopeRequirements(spec: QuotaSpecLike): ScopedResourceSelectorRequirement[] {
  return [
    ...(spec.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })),
    ...(spec.scopeSelector?.matchExpressions ?? []),
  ];
}

// ---------------------------------------------------------------------------------------------
// services, claims, counts

export function serviceUsage(svc: ServiceLike): ResourceList {
  const ports = svc.spec?.ports?.length ?? 0;
  const out: ResourceList = new Map([
    [objectCountName('services'), fromInt(1)],
    ['services', fromInt(1)],
    ['services.loadbalancers', zeroQuantity()],
    ['services.nodeports', zeroQuantity()],
  ]);
  if (svc.spec?.type === 'NodePort') out.set('services.nodeports', fromInt(ports));
  if (svc.spec?.type === 'LoadBalancer') {
    out.set('services.nodeports', fromInt(ports));
    out.set('services.loadbalancers', fromInt(1));
  }
  return out;
}

function storageClassOf(pvc: PvcLike): string {
  const annotated = pvc.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION];
  if (annotated !== undefined && annotated !== null) return annotated;
  return pvc.spec?.storageClassName ?? '';
}

/**
 * Storage a claim is charged: its request rounded up to whole bytes, or what was allocated to it
 * when that is more (an expansion that is being recovered from still holds the larger size).
 */
function claimStorage(pvc: PvcLike): Quantity | undefined {
  const req = pvc.spec?.resources?.requests?.storage;
  if (req === undefined || req === null) return undefined;
  let result = roundUpToInteger(parseQuantity(req));
  const allocated = pvc.status?.allocatedResources?.storage;
  if (allocated !== undefined && allocated !== null) {
    const a = parseQuantity(allocated);
    if (maxQuantity(result, a) !== result) result = roundUpToInteger(a);
  }
  return result;
}

export function pvcUsage(pvc: PvcLike): ResourceList {
  const out: ResourceList = new Map([
    ['persistentvolumeclaims', fromInt(1)],
    [objectCountName('persistentvolumeclaims'), fromInt(1)],
  ]);
  const cls = storageClassOf(pvc);
  if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, fromInt(1));
  const storage = claimStorage(pvc);
  if (storage) {
    out.set('requests.storage', storage);
    if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// the namespace total

function sum<T>(resources: string[], items: T[], matches: (item: T) => boolean, usage: (item: T) => ResourceList): ResourceList {
  const total: ResourceList = new Map(resources.map((r) => [r, zeroQuantity()]));
  for (const item of items) {
    if (!matches(item)) continue;
    const u = usage(item);
    for (const r of resources) {
      const q = u.get(r);
      if (q) total.set(r, addQuantities(total.get(r)!, q));
    }
  }
  return total;
}

/**
 * The usage of every hard resource of `spec` that the given objects can answer for. Objects not
 * read (absent fields of `objects`) leave their resources out: the caller keeps what the status
 * says for them. Non-pod objects never fall under a scope, so a scoped quota counts none of them.
 * A pod evaluator that fails (a scope selector upstream cannot parse, a malformed quantity)
 * leaves all pod resources out and reports why.
 */
export function calculateUsage(spec: QuotaSpecLike, objects: NamespaceObjects, nowMs: number): UsageResult {
  const hard = Object.keys(spec.hard ?? {});
  const scopes = scopeRequirements(spec);
  const unscoped = scopes.length === 0;
  const used: ResourceMap = {};
  const errors: string[] = [];
  let recheckAfterMs: number | undefined;
  const put = (list: ResourceList) => {
    for (const [k, q] of list) used[k] = formatQuantity(q);
  };

  const podResources = hard.filter(podEvaluatorMatches);
  if (objects.pods && podResources.length) {
    try {
      const matches = (p: PodLike) => scopes.every((s) => podMatchesScope(p, s));
      put(sum(podResources, objects.pods, matches, (p) => podUsage(p, nowMs)));
      for (const p of objects.pods) {
        const deadline = graceDeadlineMs(p);
        if (deadline === undefined || !quotaV1Pod(p, nowMs)) continue;
        // upstream stops counting strictly after the deadline
        const wait = deadline - nowMs + 1;
        recheckAfterMs = recheckAfterMs === undefined ? wait : Math.min(recheckAfterMs, wait);
      }
    } catch (e) {
      errors.push(`pods: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  const serviceResources = hard.filter(serviceEvaluatorMatches);
  if (objects.services && serviceResources.length) put(sum(serviceResources, objects.services, () => unscoped, serviceUsage));

  const pvcResources = hard.filter(pvcEvaluatorMatches);
  if (objects.persistentvolumeclaims && pvcResources.length) {
    try {
      put(sum(pvcResources, objects.persistentvolumeclaims, () => unscoped, pvcUsage));
    } catch (e) {
      errors.push(`persistentvolumeclaims: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  for (const name of hard) {
    const gr = countedGroupResource(name);
    const n = gr === undefined ? undefined : objects.counts?.[gr];
    if (n !== undefined) used[name] = formatQuantity(fromInt(unscoped ? n : 0));
  }

  return { used, errors, ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}) };
}
