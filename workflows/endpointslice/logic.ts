/**
 * The endpointslice controller's decisions, pure and deterministic: from a Service, the pods it
 * selects and the slices stored for it, the slices to create, update and delete, packed as
 * upstream's reconciler packs them (staging/src/k8s.io/endpointslice, v1.35). Where upstream's choice
 * depends on Go map order (which new endpoint goes first, which of two equally good slices is
 * filled), we take pod-name and stored order instead, so a replay makes the same choice.
 */

import type { EndpointPod, ServiceView } from '../service-endpoints/types';
import type { OwnerRef } from '../common/meta';
import { utf8Bytes } from '../common/utf8';
import {
  CONTROLLER_NAME,
  HEADLESS_LABEL,
  MANAGED_BY_LABEL,
  SERVICE_NAME_LABEL,
  TRIGGER_TIME_ANNOTATION,
  type AddressType,
  type SliceContent,
  type SliceEndpoint,
  type SliceHints,
  type SlicePlan,
  type SlicePort,
  type SliceRef,
  type SliceUpdate,
  type SliceView,
  type TriggerState,
} from './types';

// ---------------------------------------------------------------------------------------------
// Service

/** Upstream leaves ExternalName Services and Services without a selector alone (slices of the latter come from elsewhere). */
export function isManaged(svc: ServiceView): boolean {
  return svc.type !== 'ExternalName' && svc.selector !== undefined;
}

export function isHeadless(svc: ServiceView): boolean {
  return !svc.clusterIP || svc.clusterIP === 'None';
}

/** The address types a Service gets slices for, from its ipFamilies (or its ClusterIP for a Service written before families existed). */
export function addressTypesFor(svc: ServiceView): AddressType[] {
  const out: AddressType[] = [];
  for (const f of svc.ipFamilies) {
    if (f === 'IPv4' && !out.includes('IPv4')) out.push('IPv4');
    if (f === 'IPv6' && !out.includes('IPv6')) out.push('IPv6');
  }
  if (out.length) return out;
  if (!isHeadless(svc)) return [svc.clusterIP!.includes(':') ? 'IPv6' : 'IPv4'];
  return ['IPv4', 'IPv6'];
}

export function ownerRefFor(svc: ServiceView): OwnerRef {
  return { apiVersion: 'v1', kind: 'Service', name: svc.name, uid: svc.uid, controller: true, blockOwnerDeletion: true };
}

export function ownedBy(slice: Pick<SliceContent, 'ownerReferences'>, svc: Pick<ServiceView, 'uid'>): boolean {
  return slice.ownerReferences.some((o) => o.uid === svc.uid && o.kind === 'Service' && o.apiVersion === 'v1');
}

const RESERVED_LABELS = new Set([SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL]);

/**
 * A slice's labels: the Service's (but for the reserved ones), the headless marker, the service name
 * and managed-by. `changed` only says whether the copied Service labels differ: the reserved ones
 * alone never cause an update, as upstream.
 */
export function sliceLabels(current: Record<string, string>, svc: ServiceView): { labels: Record<string, string>; changed: boolean } {
  const mine = Object.entries(current).filter(([k]) => !RESERVED_LABELS.has(k));
  const theirs = Object.entries(svc.labels).filter(([k]) => !RESERVED_LABELS.has(k));
  const changed = mine.length !== theirs.length || theirs.some(([k, v]) => current[k] !== v);
  const labels: Record<string, string> = Object.fromEntries(theirs);
  if (isHeadless(svc)) labels[HEADLESS_LABEL] = '';
  labels[SERVICE_NAME_LABEL] = svc.name;
  labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;
  return { labels, changed };
}

// ---------------------------------------------------------------------------------------------
// ports

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x1000000000000000000013bn;
const MASK128 = (1n << 128n) - 1n;

/** FNV-1a, 128 bits, hex: the hash upstream orders a slice's ports by. */
export function fnv128a(s: string): string {
  let h = FNV128_OFFSET;
  for (const b of utf8Bytes(s)) {
    h ^= BigInt(b);
    h = (h * FNV128_PRIME) & MASK128;
  }
  return h.toString(16).padStart(32, '0');
}

/** A port as upstream's hash input renders it (a go-spew dump of discovery/v1 EndpointPort). */
function renderPort(p: SlicePort): string {
  const v = (x: string | number | undefined) => (x === undefined ? '<nil>' : String(x));
  return `(v1.EndpointPort){Name:(*string)${v(p.name)} Protocol:(*v1.Protocol)${v(p.protocol)} Port:(*int32)${v(p.port)} AppProtocol:(*string)${v(p.appProtocol)}}`;
}

const portHashes = new Map<string, string>();
function portHash(p: SlicePort): string {
  const r = renderPort(p);
  let h = portHashes.get(r);
  if (h === undefined) {
    h = fnv128a(r);
    if (portHashes.size > 10_000) portHashes.clear();
    portHashes.set(r, h);
  }
  return h;
}

/** Ports in upstream's order (by hash): the order in which they are written, too. */
export function sortPorts(ports: SlicePort[]): SlicePort[] {
  return ports.map((p) => [portHash(p), p] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
}

/** Identifies a set of ports whatever their order: slices are grouped by it. */
export function portSetKey(ports: SlicePort[]): string {
  return ports.map(portHash).sort().join(',');
}

/** The ports one pod serves the Service on: a named targetPort resolves per pod, so pods may differ. */
export function endpointPorts(svc: ServiceView, pod: EndpointPod): SlicePort[] {
  if (svc.ports.length === 0 && svc.clusterIP === 'None') return [];
  const out: SlicePort[] = [];
  for (const sp of svc.ports) {
    const target = sp.targetPort ?? sp.port;
    let port: number | undefined;
    if (typeof target === 'number') port = target;
    else port = pod.ports.find((c) => c.name === target && c.protocol === sp.protocol)?.containerPort;
    if (port === undefined) continue;
    out.push({ name: sp.name ?? '', port, protocol: sp.protocol, ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) });
  }
  return sortPorts(out);
}

// ---------------------------------------------------------------------------------------------
// endpoints

/** Terminal pods and pods without an IP are no endpoints; terminating ones are (with their conditions). */
export function podIsEndpoint(pod: EndpointPod): boolean {
  return pod.phase !== 'Failed' && pod.phase !== 'Succeeded' && pod.ips.length > 0;
}

function isIPv6(ip: string): boolean {
  return ip.includes(':');
}

export function podToEndpoint(pod: EndpointPod, svc: ServiceView, addressType: AddressType): SliceEndpoint {
  const serving = pod.ready;
  const terminating = pod.deletionTimestamp !== undefined;
  // a terminating pod is never ready, unless the Service publishes not-ready addresses
  const ready = svc.publishNotReadyAddresses || (serving && !terminating);
  const addresses = pod.ips.filter((ip) => (addressType === 'IPv6') === isIPv6(ip) && addressType !== 'FQDN').sort();
  return {
    addresses,
    conditions: { ready, serving, terminating },
    ...(pod.hostname && pod.subdomain === svc.name && pod.namespace === svc.namespace ? { hostname: pod.hostname } : {}),
    targetRef: { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
    ...(pod.nodeName ? { nodeName: pod.nodeName } : {}),
    ...(pod.zone ? { zone: pod.zone } : {}),
  };
}

/** Upstream's identity of an endpoint: addresses, hostname and the pod's name. Anything else changes in place. */
export function endpointKey(ep: SliceEndpoint): string {
  return JSON.stringify([[...ep.addresses].sort(), ep.hostname ?? '', ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '']);
}

function sameRef(a: SliceEndpoint['targetRef'], b: SliceEndpoint['targetRef']): boolean {
  if (!a || !b) return !a && !b;
  return (a.kind ?? '') === (b.kind ?? '') && (a.namespace ?? '') === (b.namespace ?? '') && (a.name ?? '') === (b.name ?? '')
    && (a.uid ?? '') === (b.uid ?? '') && (a.apiVersion ?? '') === (b.apiVersion ?? '') && (a.fieldPath ?? '') === (b.fieldPath ?? '');
}

/** Equal beyond the identity: topology, conditions and target (hints are not compared, as upstream). */
export function endpointsEqualBeyondKey(a: SliceEndpoint, b: SliceEndpoint): boolean {
  return a.nodeName === b.nodeName && a.zone === b.zone
    && a.conditions.ready === b.conditions.ready && a.conditions.serving === b.conditions.serving
    && a.conditions.terminating === b.conditions.terminating && sameRef(a.targetRef, b.targetRef);
}

// ---------------------------------------------------------------------------------------------
// hints

const CLOSE_DISTRIBUTIONS = new Set(['PreferClose', 'PreferSameZone', 'PreferSameNode']);

function hintsWanted(ep: SliceEndpoint, forNodes: boolean): SliceHints | undefined {
  const h: SliceHints = {};
  if (ep.zone !== undefined) h.forZones = [{ name: ep.zone }];
  if (ep.nodeName !== undefined && forNodes) h.forNodes = [{ name: ep.nodeName }];
  return h.forZones || h.forNodes ? h : undefined;
}

function hintsStale(ep: SliceEndpoint, forNodes: boolean): boolean {
  if (!ep.conditions.ready) return false;
  const zones = ep.hints?.forZones ?? [];
  const nodes = ep.hints?.forNodes ?? [];
  if (ep.zone !== undefined ? zones.length !== 1 || zones[0].name !== ep.zone : zones.length > 0) return true;
  return ep.nodeName !== undefined && forNodes ? nodes.length !== 1 || nodes[0].name !== ep.nodeName : nodes.length > 0;
}

function withoutHints(ep: SliceEndpoint): SliceEndpoint {
  if (!ep.hints) return ep;
  const { hints: _, ...rest } = ep;
  return rest;
}

/** Hints for a slice about to be written: same zone (and node) for ready endpoints, or none at all. */
function applyHints(endpoints: SliceEndpoint[], distribution: string | undefined): SliceEndpoint[] {
  if (!distribution) return endpoints.map(withoutHints);
  const forNodes = distribution === 'PreferSameNode';
  return endpoints.map((ep) => {
    if (!ep.conditions.ready) return ep; // not-ready endpoints keep what they have, as upstream
    const h = hintsWanted(ep, forNodes);
    return h ? { ...ep, hints: h } : withoutHints(ep);
  });
}

function needsHintUpdate(endpoints: SliceEndpoint[], distribution: string | undefined): boolean {
  if (!distribution) return endpoints.some((ep) => ep.hints !== undefined);
  const forNodes = distribution === 'PreferSameNode';
  return endpoints.some((ep) => hintsStale(ep, forNodes));
}

// ---------------------------------------------------------------------------------------------
// trigger time

function laterThan(a: string, b: string | undefined): boolean {
  return b === undefined || Date.parse(a) > Date.parse(b);
}

/**
 * The last-change-trigger-time of this sync, as upstream's tracker computes it: the Service's creation
 * on its first sync, then the earliest pod (or Service) change seen since the previous sync; none
 * when nothing changed (the annotation is then removed from the slices written).
 */
export function triggerTime(prev: TriggerState | undefined, svc: ServiceView, pods: EndpointPod[]): { time?: string; state: TriggerState } {
  const next: TriggerState = { service: svc.creationTimestamp ?? '', pods: {} };
  let min: string | undefined;
  const earlier = (t: string) => {
    if (min === undefined || Date.parse(t) < Date.parse(min)) min = t;
  };
  for (const p of pods) {
    if (!p.lastTransitionTime) continue;
    next.pods[p.name] = p.lastTransitionTime;
    if (laterThan(p.lastTransitionTime, prev?.pods[p.name])) earlier(p.lastTransitionTime);
  }
  if (svc.creationTimestamp && laterThan(svc.creationTimestamp, prev?.service || undefined)) earlier(svc.creationTimestamp);
  if (!prev) return { ...(svc.creationTimestamp ? { time: svc.creationTimestamp } : {}), state: next };
  return { ...(min !== undefined ? { time: min } : {}), state: next };
}

// ---------------------------------------------------------------------------------------------
// packing

export interface PlanOptions {
  maxEndpointsPerSlice: number;
  /** the last-change-trigger-time of this sync; absent: the annotation is removed from what is written */
  triggerTime?: string;
}

function newSlice(svc: ServiceView, ports: SlicePort[], addressType: AddressType): SliceContent {
  return { addressType, ports, endpoints: [], labels: sliceLabels({}, svc).labels, annotations: {}, ownerReferences: [ownerRefFor(svc)] };
}

/** One stored slice being rewritten: its identity and guard, and the new content. */
type Working = SliceView;

interface PortGroupPlan {
  create: SliceContent[];
  update: Working[];
  delete: SliceView[];
}

/**
 * The slices of one set of ports: keep each stored endpoint where it is (updated in place when its
 * conditions or topology changed), drop the ones no longer wanted (a slice left empty is deleted),
 * then place new endpoints into slices already being rewritten (fullest first), then into the one
 * unchanged slice they fit best, then into new slices. One pod's change thus rewrites one slice.
 */
function planPortGroup(svc: ServiceView, existing: SliceView[], desired: Map<string, SliceEndpoint>, ports: SlicePort[], addressType: AddressType, max: number): PortGroupPlan {
  const byName = new Map<string, Working>();
  const unchanged: string[] = [];
  const toUpdate: string[] = [];
  const toDelete: SliceView[] = [];

  for (const s of existing) {
    byName.set(s.name, s);
    const kept: SliceEndpoint[] = [];
    let endpointChanged = false;
    for (const ep of s.endpoints) {
      const k = endpointKey(ep);
      const want = desired.get(k);
      if (!want) continue;
      kept.push(want);
      if (!endpointsEqualBeyondKey(want, ep)) endpointChanged = true;
      desired.delete(k);
    }
    const { labels, changed: labelsChanged } = sliceLabels(s.labels, svc);
    if (endpointChanged || kept.length !== s.endpoints.length) {
      if (kept.length === 0) toDelete.push(s);
      else {
        byName.set(s.name, { ...s, endpoints: kept, labels });
        toUpdate.push(s.name);
      }
    } else if (labelsChanged) {
      byName.set(s.name, { ...s, labels });
      toUpdate.push(s.name);
    } else {
      unchanged.push(s.name);
    }
  }

  const pending = desired.values();
  const take = (): SliceEndpoint => {
    const ep = pending.next().value as SliceEndpoint;
    desired.delete(endpointKey(ep));
    return ep;
  };

  if (desired.size > 0 && toUpdate.length > 0) {
    const fullestFirst = toUpdate.map((n) => byName.get(n)!).map((s, i) => [s, i] as const)
      .sort(([a, i], [b, j]) => b.endpoints.length - a.endpoints.length || i - j).map(([s]) => s);
    for (const s of fullestFirst) {
      const eps = [...s.endpoints];
      while (desired.size > 0 && eps.length < max) eps.push(take());
      byName.set(s.name, { ...s, endpoints: eps });
    }
  }

  const create: SliceContent[] = [];
  while (desired.size > 0) {
    let fill: Working | undefined;
    if (desired.size < max && unchanged.length > 0) fill = sliceToFill(unchanged.map((n) => byName.get(n)!), desired.size, max);
    const target: SliceContent & Partial<Working> = fill ? { ...fill } : newSlice(svc, ports, addressType);
    const eps = [...target.endpoints];
    while (desired.size > 0 && eps.length < max) eps.push(take());
    target.endpoints = eps;
    if (fill) {
      byName.set(fill.name, target as Working);
      toUpdate.push(fill.name);
      unchanged.splice(unchanged.indexOf(fill.name), 1);
    } else {
      create.push(target);
    }
  }

  return { create, update: toUpdate.map((n) => byName.get(n)!), delete: toDelete };
}

/** The unchanged slice that `count` more endpoints would bring closest to full, if any has room for all. */
export function sliceToFill<T extends { endpoints: unknown[] }>(slices: T[], count: number, max: number): T | undefined {
  let best: T | undefined;
  let bestRoom = max;
  for (const s of slices) {
    const room = max - (count + s.endpoints.length);
    if (room >= 0 && room < bestRoom) {
      bestRoom = room;
      best = s;
      if (room === 0) break;
    }
  }
  return best;
}

function sameOwnerRefs(a: OwnerRef[], b: OwnerRef[]): boolean {
  return a.length === b.length && a.every((r, i) => r.apiVersion === b[i].apiVersion && r.kind === b[i].kind && r.name === b[i].name
    && r.uid === b[i].uid && r.controller === b[i].controller && r.blockOwnerDeletion === b[i].blockOwnerDeletion);
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** Upstream's placeholder comparison: labels, owner references, address type, and nothing in it. */
function isPlaceholder(s: SliceView, placeholder: SliceContent): boolean {
  return s.addressType === placeholder.addressType && s.endpoints.length === 0 && s.ports.length === 0
    && sameLabels(s.labels, placeholder.labels) && sameOwnerRefs(s.ownerReferences, placeholder.ownerReferences);
}

function withTrigger(annotations: Record<string, string>, time: string | undefined): Record<string, string> {
  const out = { ...annotations };
  if (time !== undefined) out[TRIGGER_TIME_ANNOTATION] = time;
  else delete out[TRIGGER_TIME_ANNOTATION];
  return out;
}

function asUpdate(w: Working, time: string | undefined): SliceUpdate {
  return {
    name: w.name, uid: w.uid, resourceVersion: w.resourceVersion,
    addressType: w.addressType, ports: w.ports, endpoints: w.endpoints, labels: w.labels,
    annotations: withTrigger(w.annotations, time), ownerReferences: w.ownerReferences,
    ...(w.finalizers?.length ? { finalizers: w.finalizers } : {}),
  };
}

function planAddressType(svc: ServiceView, pods: EndpointPod[], existing: SliceView[], addressType: AddressType, opts: PlanOptions): SlicePlan {
  const max = opts.maxEndpointsPerSlice;
  let toDelete: SliceView[] = [];
  const existingByPorts = new Map<string, SliceView[]>();
  for (const s of existing) {
    if (!ownedBy(s, svc)) {
      toDelete.push(s);
      continue;
    }
    const k = portSetKey(s.ports);
    existingByPorts.set(k, [...(existingByPorts.get(k) ?? []), s]);
  }

  const desiredPorts = new Map<string, SlicePort[]>();
  const desired = new Map<string, Map<string, SliceEndpoint>>();
  for (const pod of pods) {
    if (!podIsEndpoint(pod)) continue;
    const ports = endpointPorts(svc, pod);
    const k = portSetKey(ports);
    if (!desired.has(k)) {
      desired.set(k, new Map());
      desiredPorts.set(k, ports);
    }
    const ep = podToEndpoint(pod, svc, addressType);
    if (ep.addresses.length) desired.get(k)!.set(endpointKey(ep), ep);
  }

  let create: SliceContent[] = [];
  const update: Working[] = [];
  for (const [k, eps] of desired) {
    const g = planPortGroup(svc, existingByPorts.get(k) ?? [], eps, desiredPorts.get(k)!, addressType, max);
    create.push(...g.create);
    update.push(...g.update);
    toDelete.push(...g.delete);
  }
  for (const [k, slices] of existingByPorts) if (!desired.has(k)) toDelete.push(...slices);

  // a Service with no endpoints of this type still gets one empty slice, so consumers can tell "none" from "not yet"
  if (existing.length === toDelete.length && create.length === 0) {
    const placeholder = newSlice(svc, [], addressType);
    if (toDelete.length === 1 && isPlaceholder(toDelete[0], placeholder)) toDelete = [];
    else create.push(placeholder);
  }

  // hints: trafficDistribution's same-zone (and same-node) hints, otherwise none anywhere
  const distribution = svc.trafficDistribution && CLOSE_DISTRIBUTIONS.has(svc.trafficDistribution) ? svc.trafficDistribution : undefined;
  const touched = new Set([...update.map((s) => s.name), ...toDelete.map((s) => s.name)]);
  for (const s of existing) {
    if (!touched.has(s.name) && needsHintUpdate(s.endpoints, distribution)) update.push({ ...s });
  }
  create = create.map((s) => ({ ...s, endpoints: applyHints(s.endpoints, distribution) }));
  const updates = update.map((s) => ({ ...s, endpoints: applyHints(s.endpoints, distribution) }));

  // a slice about to be deleted is reused for one about to be created: fewer writes, fewer names
  const out: SlicePlan = { create: [], update: updates.map((w) => asUpdate(w, opts.triggerTime)), delete: [] };
  for (let i = 0; i < toDelete.length && create.length > 0;) {
    const d = toDelete[i];
    const c = create[create.length - 1];
    if (d.addressType === c.addressType && ownedBy(d, svc)) {
      create.pop();
      toDelete.splice(i, 1);
      out.update.push({ ...c, name: d.name, uid: d.uid, resourceVersion: d.resourceVersion, annotations: withTrigger(c.annotations, opts.triggerTime) });
    } else {
      i++;
    }
  }
  // no new slices for a Service being deleted: the garbage collector would race them
  if (!svc.deletionTimestamp) out.create = create.map((c) => ({ ...c, annotations: withTrigger(c.annotations, opts.triggerTime) }));
  out.delete = toDelete.map(sliceRef);
  return out;
}

function sliceRef(s: SliceView): SliceRef {
  return { name: s.name, uid: s.uid };
}

/**
 * Everything one sync writes for a Service: per address type it serves, the packed slices; slices
 * of an address type it no longer serves are deleted. `pods` are the pods its selector matches.
 */
export function planEndpointSlices(svc: ServiceView, pods: EndpointPod[], existing: SliceView[], opts: PlanOptions): SlicePlan {
  const types = addressTypesFor(svc);
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  for (const t of types) {
    const p = planAddressType(svc, pods, existing.filter((s) => s.addressType === t), t, opts);
    plan.create.push(...p.create);
    plan.update.push(...p.update);
    plan.delete.push(...p.delete);
  }
  for (const s of existing) if (!(types as string[]).includes(s.addressType)) plan.delete.push(sliceRef(s));
  return plan;
}

export function isEmptyPlan(p: SlicePlan): boolean {
  return p.create.length === 0 && p.update.length === 0 && p.delete.length === 0;
}

/** In words, for the activity's input and the Web UI. */
export function describePlan(p: SlicePlan): string {
  const n = (xs: SliceContent[]) => xs.reduce((a, s) => a + s.endpoints.length, 0);
  return `create ${p.create.length} (${n(p.create)} endpoints), update ${p.update.length} (${n(p.update)} endpoints), delete ${p.delete.length}`;
}
