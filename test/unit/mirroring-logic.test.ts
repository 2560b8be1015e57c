import { endpointsDigest, parseIp, planMirroring, portOrderKey, repackSubsets } from '../../workflows/endpointslicemirroring/logic';
import type { EndpointsView, MirroringObservation, SliceSummary } from '../../workflows/endpointslicemirroring/types';

const ep = (over: Partial<EndpointsView> = {}): EndpointsView => ({
  namespace: 'ns', name: 'svc', uid: 'ep-uid', resourceVersion: '1',
  labels: { app: 'x' }, annotations: { note: 'y', 'endpoints.kubernetes.io/last-change-trigger-time': 't' },
  subsets: [{ addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1', nodeName: 'n1' }], notReadyAddresses: [{ ip: 'fd00::1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
  ...over,
});
const svc = { uid: 'svc-uid', resourceVersion: '1', hasSelector: false };
const obs = (over: Partial<MirroringObservation> = {}): MirroringObservation => ({ service: svc, endpoints: ep(), slices: [], ...over });

describe('parseIp', () => {
  it('canonicalises like Go', () => {
    expect(parseIp('010.0.0.1')).toEqual({ text: '10.0.0.1', family: 'IPv4' });
    expect(parseIp('::ffff:1.2.3.4')).toEqual({ text: '1.2.3.4', family: 'IPv4' });
    expect(parseIp('FD00:0:0:0:0:0:0:1')).toEqual({ text: 'fd00::1', family: 'IPv6' });
    expect(parseIp('1:0:0:2:0:0:0:3')).toEqual({ text: '1:0:0:2::3', family: 'IPv6' });
    expect(parseIp('1:0:2:3:4:5:6:7')).toEqual({ text: '1:0:2:3:4:5:6:7', family: 'IPv6' });
    expect(parseIp('::')).toEqual({ text: '::', family: 'IPv6' });
    expect(parseIp('fe80::1%eth0')).toBeUndefined();
    expect(parseIp('1.2.3')).toBeUndefined();
    expect(parseIp('host.example')).toBeUndefined();
  });
});

describe('portOrderKey', () => {
  it('hashes the same text as upstream (vectors from go-spew + fnv128a)', () => {
    expect(portOrderKey({ name: 'http', port: 80, protocol: 'TCP' })).toBe('754b003f50f133a539c60d18cfb30a55');
    expect(portOrderKey({ name: '', port: 443, protocol: 'UDP', appProtocol: 'http' })).toBe('159ac70324811f8ea039b4016dd31fcf');
    expect(portOrderKey({ name: 'a"b', port: 65535, protocol: 'SCTP', appProtocol: '' })).toBe('66afdb3751e78db79d69088db877685c');
    expect(portOrderKey({ name: 'dns', port: 53, protocol: 'UDP' })).toBe('cf684d8c2a0def1ba31f64600b9051ae');
  });
});

describe('repackSubsets', () => {
  it('merges subsets by address set, not-ready wins, sorts ports by hash', () => {
    const out = repackSubsets([
      { addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [], ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] },
      { addresses: [{ ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [{ name: 'x', port: 9, protocol: 'TCP' }] },
    ]);
    expect(out).toHaveLength(2);
    const both = out.find((s) => s.ports.length === 2)!;
    expect(both.ports.map((p) => p.name)).toEqual(['http', 'dns']); // 754b... < cf68...
    const x = out.find((s) => s.ports.length === 1)!;
    expect(x.addresses).toEqual([]);
    expect(x.notReadyAddresses.map((a) => a.ip)).toEqual(['10.0.0.2']);
  });
});

describe('planMirroring', () => {
  it('creates one slice per address type with upstream labels, annotations and owner', () => {
    const plan = planMirroring(obs(), { maxEndpointsPerSubset: 1000 });
    expect(plan.mirror).toBe(true);
    const creates = plan.writes.filter((w) => w.type === 'createSlice');
    expect(creates).toHaveLength(2);
    const v4 = creates.find((w) => w.type === 'createSlice' && w.slice.addressType === 'IPv4');
    if (v4?.type !== 'createSlice') throw new Error('no IPv4 slice');
    expect(v4.slice.labels).toEqual({ app: 'x', 'kubernetes.io/service-name': 'svc', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' });
    expect(v4.slice.annotations).toEqual({ note: 'y' });
    expect(v4.slice.owner).toEqual({ name: 'svc', uid: 'ep-uid' });
    expect(v4.slice.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP' }]);
    expect(v4.slice.endpoints.map((e) => [e.addresses[0], e.conditions.ready, e.nodeName])).toEqual([['10.0.0.1', true, 'n1'], ['10.0.0.2', true, undefined]]);
  });

  function existingFrom(o: MirroringObservation): SliceSummary[] {
    const plan = planMirroring(o, { maxEndpointsPerSubset: 1000 });
    return plan.writes.map((w, i) => {
      if (w.type !== 'createSlice') throw new Error('expected creates');
      return { name: `svc-${i}`, uid: `u${i}`, resourceVersion: '5', addressType: w.slice.addressType, ports: w.slice.ports,
        labels: w.slice.labels, annotations: w.slice.annotations, ownerUid: w.slice.owner.uid,
        endpointCount: w.slice.endpoints.length, endpointsDigest: endpointsDigest(w.slice.endpoints) };
    });
  }

  it('writes nothing when slices are up to date, and updates only what changed', () => {
    const slices = existingFrom(obs());
    expect(planMirroring(obs({ slices }), { maxEndpointsPerSubset: 1000 }).writes).toEqual([]);
    const changed = ep({ subsets: [{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1' }], notReadyAddresses: [{ ip: 'fd00::1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] });
    const plan = planMirroring(obs({ endpoints: changed, slices }), { maxEndpointsPerSubset: 1000 });
    expect(plan.writes.map((w) => w.type)).toEqual(['updateSlice']);
  });

  it('recycles a slice whose ports went away instead of create + delete', () => {
    const slices = existingFrom(obs({ endpoints: ep({ subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] }) }));
    const moved = ep({ subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }] });
    const plan = planMirroring(obs({ endpoints: moved, slices }), { maxEndpointsPerSubset: 1000 });
    expect(plan.writes.map((w) => [w.type, 'name' in w ? w.name : ''])).toEqual([['updateSlice', 'svc-0']]);
  });

  it('caps addresses per subset and warns as upstream does', () => {
    const many = ep({ subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '1.2.3' }], notReadyAddresses: [{ ip: '10.0.0.3' }], ports: [] }] });
    const plan = planMirroring(obs({ endpoints: many }), { maxEndpointsPerSubset: 2 });
    expect(plan.warnings.map((w) => w.reason)).toEqual(['InvalidIPAddress', 'TooManyAddressesToMirror']);
    expect(plan.warnings[1].message).toBe('A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped');
    const c = plan.writes[0];
    expect(c.type === 'createSlice' && c.slice.endpoints.length).toBe(2);
  });

  it('deletes everything once the Service has a selector, the Endpoints skip mirroring, or either is gone', () => {
    const slices = existingFrom(obs());
    for (const o of [
      obs({ slices, service: { ...svc, hasSelector: true } }),
      obs({ slices, endpoints: ep({ labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }) }),
      obs({ slices, service: undefined }),
      obs({ slices, endpoints: undefined }),
    ]) {
      const plan = planMirroring(o, { maxEndpointsPerSubset: 1000 });
      expect(plan.mirror).toBe(false);
      expect(plan.writes.map((w) => w.type)).toEqual(['deleteSlice', 'deleteSlice']);
    }
  });

  it('does not create for an Endpoints being deleted', () => {
    const plan = planMirroring(obs({ endpoints: ep({ deletionTimestamp: '2024-01-01T00:00:00Z' }) }), { maxEndpointsPerSubset: 1000 });
    expect(plan.writes).toEqual([]);
  });
});
