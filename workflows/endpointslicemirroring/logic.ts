/**
 * Pure decisions of the endpointslicemirroring controller, as upstream v1.35 makes them: which
 * Endpoints are mirrored, how their subsets are canonicalised and split by port set and address
 * family, and which slices to create, update (or recycle) and delete.
 */

import { utf8Bytes } from '../common/utf8';
import {
  ANNOTATION_LEADER,
  ANNOTATIONS_NOT_MIRRORED,
  AddressType,
  DesiredSlice,
  EndpointAddressView,
  EndpointSubsetView,
  EndpointsPortView,
  EndpointsView,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SKIP_MIRROR,
  MIRRORING_MANAGER,
  MirroringObservation,
  MirroringPlan,
  MirroringWarning,
  MirroringWrite,
  SliceEndpoint,
  SlicePort,
  SliceSummary,
} from './types';

// ---------------------------------------------------------------------------------------------
// Which pairs are mirrored

export function shouldMirrorEndpoints(e: Pick<EndpointsView, 'labels' | 'annotations'>): boolean {
  return e.labels[LABEL_SKIP_MIRROR] !== 'true' && !(ANNOTATION_LEADER in e.annotations);
}

/** Why the pair is not mirrored, or undefined when it is. */
export function notMirroredReason(obs: Pick<MirroringObservation, 'service' | 'endpoints'>): string | undefined {
  if (!obs.endpoints) return 'the Endpoints are gone';
  if (!shouldMirrorEndpoints(obs.endpoints)) return 'the Endpoints are not to be mirrored (skip-mirror label or leader-election record)';
  if (!obs.service) return 'the Service is gone';
  if (obs.service.hasSelector) return 'the Service has a selector';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// IP addresses, parsed as Go's lenient parser does (leading zeros allowed, no zones)

function decimal(s: string, at: number): [number, number] | undefined {
  let n = 0;
  let i = at;
  while (i < s.length && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= 0xffffff) return undefined;
    i++;
  }
  return i === at ? undefined : [n, i];
}

function hex(s: string, at: number): [number, number] | undefined {
  let n = 0;
  let i = at;
  while (i < s.length && /[0-9a-fA-F]/.test(s[i])) {
    n = n * 16 + parseInt(s[i], 16);
    if (n >= 0xffffff) return undefined;
    i++;
  }
  return i === at ? undefined : [n, i];
}

function parseV4(s: string): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  for (let k = 0; k < 4; k++) {
    if (i >= s.length) return undefined;
    if (k > 0) {
      if (s[i] !== '.') return undefined;
      i++;
    }
    const d = decimal(s, i);
    if (!d || d[0] > 0xff) return undefined;
    out.push(d[0]);
    i = d[1];
  }
  return i === s.length ? out : undefined;
}

function parseV6(str: string): number[] | undefined {
  const ip = new Array<number>(16).fill(0);
  let s = str;
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (!s) return ip;
  }
  let i = 0;
  while (i < 16) {
    const h = hex(s, 0);
    if (!h || h[0] > 0xffff) return undefined;
    if (h[1] < s.length && s[h[1]] === '.') {
      if ((ellipsis < 0 && i !== 12) || i + 4 > 16) return undefined;
      const v4 = parseV4(s);
      if (!v4) return undefined;
      ip.splice(i, 4, ...v4);
      i += 4;
      s = '';
      break;
    }
    ip[i] = h[0] >> 8;
    ip[i + 1] = h[0] & 0xff;
    i += 2;
    s = s.slice(h[1]);
    if (!s) break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (!s) break;
    }
  }
  if (s) return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j];
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) {
    return undefined;
  }
  return ip;
}

function formatV6(ip: number[]): string {
  const groups = Array.from({ length: 8 }, (_, k) => (ip[2 * k] << 8) | ip[2 * k + 1]);
  // the longest run of two or more zero groups (the first on a tie) becomes '::'
  let best = -1;
  let bestLen = 0;
  for (let k = 0; k < 8; ) {
    let j = k;
    while (j < 8 && groups[j] === 0) j++;
    if (j - k >= 2 && j - k > bestLen) {
      best = k;
      bestLen = j - k;
    }
    k = j === k ? k + 1 : j;
  }
  let out = '';
  for (let k = 0; k < 8; k++) {
    if (k === best) {
      out += '::';
      k += bestLen - 1;
      continue;
    }
    if (out && !out.endsWith(':')) out += ':';
    out += groups[k].toString(16);
  }
  return out;
}

/**
 * The canonical text and family of an IP, or undefined when it is not one. An IPv4-mapped IPv6
 * address is IPv4, as upstream sees it.
 */
export function parseIp(s: string): { text: string; family: AddressType } | undefined {
  for (const ch of s) {
    if (ch === '.') {
      const v4 = parseV4(s);
      return v4 ? { text: v4.join('.'), family: 'IPv4' } : undefined;
    }
    if (ch === ':') {
      const v6 = parseV6(s);
      if (!v6) return undefined;
      const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
      return mapped ? { text: v6.slice(12).join('.'), family: 'IPv4' } : { text: formatV6(v6), family: 'IPv6' };
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Hashes

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x0000000001000000000000000000013bn;
const MASK128 = (1n << 128n) - 1n;

/** FNV-1a/128 of the UTF-8 bytes of s, as 32 hex digits. */
export function fnv128aHex(s: string): string {
  let h = FNV128_OFFSET;
  for (const b of utf8Bytes(s)) h = ((h ^ BigInt(b)) * FNV128_PRIME) & MASK128;
  return h.toString(16).padStart(32, '0');
}

/**
 * Where a port sorts in a canonical subset: upstream orders ports by the hash of their debug
 * dump, so we hash the very same text. The order is what kubectl shows in the slice.
 */
export function portOrderKey(p: EndpointsPortView): string {
  const ap = p.appProtocol === undefined ? '<nil>' : p.appProtocol;
  return fnv128aHex(`(v1.EndpointPort){Name:(string)${p.name ?? ''} Port:(int32)${p.port} Protocol:(v1.Protocol)${p.protocol ?? ''} AppProtocol:(*string)${ap}}`);
}

/** A fast 64-bit digest (two FNV-1a/32 lanes) for comparing what both sides computed the same way. */
export function digest64(s: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

// ---------------------------------------------------------------------------------------------
// Canonical subsets (upstream repacks them before mirroring)

function lessAddress(a: EndpointAddressView, b: EndpointAddressView): boolean {
  if (a.ip !== b.ip) return a.ip < b.ip;
  if (!b.targetRef) return false;
  if (!a.targetRef) return true;
  return (a.targetRef.uid ?? '') < (b.targetRef.uid ?? '');
}

const byAddress = (a: EndpointAddressView, b: EndpointAddressView) => (lessAddress(a, b) ? -1 : lessAddress(b, a) ? 1 : 0);

/**
 * Expand subsets to (port -> addresses with readiness) and regroup ports that serve the same
 * addresses, as upstream's repacking does: an address listed twice (by IP and target UID) is one
 * address, not-ready wins over ready, and ports and addresses come out in canonical order.
 */
export function repackSubsets(subsets: readonly EndpointSubsetView[]): EndpointSubsetView[] {
  const addrs = new Map<string, EndpointAddressView>();
  // A port with an appProtocol is a map key by pointer upstream, so each occurrence stands alone.
  const portReady = new Map<string, { port?: EndpointsPortView; ready: Map<string, boolean> }>();
  let occurrence = 0;
  const add = (a: EndpointAddressView, portKey: string, port: EndpointsPortView | undefined, ready: boolean) => {
    const k = `${a.ip}\u0000${a.targetRef?.uid ?? ''}`;
    if (!addrs.has(k)) addrs.set(k, a);
    let entry = portReady.get(portKey);
    if (!entry) portReady.set(portKey, (entry = { port, ready: new Map() }));
    const was = entry.ready.get(k);
    if (was === undefined || was) entry.ready.set(k, ready);
  };
  for (const s of subsets) {
    const ports: Array<[string, EndpointsPortView | undefined]> = s.ports.length
      ? s.ports.map((p) => [p.appProtocol === undefined ? JSON.stringify([p.name ?? '', p.port, p.protocol ?? '']) : `#${occurrence++}`, p])
      : [['sentinel', undefined]];
    for (const [key, port] of ports) {
      for (const a of s.addresses) add(a, key, port, true);
      for (const a of s.notReadyAddresses) add(a, key, port, false);
      if (!portReady.has(key)) portReady.set(key, { port, ready: new Map() });
    }
  }
  const groups = new Map<string, { ready: Map<string, boolean>; ports: EndpointsPortView[] }>();
  for (const { port, ready } of portReady.values()) {
    const key = [...ready.entries()].map(([k, r]) => `${k}\u0000${r}`).sort().join('\u0001');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ready, ports: [] }));
    if (port) g.ports.push(port);
  }
  const out: EndpointSubsetView[] = [];
  for (const g of groups.values()) {
    const addresses: EndpointAddressView[] = [];
    const notReadyAddresses: EndpointAddressView[] = [];
    for (const [k, r] of g.ready) (r ? addresses : notReadyAddresses).push(addrs.get(k)!);
    addresses.sort(byAddress);
    notReadyAddresses.sort(byAddress);
    const keyed = g.ports.map((p) => [portOrderKey(p), p] as const).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    out.push({ addresses, notReadyAddresses, ports: keyed.map(([, p]) => p) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Slices: keys, endpoint identity and comparison

/** What groups slices: address type plus the set of ports, regardless of their order. */
export function slicePortKey(addressType: string, ports: readonly SlicePort[]): string {
  const each = ports.map((p) => JSON.stringify([p.name ?? null, p.port ?? null, p.protocol ?? null, p.appProtocol ?? null])).sort();
  return `${addressType}/${each.join(',')}`;
}

function toSlicePorts(ports: readonly EndpointsPortView[]): SlicePort[] {
  return ports.map((p) => ({
    name: p.name ?? '',
    port: p.port,
    protocol: p.protocol ?? '',
    ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
  }));
}

/** Upstream's identity of an endpoint within a set: addresses, hostname and target name. */
function endpointIdentity(e: SliceEndpoint): string {
  return JSON.stringify([[...e.addresses].sort(), e.hostname ?? '', e.targetRef?.namespace ?? '', e.targetRef?.name ?? '']);
}

/**
 * Everything upstream compares of an endpoint to decide whether a slice needs an update: its
 * identity plus node, zone, conditions and target (the target's resourceVersion excepted).
 */
export function endpointCanonical(e: SliceEndpoint): string {
  const t = e.targetRef;
  return JSON.stringify([
    endpointIdentity(e),
    e.nodeName ?? null, e.zone ?? null,
    e.conditions.ready ?? null, e.conditions.serving ?? null, e.conditions.terminating ?? null,
    t ? [t.kind ?? '', t.namespace ?? '', t.name ?? '', t.uid ?? '', t.apiVersion ?? '', t.fieldPath ?? ''] : null,
  ]);
}

/** Digest of a slice's endpoints as a multiset: the observation reports it, the plan recomputes it. */
export function endpointsDigest(endpoints: readonly SliceEndpoint[]): string {
  return digest64(endpoints.map(endpointCanonical).sort().join('\n'));
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
}

function without(m: Record<string, string>, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) if (!keys.includes(k)) out[k] = v;
  return out;
}

export function mirroredLabels(e: EndpointsView): Record<string, string> {
  return { ...e.labels, [LABEL_SERVICE_NAME]: e.name, [LABEL_MANAGED_BY]: MIRRORING_MANAGER };
}

export function mirroredAnnotations(e: EndpointsView): Record<string, string> {
  return without(e.annotations, ANNOTATIONS_NOT_MIRRORED);
}

// ---------------------------------------------------------------------------------------------
// Desired state

export interface DesiredGroup {
  key: string;
  addressType: AddressType;
  ports: SlicePort[];
  /** by endpoint identity: a later address with the same identity replaces an earlier one */
  endpoints: Map<string, SliceEndpoint>;
}

export interface DesiredState {
  groups: Map<string, DesiredGroup>;
  invalidAddresses: number;
  /** invalid ones included, as upstream counts */
  skippedAddresses: number;
}

function toEndpoint(a: EndpointAddressView, ready: boolean): { endpoint: SliceEndpoint; family: AddressType } | undefined {
  const ip = parseIp(a.ip);
  if (!ip) return undefined;
  return {
    family: ip.family,
    endpoint: {
      addresses: [ip.text],
      conditions: { ready },
      ...(a.targetRef ? { targetRef: a.targetRef } : {}),
      ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
      ...(a.hostname ? { hostname: a.hostname } : {}),
    },
  };
}

export function desiredState(endpoints: EndpointsView, maxPerSubset: number): DesiredState {
  const groups = new Map<string, DesiredGroup>();
  let invalidAddresses = 0;
  let skippedAddresses = 0;
  for (const subset of repackSubsets(endpoints.subsets)) {
    const ports = toSlicePorts(subset.ports);
    const byFamily = {} as Record<AddressType, DesiredGroup>;
    for (const family of ['IPv4', 'IPv6'] as const) {
      const key = slicePortKey(family, ports);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { key, addressType: family, ports, endpoints: new Map() }));
      g.ports = ports;
      byFamily[family] = g;
    }
    let added = 0;
    const consider = (list: EndpointAddressView[], ready: boolean) => {
      for (const a of list) {
        if (added >= maxPerSubset) break;
        const r = toEndpoint(a, ready);
        if (!r) {
          invalidAddresses++;
          continue;
        }
        const id = endpointIdentity(r.endpoint);
        const set = byFamily[r.family].endpoints;
        set.delete(id);
        set.set(id, r.endpoint);
        added++;
      }
    };
    consider(subset.addresses, true);
    consider(subset.notReadyAddresses, false);
    skippedAddresses += subset.addresses.length + subset.notReadyAddresses.length - added;
  }
  return { groups, invalidAddresses, skippedAddresses };
}

function sliceFrom(e: EndpointsView, g: DesiredGroup, maxPerSubset: number): DesiredSlice {
  return {
    addressType: g.addressType,
    ports: g.ports,
    endpoints: [...g.endpoints.values()].slice(0, maxPerSubset),
    labels: mirroredLabels(e),
    annotations: mirroredAnnotations(e),
    owner: { name: e.name, uid: e.uid },
  };
}

/**
 * Whether an existing slice already says what the desired group says. Upstream compares the
 * endpoints, the labels (but its own two) and the annotations; we also want the owner to be this
 * Endpoints object, so a slice left by a deleted namesake is rewritten rather than collected.
 */
export function sliceUpToDate(s: SliceSummary, e: EndpointsView, g: DesiredGroup): boolean {
  return s.endpointsDigest === endpointsDigest([...g.endpoints.values()])
    && s.endpointCount === g.endpoints.size
    && sameMap(e.labels, without(s.labels, [LABEL_MANAGED_BY, LABEL_SERVICE_NAME]))
    && sameMap(mirroredAnnotations(e), s.annotations)
    && s.ownerUid === e.uid;
}

export interface PlanOptions {
  maxEndpointsPerSubset: number;
}

const byName = (a: SliceSummary, b: SliceSummary) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** What to write so the mirrored slices say what the Endpoints say (or, not mirrored, that nothing is left). */
export function planMirroring(obs: MirroringObservation, opts: PlanOptions): MirroringPlan {
  const slices = [...obs.slices].sort(byName);
  const why = notMirroredReason(obs);
  if (why !== undefined || !obs.endpoints) {
    return {
      mirror: false,
      writes: slices.map((s) => ({ type: 'deleteSlice', name: s.name, uid: s.uid, reason: why ?? 'not mirrored' })),
      warnings: [],
      summary: slices.length ? `${why}: deleting ${slices.length} mirrored slice(s)` : `${why}: nothing mirrored`,
    };
  }
  const e = obs.endpoints;
  const max = opts.maxEndpointsPerSubset;
  const desired = desiredState(e, max);

  const warnings: MirroringWarning[] = [];
  if (desired.invalidAddresses > 0) {
    warnings.push({ reason: 'InvalidIPAddress', message: `Skipped ${desired.invalidAddresses} invalid IP addresses when mirroring to EndpointSlices` });
  }
  if (desired.skippedAddresses > desired.invalidAddresses) {
    warnings.push({
      reason: 'TooManyAddressesToMirror',
      message: `A max of ${max} addresses can be mirrored to EndpointSlices per Endpoints subset. ${desired.skippedAddresses} addresses were skipped`,
    });
  }

  const existing = new Map<string, SliceSummary[]>();
  for (const s of slices) {
    const k = slicePortKey(s.addressType, s.ports);
    existing.set(k, [...(existing.get(k) ?? []), s]);
  }

  const creates: Array<{ key: string; slice: DesiredSlice }> = [];
  const updates: Array<{ name: string; resourceVersion: string; slice: DesiredSlice; reason: string }> = [];
  const deletes: Array<{ s: SliceSummary; reason: string }> = [];
  for (const g of desired.groups.values()) {
    const have = existing.get(g.key) ?? [];
    if (g.endpoints.size === 0) {
      for (const s of have) deletes.push({ s, reason: 'no addresses left for its ports and address type' });
      continue;
    }
    if (!have.length) {
      creates.push({ key: g.key, slice: sliceFrom(e, g, max) });
      continue;
    }
    for (const s of have.slice(1)) deletes.push({ s, reason: 'one slice per ports and address type' });
    if (!sliceUpToDate(have[0], e, g)) {
      updates.push({ name: have[0].name, resourceVersion: have[0].resourceVersion, slice: sliceFrom(e, g, max), reason: 'the Endpoints changed' });
    }
  }
  for (const [k, have] of existing) {
    if (!desired.groups.has(k)) for (const s of have) deletes.push({ s, reason: 'its ports or address type are no longer in the Endpoints' });
  }

  // Reuse a slice about to be deleted for a slice about to be created, when their families agree.
  for (const family of ['IPv4', 'IPv6'] as const) {
    const c = creates.filter((x) => x.slice.addressType === family);
    const d = deletes.filter((x) => x.s.addressType === family);
    for (let i = 0; i < c.length && i < d.length; i++) {
      creates.splice(creates.indexOf(c[i]), 1);
      deletes.splice(deletes.indexOf(d[i]), 1);
      updates.push({ name: d[i].s.name, resourceVersion: d[i].s.resourceVersion, slice: c[i].slice, reason: 'recycled for new ports' });
    }
  }

  const writes: MirroringWrite[] = [
    // upstream never creates for an Endpoints object that is being deleted
    ...(e.deletionTimestamp ? [] : creates.map((c) => ({ type: 'createSlice' as const, key: c.key, slice: c.slice }))),
    ...updates.map((u) => ({ type: 'updateSlice' as const, ...u })),
    ...deletes.map((d) => ({ type: 'deleteSlice' as const, name: d.s.name, uid: d.s.uid, reason: d.reason })),
  ];
  const n = (t: MirroringWrite['type']) => writes.filter((w) => w.type === t).length;
  return {
    mirror: true,
    writes,
    warnings,
    summary: writes.length ? `mirroring: ${n('createSlice')} create, ${n('updateSlice')} update, ${n('deleteSlice')} delete` : 'mirrored slices up to date',
  };
}
