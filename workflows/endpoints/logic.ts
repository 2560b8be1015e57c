import type { CoreV1EndpointPort, V1EndpointAddress, V1EndpointSubset } from '@kubernetes/client-node';
import { utf8Bytes } from '../common/utf8';
import type { EndpointPod, ObjectReference, ServicePortView, ServiceView } from '../service-endpoints/types';

/**
 * The endpoints controller's decisions, pure: which pods become addresses, how upstream packs
 * them into subsets (and in what order), the trigger-time annotation, truncation at 1000
 * addresses, and upstream's test of whether an existing Endpoints already says all that.
 */

export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
export const MANAGED_BY_LABEL = 'endpoints.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpoint-controller';
export const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
export const OVER_CAPACITY_ANNOTATION = 'endpoints.kubernetes.io/over-capacity';
export const TRUNCATED = 'truncated';
export const MAX_CAPACITY = 1000;

/** core/v1 Endpoints subset types: client-node's models are their JSON shape; an absent list is Go's nil list. */
export type { ObjectReference } from '../service-endpoints/types';
export type EndpointAddress = V1EndpointAddress;
export type EndpointPort = CoreV1EndpointPort;
export type EndpointSubset = V1EndpointSubset;

/** What the workflow asks the write activity for; the activity compares it with the live object. */
export interface EndpointsWrite {
  namespace: string;
  name: string;
  /** the Service's own labels, which upstream's label check compares against */
  serviceLabels: Record<string, string>;
  /** the labels to write: the Service's, the headless marker, the managed-by label */
  labels: Record<string, string>;
  /** repacked and, when over capacity, truncated */
  subsets: EndpointSubset[];
  /** more than 1000 addresses were wanted: upstream rewrites on every sync then */
  overCapacity: boolean;
  /** RFC 3339 value of last-change-trigger-time, absent to remove it */
  triggerTime?: string;
}

// ---------------------------------------------------------------------------------------------
// pods -> addresses

export const isServiceIPSet = (s: ServiceView) => !!s.clusterIP && s.clusterIP !== 'None';

/** Terminal pods, pods without an IP, and (unless publishing not-ready addresses) terminating pods stay out. */
export function shouldPodBeInEndpoints(pod: EndpointPod, includeTerminating: boolean): boolean {
  if (pod.phase === 'Failed' || pod.phase === 'Succeeded') return false;
  if (!pod.ips.length) return false;
  if (!includeTerminating && pod.deletionTimestamp) return false;
  return true;
}

export function shouldSetHostname(pod: EndpointPod, svc: ServiceView): boolean {
  return !!pod.hostname && pod.subdomain === svc.name && svc.namespace === pod.namespace;
}

/** The container port a service port targets in this pod (named ports looked up by name and protocol). */
export function findPort(pod: EndpointPod, sp: ServicePortView): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  return pod.ports.find((p) => p.name === target && p.protocol === sp.protocol)?.containerPort;
}

/**
 * Parse an IP leniently (IPv4 parts with leading zeros are decimal) and print it as Go does:
 * IPv4, or IPv4-mapped IPv6, as dotted quad; other IPv6 lower-case with the longest zero run
 * folded. Undefined when it is no IP at all.
 */
export function canonicalIp(text: string): { ip: string; v6: boolean } | undefined {
  const v4 = (s: string): number[] | undefined => {
    const parts = s.split('.');
    if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
    return parts.map(Number);
  };
  if (!text.includes(':')) {
    const b = v4(text);
    return b ? { ip: b.join('.'), v6: false } : undefined;
  }
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    // a trailing dotted quad stands for the last two groups
    const b = v4(text.slice(lastColon + 1));
    if (!b) return undefined;
    head = `${text.slice(0, lastColon + 1)}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const groupsOf = (s: string): number[] | undefined => {
    if (s === '') return [];
    const gs = s.split(':');
    if (gs.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    return gs.map((g) => parseInt(g, 16));
  };
  const want = 8;
  let groups: number[] | undefined;
  const fold = head.indexOf('::');
  if (fold >= 0) {
    if (head.indexOf('::', fold + 1) >= 0) return undefined;
    const left = groupsOf(head.slice(0, fold));
    const right = groupsOf(head.slice(fold + 2));
    if (!left || !right || left.length + right.length >= want) return undefined;
    groups = [...left, ...new Array<number>(want - left.length - right.length).fill(0), ...right];
  } else {
    groups = groupsOf(head);
    if (!groups || groups.length !== want) return undefined;
  }
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return { ip: [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.'), v6: false };
  }
  // the longest run of two or more zero groups (the first of equals) becomes '::'
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  const ip = best < 0 ? hex(groups) : `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
  return { ip, v6: true };
}

/** The pod's address in the Service's first IP family, or undefined when it has none. */
export function podAddress(svc: ServiceView, pod: EndpointPod): EndpointAddress | undefined {
  const wantV6 = (svc.ipFamilies[0] ?? 'IPv4') === 'IPv6';
  for (const raw of pod.ips) {
    const parsed = canonicalIp(raw);
    if ((parsed?.v6 ?? false) !== wantV6) continue;
    return {
      ip: parsed?.ip ?? '<nil>',
      ...(shouldSetHostname(pod, svc) ? { hostname: pod.hostname } : {}),
      nodeName: pod.nodeName ?? '',
      targetRef: { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
    };
  }
  return undefined;
}

/**
 * The Endpoints subsets of a Service with a selector over the pods it selects, repacked as
 * upstream does; before truncation.
 */
export function desiredSubsets(svc: ServiceView, pods: readonly EndpointPod[]): EndpointSubset[] {
  const raw: EndpointSubset[] = [];
  const tolerate = svc.publishNotReadyAddresses;
  const add = (pod: EndpointPod, a: EndpointAddress, ports: EndpointPort[]) => {
    raw.push(tolerate || pod.ready ? { addresses: [a], ports } : { notReadyAddresses: [a], ports });
  };
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, tolerate)) continue;
    const a = podAddress(svc, pod);
    if (!a) continue;
    if (!svc.ports.length) {
      // only a headless Service may go without ports
      if (svc.clusterIP === 'None') add(pod, a, []);
      continue;
    }
    for (const sp of svc.ports) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      add(pod, a, [{ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol, ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) }]);
    }
  }
  return repackSubsets(raw);
}

// ---------------------------------------------------------------------------------------------
// upstream's canonical layout (pkg/api/v1/endpoints RepackSubsets)

function lessAddress(a: EndpointAddress, b: EndpointAddress): boolean {
  if (a.ip !== b.ip) return compareBytes(a.ip, b.ip) < 0;
  if (!b.targetRef) return false;
  if (!a.targetRef) return true;
  return compareBytes(a.targetRef.uid ?? '', b.targetRef.uid ?? '') < 0;
}

function compareBytes(a: string, b: string): number {
  const x = utf8Bytes(a);
  const y = utf8Bytes(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const byAddress = (a: EndpointAddress, b: EndpointAddress) => (lessAddress(a, b) ? -1 : lessAddress(b, a) ? 1 : 0);

/** Expand to (address, port, ready) and pack again: one subset per set of addresses sharing the same ports. */
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  const SENTINEL = -1;
  const addrs = new Map<string, EndpointAddress>(); // ip \0 uid -> first seen
  const byPort = new Map<string, { port: EndpointPort; ready: Map<string, boolean> }>();
  const mapOne = (a: EndpointAddress, port: EndpointPort, ready: boolean) => {
    const key = `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
    if (!addrs.has(key)) addrs.set(key, a);
    const pk = JSON.stringify([port.name ?? '', port.port, port.protocol ?? '', port.appProtocol ?? null]);
    let entry = byPort.get(pk);
    if (!entry) byPort.set(pk, (entry = { port, ready: new Map() }));
    // not ready wins over ready
    if (entry.ready.get(key) !== false) entry.ready.set(key, ready);
  };
  for (const s of subsets) {
    const ports = s.ports?.length ? s.ports : [{ port: SENTINEL }];
    for (const port of ports) {
      for (const a of s.addresses ?? []) mapOne(a, port, true);
      for (const a of s.notReadyAddresses ?? []) mapOne(a, port, false);
    }
  }

  const groups = new Map<string, { ready: Map<string, boolean>; ports?: EndpointPort[] }>();
  for (const { port, ready } of byPort.values()) {
    const members = [...ready.entries()].sort(([a], [b]) => byAddress(addrs.get(a)!, addrs.get(b)!));
    const gk = JSON.stringify(members);
    let g = groups.get(gk);
    if (!g) groups.set(gk, (g = { ready }));
    if (port.port > 0) (g.ports ??= []).push(port);
  }

  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.ready) (r ? ready : notReady).push(addrs.get(k)!);
    out.push({
      ...(ready.length ? { addresses: ready.sort(byAddress) } : {}),
      ...(notReady.length ? { notReadyAddresses: notReady.sort(byAddress) } : {}),
      ...(g.ports ? { ports: sortByHash(g.ports, spewPort) } : {}),
    });
  }
  return sortByHash(out, spewSubset);
}

function sortByHash<T>(items: T[], dump: (x: T) => string): T[] {
  return items.map((x) => ({ x, h: fnv128aHex(dump(x)) })).sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0)).map(({ x }) => x);
}

// Upstream orders ports and subsets by the FNV-1a 128 hash of go-spew's "%#v" dump of the Go structs (with
// types shown, strings bare, nil pointers and lists as <nil>); matching kubectl's view of the
// order means printing exactly that text.
const spewList = <T>(xs: T[] | undefined, f: (x: T) => string) => (xs === undefined ? '<nil>' : `[${xs.map(f).join(' ')}]`);
const spewPtr = (v: string | undefined) => (v === undefined ? '<nil>' : v);

function spewRef(r: ObjectReference): string {
  return `{Kind:(string)${r.kind ?? ''} Namespace:(string)${r.namespace ?? ''} Name:(string)${r.name ?? ''} UID:(types.UID)${r.uid ?? ''} `
    + `APIVersion:(string)${r.apiVersion ?? ''} ResourceVersion:(string)${r.resourceVersion ?? ''} FieldPath:(string)${r.fieldPath ?? ''}}`;
}

function spewAddress(a: EndpointAddress): string {
  return `{IP:(string)${a.ip} Hostname:(string)${a.hostname ?? ''} NodeName:(*string)${spewPtr(a.nodeName)} `
    + `TargetRef:(*v1.ObjectReference)${a.targetRef ? spewRef(a.targetRef) : '<nil>'}}`;
}

function spewPortFields(p: EndpointPort): string {
  return `{Name:(string)${p.name ?? ''} Port:(int32)${p.port} Protocol:(v1.Protocol)${p.protocol ?? ''} AppProtocol:(*string)${spewPtr(p.appProtocol)}}`;
}

export function spewPort(p: EndpointPort): string {
  return `(v1.EndpointPort)${spewPortFields(p)}`;
}

export function spewSubset(s: EndpointSubset): string {
  return `(v1.EndpointSubset){Addresses:([]v1.EndpointAddress)${spewList(s.addresses, spewAddress)} `
    + `NotReadyAddresses:([]v1.EndpointAddress)${spewList(s.notReadyAddresses, spewAddress)} `
    + `Ports:([]v1.EndpointPort)${spewList(s.ports, spewPortFields)}}`;
}

// ---------------------------------------------------------------------------------------------
// truncation, labels, trigger time

export function countAddresses(subsets: readonly EndpointSubset[]): number {
  return subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
}

/**
 * Cut to 1000 addresses as upstream does: not-ready ones go first; each subset keeps a share
 * proportional to its size, rounded up, so the last subsets may get less.
 */
export function truncateSubsets(subsets: readonly EndpointSubset[]): { subsets: EndpointSubset[]; truncated: boolean } {
  const totalReady = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const totalNotReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
  if (totalReady + totalNotReady <= MAX_CAPACITY) return { subsets: [...subsets], truncated: false };
  const cutReady = totalReady > MAX_CAPACITY;
  const max = cutReady ? MAX_CAPACITY : MAX_CAPACITY - totalReady;
  const numTotal = cutReady ? totalReady : totalNotReady;
  let room = max;
  const out = subsets.map((s) => {
    const inSubset = (cutReady ? s.addresses?.length : s.notReadyAddresses?.length) ?? 0;
    const take = Math.min(Math.ceil((inSubset / numTotal) * max), room);
    const next: EndpointSubset = { ...s };
    if (cutReady) {
      if (s.addresses) next.addresses = s.addresses.slice(0, take);
      delete next.notReadyAddresses;
      room -= next.addresses?.length ?? 0;
    } else {
      if (s.notReadyAddresses) next.notReadyAddresses = s.notReadyAddresses.slice(0, take);
      room -= next.notReadyAddresses?.length ?? 0;
    }
    return next;
  });
  return { subsets: out, truncated: true };
}

/** The Service's labels, marked headless when it has no cluster IP, and claimed by this controller. */
export function endpointsLabels(svc: ServiceView): Record<string, string> {
  const labels = { ...svc.labels };
  if (!isServiceIPSet(svc)) labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  labels[MANAGED_BY_LABEL] = MANAGED_BY;
  return labels;
}

/** Upstream's label check: ours, and exactly the Service's labels besides the two it adds. */
export function labelsCorrect(epLabels: Record<string, string> | undefined, svcLabels: Record<string, string>): boolean {
  const ep = epLabels ?? {};
  if (ep[MANAGED_BY_LABEL] !== MANAGED_BY) return false;
  let skipped = 0;
  for (const [k, v] of Object.entries(ep)) {
    if (k === HEADLESS_LABEL || k === MANAGED_BY_LABEL) skipped++;
    else if (svcLabels[k] !== v) return false;
  }
  return Object.keys(svcLabels).length === Object.keys(ep).length - skipped;
}

/** What the trigger-time tracker remembers of one Service between syncs (epoch ms). */
export interface TriggerState {
  serviceMs: number;
  podMs: Record<string, number>;
}

const timeMs = (t: string | undefined) => {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : 0;
};

/** Go's time.RFC3339Nano in UTC: fraction without trailing zeros. */
export function rfc3339Nano(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z'));
}

/**
 * Upstream's last-change-trigger-time: the Service's creation for a Service not seen before,
 * else the earliest Ready transition (or Service creation) newer than at the previous sync;
 * undefined when nothing changed (the annotation is then removed by a write).
 */
export function computeTriggerTime(prev: TriggerState | undefined, svc: ServiceView, pods: readonly EndpointPod[]): { time?: string; state: TriggerState } {
  let min = 0;
  const podMs: Record<string, number> = {};
  for (const p of pods) {
    const t = timeMs(p.readyTransitionTime ?? p.lastTransitionTime);
    if (!t) continue;
    podMs[p.name] = t;
    if (t > (prev?.podMs[p.name] ?? 0) && (!min || t < min)) min = t;
  }
  const serviceMs = timeMs(svc.creationTimestamp);
  if (serviceMs > (prev?.serviceMs ?? 0) && (!min || serviceMs < min)) min = serviceMs;
  const state = { serviceMs, podMs };
  const at = prev ? min : serviceMs;
  return at ? { time: rfc3339Nano(at), state } : { state };
}

/** Everything the write activity needs for one Service; `subsets` as returned by desiredSubsets. */
export function planEndpoints(svc: ServiceView, subsets: readonly EndpointSubset[], triggerTime: string | undefined): EndpointsWrite {
  const t = truncateSubsets(subsets);
  return {
    namespace: svc.namespace,
    name: svc.name,
    serviceLabels: svc.labels,
    labels: endpointsLabels(svc),
    subsets: t.subsets,
    overCapacity: t.truncated,
    ...(triggerTime ? { triggerTime } : {}),
  };
}

/** A digest of what a write would make the object say (trigger time aside: upstream ignores it too). */
export function writeFingerprint(w: EndpointsWrite): string {
  return fnv128aHex(JSON.stringify([w.namespace, w.name, w.labels, w.serviceLabels, w.subsets.map(spewSubset), w.overCapacity]));
}

// ---------------------------------------------------------------------------------------------
// comparison with the live object

/** The live object as the write activity reads it. */
export interface EndpointsObject {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  subsets?: EndpointSubset[];
  [k: string]: unknown;
}

function normalSubsets(subsets: readonly EndpointSubset[] | undefined): string {
  const addr = (a: EndpointAddress) => [a.ip, a.hostname ?? '', a.nodeName ?? null,
    a.targetRef ? [a.targetRef.kind ?? '', a.targetRef.namespace ?? '', a.targetRef.name ?? '', a.targetRef.uid ?? '', a.targetRef.apiVersion ?? '', a.targetRef.fieldPath ?? ''] : null];
  const port = (p: EndpointPort) => [p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? null];
  return JSON.stringify((subsets ?? []).map((s) => [(s.addresses ?? []).map(addr), (s.notReadyAddresses ?? []).map(addr), (s.ports ?? []).map(port)]));
}

/** Semantic equality as upstream compares subsets: nil and empty lists alike, target resourceVersion ignored. */
export function subsetsEqual(a: readonly EndpointSubset[] | undefined, b: readonly EndpointSubset[] | undefined): boolean {
  return normalSubsets(a) === normalSubsets(b);
}

/** Upstream's "nothing to write": same subsets (also after repacking), correct labels, capacity annotation right. */
export function endpointsUpToDate(current: EndpointsObject, w: EndpointsWrite): boolean {
  if (w.overCapacity) return false; // the untruncated wish can never equal what was written
  const same = subsetsEqual(current.subsets, w.subsets) || subsetsEqual(repackSubsets(current.subsets ?? []), w.subsets);
  if (!same || !labelsCorrect(current.metadata?.labels, w.serviceLabels)) return false;
  if (countAddresses(current.subsets ?? []) > MAX_CAPACITY) return false;
  return !(OVER_CAPACITY_ANNOTATION in (current.metadata?.annotations ?? {}));
}

/** The object to create (no `current`) or to update: the live one with subsets, labels and the two annotations replaced. */
export function nextEndpoints(current: EndpointsObject | undefined, w: EndpointsWrite): EndpointsObject {
  const annotations = { ...(current?.metadata?.annotations ?? {}) };
  if (w.triggerTime) annotations[TRIGGER_TIME_ANNOTATION] = w.triggerTime;
  else delete annotations[TRIGGER_TIME_ANNOTATION];
  if (w.overCapacity) annotations[OVER_CAPACITY_ANNOTATION] = TRUNCATED;
  else delete annotations[OVER_CAPACITY_ANNOTATION];
  const metadata = current
    ? { ...current.metadata, labels: w.labels, annotations }
    : { name: w.name, namespace: w.namespace, labels: w.labels, ...(Object.keys(annotations).length ? { annotations } : {}) };
  return { ...(current ?? { apiVersion: 'v1', kind: 'Endpoints' }), metadata, subsets: w.subsets };
}

// ---------------------------------------------------------------------------------------------
// FNV-1a 128 (Go's hash/fnv New128a), in 16-bit limbs: BigInt per byte is needlessly slow here

const FNV128_OFFSET = [0x6c62, 0x272e, 0x07bb, 0x0142, 0x62b8, 0x2175, 0x6295, 0xc58d]; // most significant first

export function fnv128aHex(text: string): string {
  // h[0] is the least significant limb
  const h = [...FNV128_OFFSET].reverse();
  for (const byte of utf8Bytes(text)) {
    h[0] ^= byte;
    // h * (2^88 + 0x13b) mod 2^128
    const r = new Array<number>(8).fill(0);
    let carry = 0;
    for (let i = 0; i < 8; i++) {
      const v = h[i] * 0x13b + carry;
      r[i] = v & 0xffff;
      carry = Math.floor(v / 0x10000);
    }
    // + h << 88: 5 limbs and 8 bits up
    carry = 0;
    for (let i = 5; i < 8; i++) {
      const shifted = ((h[i - 5] << 8) & 0xffff) | (i - 6 >= 0 ? h[i - 6] >>> 8 : 0);
      const v = r[i] + shifted + carry;
      r[i] = v & 0xffff;
      carry = v >>> 16;
    }
    for (let i = 0; i < 8; i++) h[i] = r[i];
  }
  return h.reverse().map((x) => x.toString(16).padStart(4, '0')).join('');
}
