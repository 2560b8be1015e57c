import {
  addressTypesFor,
  endpointPorts,
  fnv128a,
  isEmptyPlan,
  isManaged,
  planEndpointSlices,
  podToEndpoint,
  sliceLabels,
  sliceToFill,
  sortPorts,
  triggerTime,
} from '../../workflows/endpointslice/logic';
import {
  CONTROLLER_NAME,
  HEADLESS_LABEL,
  MANAGED_BY_LABEL,
  SERVICE_NAME_LABEL,
  TRIGGER_TIME_ANNOTATION,
  type SliceContent,
  type SlicePlan,
  type SliceView,
} from '../../workflows/endpointslice/types';
import type { EndpointPod, ServiceView } from '../../workflows/service-endpoints/types';

// ---------------------------------------------------------------------------------------------
// fixtures, shaped like upstream's reconciler tests (newPod, newServiceAndEndpointMeta)

const NS = 'test';

function service(over: Partial<ServiceView> = {}): ServiceView {
  return {
    namespace: NS, name: 'foo', uid: 'test-foo', resourceVersion: '1', selector: { foo: 'bar' },
    ports: [{ name: 'foo', protocol: 'TCP', port: 80, targetPort: 80 }],
    type: 'ClusterIP', publishNotReadyAddresses: false, ipFamilies: ['IPv4'], labels: {},
    creationTimestamp: '2026-01-01T00:00:00Z', ...over,
  };
}

function pod(n: number, ready = true, over: Partial<EndpointPod> = {}): EndpointPod {
  return {
    namespace: NS, name: `pod${n}`, uid: `uid-${n}`, resourceVersion: String(n), labels: { foo: 'bar' },
    ips: [`1.2.${Math.floor((4 + n) / 256)}.${(4 + n) % 256}`], nodeName: 'node-1', phase: 'Running', restartPolicy: 'Always',
    ready, ports: [], creationTimestamp: '2026-01-01T00:00:00Z', ...over,
  };
}

const upstreamPods = (count: number) => Array.from({ length: count }, (_, i) => pod(i, i % 3 !== 0));

let seq = 0;
function stored(content: SliceContent, name = `foo-${(seq++).toString(36)}`): SliceView {
  return { ...content, name, uid: `slice-uid-${name}`, resourceVersion: '1' };
}

function sliceOf(svc: ServiceView, pods: EndpointPod[], name: string): SliceView {
  return stored({
    addressType: 'IPv4', ports: [{ name: 'foo', port: 80, protocol: 'TCP' }], endpoints: pods.map((p) => podToEndpoint(p, svc, 'IPv4')),
    labels: sliceLabels({}, svc).labels, annotations: {}, ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.name, uid: svc.uid, controller: true, blockOwnerDeletion: true }],
  }, name);
}

/** What the API would hold after the plan is written. */
function applyPlan(existing: SliceView[], plan: SlicePlan): SliceView[] {
  const byName = new Map(existing.map((s) => [s.name, s]));
  for (const c of plan.create) {
    const s = stored(c);
    byName.set(s.name, s);
  }
  for (const u of plan.update) byName.set(u.name, { ...u, resourceVersion: String(Number(u.resourceVersion) + 1) });
  for (const d of plan.delete) byName.delete(d.name);
  return [...byName.values()];
}

const lengths = (xs: Array<{ endpoints: unknown[] }>) => xs.map((s) => s.endpoints.length).sort((a, b) => b - a);
const plan = (svc: ServiceView, pods: EndpointPod[], existing: SliceView[], max = 100, time?: string) =>
  planEndpointSlices(svc, pods, existing, { maxEndpointsPerSlice: max, ...(time ? { triggerTime: time } : {}) });

// ---------------------------------------------------------------------------------------------

describe('ports', () => {
  it('hashes a port exactly as upstream (FNV-128a of its go-spew dump)', () => {
    expect(fnv128a('(v1.EndpointPort){Name:(*string)http Protocol:(*v1.Protocol)TCP Port:(*int32)80 AppProtocol:(*string)<nil>}'))
      .toBe('b6c4d325122a5ba6f795b0bbffcebb6f');
    expect(fnv128a('(v1.EndpointPort){Name:(*string) Protocol:(*v1.Protocol)UDP Port:(*int32)53 AppProtocol:(*string)kubernetes.io/h2c}'))
      .toBe('32d2507b122b36c0ad29913aefd4a37c');
  });

  it('orders ports as upstream writes them and resolves named target ports per pod', () => {
    // order taken from upstream's getEndpointPorts + NewPortMapKey, v1.35
    const svc = service({ ports: [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
      { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53, appProtocol: 'dns' },
      { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 'metrics' },
    ] });
    const p = pod(1, true, { ports: [{ name: 'metrics', containerPort: 9100, protocol: 'TCP' }] });
    expect(endpointPorts(svc, p)).toEqual([
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP', appProtocol: 'dns' },
      { name: 'metrics', port: 9100, protocol: 'TCP' },
      { name: 'https', port: 8443, protocol: 'TCP' },
    ]);
    // a pod without the named port serves the others only
    expect(endpointPorts(svc, pod(2)).map((x) => x.name)).toEqual(['http', 'dns', 'https']);
    expect(sortPorts([...endpointPorts(svc, p)].reverse())).toEqual(endpointPorts(svc, p));
  });

  it('groups pods by their resolved ports: 5 variants of a named port, 5 slices of 60', () => {
    const svc = service({ name: 'named-port-example', ports: [{ protocol: 'TCP', port: 80, targetPort: 'http' }] });
    const pods = Array.from({ length: 300 }, (_, i) => pod(i, i % 3 !== 0, { ports: [{ name: 'http', containerPort: 8080 + (i % 5), protocol: 'TCP' }] }));
    const p = plan(svc, pods, []);
    expect(p.update).toEqual([]);
    expect(lengths(p.create)).toEqual([60, 60, 60, 60, 60]);
    expect(p.create.map((s) => s.ports[0].port).sort()).toEqual([8080, 8081, 8082, 8083, 8084]);
    expect(p.create.every((s) => s.ports[0].name === '')).toBe(true);
  });

  it('a headless Service without ports gets endpoints without ports', () => {
    const svc = service({ clusterIP: 'None', ports: [] });
    expect(endpointPorts(svc, pod(1))).toEqual([]);
    expect(plan(svc, [pod(1)], []).create[0].ports).toEqual([]);
  });
});

describe('endpoints', () => {
  it('projects a pod as upstream does', () => {
    const svc = service();
    expect(podToEndpoint(pod(1, true, { zone: 'z1' }), svc, 'IPv4')).toEqual({
      addresses: ['1.2.0.5'], conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: NS, name: 'pod1', uid: 'uid-1' }, nodeName: 'node-1', zone: 'z1',
    });
  });

  it('sets the hostname only for a pod whose subdomain is the Service', () => {
    const svc = service();
    expect(podToEndpoint(pod(1, true, { hostname: 'h', subdomain: 'foo' }), svc, 'IPv4').hostname).toBe('h');
    expect(podToEndpoint(pod(1, true, { hostname: 'h', subdomain: 'other' }), svc, 'IPv4').hostname).toBeUndefined();
  });

  it('keeps terminating pods, never ready unless publishNotReadyAddresses', () => {
    const t = pod(1, true, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(podToEndpoint(t, service(), 'IPv4').conditions).toEqual({ ready: false, serving: true, terminating: true });
    expect(podToEndpoint(t, service({ publishNotReadyAddresses: true }), 'IPv4').conditions).toEqual({ ready: true, serving: true, terminating: true });
    expect(podToEndpoint(pod(2, false), service({ publishNotReadyAddresses: true }), 'IPv4').conditions).toEqual({ ready: true, serving: false, terminating: false });
  });

  it('leaves out terminal pods and pods without an IP', () => {
    const pods = [pod(1), pod(2, true, { phase: 'Succeeded' }), pod(3, true, { phase: 'Failed' }), pod(4, false, { ips: [] })];
    const p = plan(service(), pods, []);
    expect(p.create).toHaveLength(1);
    expect(p.create[0].endpoints.map((e) => e.targetRef?.name)).toEqual(['pod1']);
  });

  it('splits dual-stack pods by address type, and drops the slices of a family the Service gave up', () => {
    const svc = service({ ipFamilies: ['IPv4', 'IPv6'] });
    const pods = [pod(1, true, { ips: ['10.0.0.1', 'fd00::1'] }), pod(2, true, { ips: ['10.0.0.2', 'fd00::2'] })];
    const p = plan(svc, pods, []);
    expect(p.create.map((s) => [s.addressType, s.endpoints.map((e) => e.addresses[0])])).toEqual([
      ['IPv4', ['10.0.0.1', '10.0.0.2']], ['IPv6', ['fd00::1', 'fd00::2']],
    ]);
    const world = applyPlan([], p);
    const v4only = plan(service(), pods, world);
    expect(v4only.create).toEqual([]);
    expect(v4only.update).toEqual([]);
    expect(v4only.delete.map((d) => d.name)).toEqual([world.find((s) => s.addressType === 'IPv6')!.name]);
  });

  it('address types come from ipFamilies, or from the ClusterIP of an old Service', () => {
    expect(addressTypesFor(service({ ipFamilies: ['IPv6', 'IPv4'] }))).toEqual(['IPv6', 'IPv4']);
    expect(addressTypesFor(service({ ipFamilies: [], clusterIP: 'fd00::10' }))).toEqual(['IPv6']);
    expect(addressTypesFor(service({ ipFamilies: [], clusterIP: 'None' }))).toEqual(['IPv4', 'IPv6']);
  });
});

describe('metadata', () => {
  it('labels: the Service labels but reserved ones, headless marker, service name, managed-by', () => {
    const svc = service({ labels: { app: 'x', [SERVICE_NAME_LABEL]: 'bad', [MANAGED_BY_LABEL]: 'actor', [HEADLESS_LABEL]: 'invalid' } });
    expect(sliceLabels({}, svc)).toEqual({ changed: true, labels: { app: 'x', [HEADLESS_LABEL]: '', [SERVICE_NAME_LABEL]: 'foo', [MANAGED_BY_LABEL]: CONTROLLER_NAME } });
    expect(sliceLabels({}, service({ clusterIP: '10.0.0.10' })).labels).toEqual({ [SERVICE_NAME_LABEL]: 'foo', [MANAGED_BY_LABEL]: CONTROLLER_NAME });
  });

  it('new slices are owned by the Service as its controller', () => {
    const c = plan(service(), [pod(1)], []).create[0];
    expect(c.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'foo', uid: 'test-foo', controller: true, blockOwnerDeletion: true }]);
  });

  it('only ExternalName Services and Services without a selector are left alone', () => {
    expect(isManaged(service())).toBe(true);
    expect(isManaged(service({ type: 'ExternalName' }))).toBe(false);
    expect(isManaged(service({ selector: undefined }))).toBe(false);
  });
});

describe('packing (upstream reconciler_test scenarios)', () => {
  it('no pods: one placeholder slice, kept as it is afterwards', () => {
    const svc = service();
    const p = plan(svc, [], []);
    expect(p.create).toHaveLength(1);
    expect(p.create[0]).toMatchObject({ addressType: 'IPv4', ports: [], endpoints: [] });
    expect(isEmptyPlan(plan(svc, [], applyPlan([], p)))).toBe(true);
  });

  it('the placeholder is reused (updated, not deleted and created) when the Service labels change', () => {
    const world = applyPlan([], plan(service(), [], []));
    const p = plan(service({ labels: { a: 'b' } }), [], world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.update.map((u) => u.name)).toEqual([world[0].name]);
    expect(p.update[0].labels.a).toBe('b');
  });

  it('the last pod leaving turns its slice into the placeholder', () => {
    const svc = service();
    const world = applyPlan([], plan(svc, [pod(1)], []));
    const p = plan(svc, [], world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.update).toHaveLength(1);
    expect(p.update[0]).toMatchObject({ name: world[0].name, endpoints: [], ports: [] });
  });

  it('many pods: 100, 100, 50; and per maxEndpointsPerSlice', () => {
    const pods = upstreamPods(250);
    expect(lengths(plan(service(), pods, []).create)).toEqual([100, 100, 50]);
    expect(lengths(plan(service(), pods, [], 50).create)).toEqual([50, 50, 50, 50, 50]);
    expect(lengths(plan(service(), pods, [], 80).create)).toEqual([80, 80, 80, 10]);
    expect(lengths(plan(service(), pods, [], 150).create)).toEqual([150, 100]);
    expect(lengths(plan(service(), pods, [], 500).create)).toEqual([250]);
  });

  it('some preexisting: one new full slice, the rest into the slice it fills best (62 -> 89)', () => {
    const svc = service();
    const pods = upstreamPods(250);
    const s1 = sliceOf(svc, pods.filter((_, i) => i % 4 === 1 && i < 246), 's1');
    const s2 = sliceOf(svc, pods.filter((_, i) => i % 4 === 3 && i < 246), 's2');
    expect([s1.endpoints.length, s2.endpoints.length]).toEqual([62, 61]);
    const p = plan(svc, pods, [s1, s2]);
    expect(lengths(p.create)).toEqual([100]);
    expect(p.update.map((u) => [u.name, u.endpoints.length])).toEqual([['s1', 89]]);
    expect(p.delete).toEqual([]);
    expect(lengths(applyPlan([s1, s2], p))).toEqual([100, 89, 61]);
  });

  it('some preexisting, worse allocation: two creates rather than two updates and a create', () => {
    const svc = service();
    const pods = upstreamPods(300);
    const s1 = sliceOf(svc, pods.filter((_, i) => i % 4 === 1 && i < 296), 's1');
    const s2 = sliceOf(svc, pods.filter((_, i) => i % 4 === 3 && i < 296), 's2');
    const p = plan(svc, pods, [s1, s2]);
    expect(p.update).toEqual([]);
    expect(lengths(p.create)).toEqual([100, 52]);
  });

  it('a target port change updates every slice in place', () => {
    const pods = upstreamPods(250);
    const world = applyPlan([], plan(service(), pods, []));
    const p = plan(service({ ports: [{ name: 'foo', protocol: 'TCP', port: 80, targetPort: 81 }] }), pods, world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(lengths(p.update)).toEqual([100, 100, 50]);
    expect(p.update.every((u) => u.ports[0].port === 81)).toBe(true);
  });

  it('Service label changes update every slice; reserved labels change nothing', () => {
    const pods = upstreamPods(250);
    const world = applyPlan([], plan(service(), pods, []));
    const p = plan(service({ labels: { foo: 'bar' } }), pods, world);
    expect(p.update).toHaveLength(3);
    expect(p.update.every((u) => u.labels.foo === 'bar')).toBe(true);
    const reserved = plan(service({ labels: { [SERVICE_NAME_LABEL]: 'bad', [MANAGED_BY_LABEL]: 'actor', [HEADLESS_LABEL]: 'invalid' } }), pods, world);
    expect(isEmptyPlan(reserved)).toBe(true);
  });

  it('recycling: 10 slices of 30 stay as they are, until a port change repacks them into 3 updates and 7 deletes', () => {
    const svc = service();
    const pods = upstreamPods(300);
    const world = Array.from({ length: 10 }, (_, i) => sliceOf(svc, pods.slice(i * 30, i * 30 + 30), `s${i}`));
    expect(isEmptyPlan(plan(svc, pods, world))).toBe(true);
    const p = plan(service({ ports: [{ name: 'foo', protocol: 'TCP', port: 80, targetPort: 81 }] }), pods, world);
    expect(p.create).toEqual([]);
    expect(p.update).toHaveLength(3);
    expect(p.delete).toHaveLength(7);
    expect(lengths(applyPlan(world, p))).toEqual([100, 100, 100]);
  });

  it('update packing: new endpoints go to the fullest slice already being updated (95, 20)', () => {
    const svc = service();
    const first = Array.from({ length: 80 }, (_, i) => pod(i));
    const second = Array.from({ length: 20 }, (_, i) => pod(100 + i));
    const s1 = sliceOf(svc, first, 's1');
    const s2 = sliceOf(svc, second, 's2');
    const pods = [...first, ...second].map((p, i) => (i % 10 === 0 ? { ...p, ready: false } : p));
    for (let i = 200; i < 215; i++) pods.push(pod(i));
    const p = plan(svc, pods, [s1, s2]);
    expect(p.create).toEqual([]);
    expect(p.update.map((u) => [u.name, u.endpoints.length])).toEqual([['s1', 95], ['s2', 20]]);
  });

  it('slices of another Service under the same name are deleted, never reused', () => {
    const svc = service();
    const old = { ...sliceOf(service({ uid: 'old' }), [pod(1)], 'old-1') };
    const p = plan(svc, [pod(1)], [old]);
    expect(p.create).toHaveLength(1);
    expect(p.update).toEqual([]);
    expect(p.delete).toEqual([{ name: 'old-1', uid: old.uid }]);
  });

  it('a Service being deleted gets no new slices', () => {
    const p = plan(service({ deletionTimestamp: '2026-01-01T00:00:00Z' }), [pod(1)], []);
    expect(p.create).toEqual([]);
  });

  it('sliceToFill picks the slice closest to full that has room', () => {
    const s = (n: number) => ({ endpoints: new Array(n).fill(0) });
    expect(sliceToFill([s(62), s(61)], 27, 100)).toEqual(s(62));
    expect(sliceToFill([s(90), s(50)], 20, 100)).toEqual(s(50));
    expect(sliceToFill([s(90)], 20, 100)).toBeUndefined();
  });
});

describe('sequences: one change, one write', () => {
  it('one pod readiness flip among 250 pods changes exactly one slice, and only that endpoint', () => {
    const svc = service();
    let pods = upstreamPods(250);
    let world = applyPlan([], plan(svc, pods, []));
    expect(lengths(world)).toEqual([100, 100, 50]);
    expect(isEmptyPlan(plan(svc, pods, world))).toBe(true);

    pods = pods.map((p) => (p.name === 'pod137' ? { ...p, ready: !p.ready, resourceVersion: '9999' } : p));
    const p = plan(svc, pods, world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.update).toHaveLength(1);
    const before = world.find((s) => s.name === p.update[0].name)!;
    const changed = p.update[0].endpoints.filter((e, i) => JSON.stringify(e) !== JSON.stringify(before.endpoints[i]));
    expect(changed.map((e) => e.targetRef?.name)).toEqual(['pod137']);
    world = applyPlan(world, p);
    expect(isEmptyPlan(plan(svc, pods, world))).toBe(true);
  });

  it('scale down and up: removals shrink their slices in place, additions fill the slice closest to full', () => {
    const svc = service();
    let pods = upstreamPods(250);
    let world = applyPlan([], plan(svc, pods, []));
    // 30 pods of the first slice go away
    const firstSlice = world.find((s) => s.endpoints.length === 100)!;
    const gone = new Set(firstSlice.endpoints.slice(0, 30).map((e) => e.targetRef!.name));
    pods = pods.filter((p) => !gone.has(p.name));
    let p = plan(svc, pods, world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.update.map((u) => [u.name, u.endpoints.length])).toEqual([[firstSlice.name, 70]]);
    world = applyPlan(world, p);
    expect(lengths(world)).toEqual([100, 70, 50]);

    // 40 new pods: all fit in the 50-slice (90) rather than the 70-slice (110 > 100)
    for (let i = 0; i < 40; i++) pods.push(pod(1000 + i));
    p = plan(svc, pods, world);
    expect(p.create).toEqual([]);
    expect(p.update).toHaveLength(1);
    expect(p.update[0].endpoints.length).toBe(90);
    world = applyPlan(world, p);
    expect(lengths(world)).toEqual([100, 90, 70]);

    // 150 more: one new full slice, and the 50 left fill no unchanged slice (none has room for 50) -> a second new slice
    for (let i = 0; i < 150; i++) pods.push(pod(2000 + i));
    p = plan(svc, pods, world);
    expect(p.update).toEqual([]);
    expect(lengths(p.create)).toEqual([100, 50]);
  });

  it('a slice emptied while another is created is reused by name instead of deleted', () => {
    const svc = service();
    const pods = [pod(1), pod(2)];
    const world = applyPlan([], plan(svc, pods, []));
    // every pod moves to another port set: the old group empties, the new group needs a slice
    const moved = service({ ports: [{ name: 'foo', protocol: 'TCP', port: 80, targetPort: 'web' }] });
    const pods2 = pods.map((x) => ({ ...x, ports: [{ name: 'web', containerPort: 8080, protocol: 'TCP' }] }));
    const p = plan(moved, pods2, world);
    expect(p.create).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.update.map((u) => [u.name, u.ports[0].port, u.endpoints.length])).toEqual([[world[0].name, 8080, 2]]);
  });
});

describe('hints', () => {
  it('PreferClose: same-zone hints for ready endpoints; PreferSameNode adds the node', () => {
    const pods = [pod(1, true, { zone: 'a' }), pod(2, false, { zone: 'b' }), pod(3, true)];
    const eps = plan(service({ trafficDistribution: 'PreferClose' }), pods, []).create[0].endpoints;
    expect(eps.map((e) => e.hints)).toEqual([{ forZones: [{ name: 'a' }] }, undefined, undefined]);
    const node = plan(service({ trafficDistribution: 'PreferSameNode' }), pods, []).create[0].endpoints;
    expect(node[0].hints).toEqual({ forZones: [{ name: 'a' }], forNodes: [{ name: 'node-1' }] });
    expect(node[2].hints).toEqual({ forNodes: [{ name: 'node-1' }] });
  });

  it('turning trafficDistribution on or off rewrites the slices whose hints are wrong', () => {
    const pods = [pod(1, true, { zone: 'a' })];
    const plain = applyPlan([], plan(service(), pods, []));
    const on = plan(service({ trafficDistribution: 'PreferClose' }), pods, plain);
    expect(on.update).toHaveLength(1);
    const hinted = applyPlan(plain, on);
    expect(isEmptyPlan(plan(service({ trafficDistribution: 'PreferClose' }), pods, hinted))).toBe(true);
    const off = plan(service(), pods, hinted);
    expect(off.update).toHaveLength(1);
    expect(off.update[0].endpoints[0].hints).toBeUndefined();
  });
});

describe('last-change-trigger-time', () => {
  it('first sync: the Service creation; then the earliest change since; nothing changed: none', () => {
    const svc = service();
    const pods = [pod(1, true, { lastTransitionTime: '2026-02-01T00:00:00Z' }), pod(2, true, { lastTransitionTime: '2026-02-02T00:00:00Z' })];
    const first = triggerTime(undefined, svc, pods);
    expect(first.time).toBe('2026-01-01T00:00:00Z');
    expect(triggerTime(first.state, svc, pods).time).toBeUndefined();
    const later = [{ ...pods[0], lastTransitionTime: '2026-03-05T00:00:00Z' }, { ...pods[1], lastTransitionTime: '2026-03-04T00:00:00Z' }];
    expect(triggerTime(first.state, svc, later).time).toBe('2026-03-04T00:00:00Z');
  });

  it('is written on the slices a sync writes, and removed when there is none', () => {
    const svc = service();
    const world = applyPlan([], plan(svc, [pod(1)], [], 100, '2026-02-01T00:00:00Z'));
    expect(world[0].annotations[TRIGGER_TIME_ANNOTATION]).toBe('2026-02-01T00:00:00Z');
    const p = plan(svc, [pod(1), pod(2)], world);
    expect(p.update[0].annotations[TRIGGER_TIME_ANNOTATION]).toBeUndefined();
  });
});
