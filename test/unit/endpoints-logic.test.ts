import {
  HEADLESS_LABEL,
  MANAGED_BY_LABEL,
  OVER_CAPACITY_ANNOTATION,
  TRIGGER_TIME_ANNOTATION,
  canonicalIp,
  computeTriggerTime,
  desiredSubsets,
  endpointsUpToDate,
  fnv128aHex,
  labelsCorrect,
  nextEndpoints,
  planEndpoints,
  repackSubsets,
  spewPort,
  truncateSubsets,
  type EndpointSubset,
} from '../../workflows/endpoints/logic';
import type { EndpointPod, ServiceView } from '../../workflows/service-endpoints/types';

const svc = (over: Partial<ServiceView> = {}): ServiceView => ({
  namespace: 'ns', name: 'web', uid: 's1', resourceVersion: '1', selector: { app: 'web' },
  ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }],
  clusterIP: '10.96.0.10', type: 'ClusterIP', publishNotReadyAddresses: false, ipFamilies: ['IPv4'],
  labels: { team: 'a' }, creationTimestamp: '2025-01-01T00:00:00Z', ...over,
});

const pod = (name: string, ip: string, over: Partial<EndpointPod> = {}): EndpointPod => ({
  namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: '1', labels: { app: 'web' }, ips: [ip], nodeName: 'n1',
  phase: 'Running', restartPolicy: 'Always', ready: true, ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
  creationTimestamp: '2025-01-01T00:00:00Z', ...over,
});

const addr = (ip: string, uid: string, nodeName: string) => ({ ip, nodeName, targetRef: { kind: 'Pod', namespace: 'ns', name: `pod-${uid}`, uid } });

describe('hashing as upstream', () => {
  it('FNV-1a 128 and the spew dump of a port match Go', () => {
    // expected values computed with Go's hash/fnv and go-spew as k8s.io/apimachinery's dump.ForHash configures it
    expect(fnv128aHex('')).toBe('6c62272e07bb014262b821756295c58d');
    expect(fnv128aHex('hello world')).toBe('6c155799fdc8eec4b91523808e7726b7');
    expect(fnv128aHex(spewPort({ name: 'http', port: 8080, protocol: 'TCP' }))).toBe('25304a33da9e6ece350a4142a45f5b75');
  });

  it('repacks subsets in the order upstream RepackSubsets produces', () => {
    const http = { name: 'http', port: 8080, protocol: 'TCP' };
    const dns = { name: 'dns', port: 53, protocol: 'UDP', appProtocol: 'dns' };
    const metrics = { name: 'metrics', port: 9090, protocol: 'TCP' };
    const c = addr('10.0.0.3', 'c', 'n1');
    const a = addr('10.0.0.1', 'a', 'n2');
    const b = addr('10.0.0.2', 'b', 'n1');
    const raw: EndpointSubset[] = [
      { addresses: [c], ports: [http] }, { addresses: [c], ports: [dns] }, { addresses: [c], ports: [metrics] },
      { addresses: [a], ports: [http] }, { addresses: [a], ports: [dns] },
      { notReadyAddresses: [b], ports: [http] }, { notReadyAddresses: [b], ports: [dns] }, { notReadyAddresses: [b], ports: [metrics] },
    ];
    // the output of upstream v1.35's RepackSubsets for the same input
    expect(repackSubsets(raw)).toEqual([
      { addresses: [c], notReadyAddresses: [b], ports: [metrics] },
      { addresses: [a, c], notReadyAddresses: [b], ports: [dns, http] },
    ]);
  });

  it('keeps port-less addresses of a headless Service', () => {
    const s = svc({ clusterIP: 'None', ports: [] });
    expect(desiredSubsets(s, [pod('p1', '10.0.0.1')])).toEqual([{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'ns', name: 'p1', uid: 'uid-p1' } }] }]);
    // a Service with a cluster IP and no ports gets no addresses
    expect(desiredSubsets(svc({ ports: [] }), [pod('p1', '10.0.0.1')])).toEqual([]);
  });
});

describe('desiredSubsets', () => {
  it('resolves named target ports per pod and sorts addresses by IP', () => {
    const pods = [pod('b', '10.0.0.2'), pod('a', '10.0.0.1', { ports: [{ name: 'http', containerPort: 9000, protocol: 'TCP' }] }), pod('c', '10.0.0.3', { ports: [] })];
    const out = desiredSubsets(svc(), pods);
    expect(out.map((s) => [s.ports?.[0].port, s.addresses?.map((a) => a.ip)])).toEqual(
      expect.arrayContaining([[8080, ['10.0.0.2']], [9000, ['10.0.0.1']]]));
    expect(out).toHaveLength(2);
  });

  it('drops terminal, IP-less and terminating pods; not-ready ones go to notReadyAddresses', () => {
    const pods = [
      pod('ok', '10.0.0.1'),
      pod('unready', '10.0.0.2', { ready: false }),
      pod('done', '10.0.0.3', { phase: 'Succeeded' }),
      pod('noip', '', { ips: [] }),
      pod('going', '10.0.0.4', { deletionTimestamp: '2025-01-01T00:00:00Z' }),
    ];
    const [s] = desiredSubsets(svc(), pods);
    expect(s.addresses?.map((a) => a.ip)).toEqual(['10.0.0.1']);
    expect(s.notReadyAddresses?.map((a) => a.ip)).toEqual(['10.0.0.2']);
  });

  it('publishNotReadyAddresses lists unready and terminating pods as ready', () => {
    const pods = [pod('unready', '10.0.0.2', { ready: false }), pod('going', '10.0.0.4', { deletionTimestamp: '2025-01-01T00:00:00Z' })];
    const [s] = desiredSubsets(svc({ publishNotReadyAddresses: true }), pods);
    expect(s.addresses?.map((a) => a.ip)).toEqual(['10.0.0.2', '10.0.0.4']);
    expect(s.notReadyAddresses).toBeUndefined();
  });

  it('uses the IP of the first family and sets the hostname only for the matching subdomain', () => {
    const dual = pod('d', '10.0.0.1', { ips: ['10.0.0.1', 'fd00:0:0::1'], hostname: 'h', subdomain: 'web' });
    const [v6] = desiredSubsets(svc({ ipFamilies: ['IPv6', 'IPv4'] }), [dual]);
    expect(v6.addresses?.[0]).toMatchObject({ ip: 'fd00::1', hostname: 'h' });
    const [v4] = desiredSubsets(svc(), [{ ...dual, subdomain: 'other' }]);
    expect(v4.addresses?.[0].ip).toBe('10.0.0.1');
    expect(v4.addresses?.[0].hostname).toBeUndefined();
  });

  it('prints IPs as Go does', () => {
    expect(canonicalIp('::ffff:10.1.2.3')).toEqual({ ip: '10.1.2.3', v6: false });
    expect(canonicalIp('2001:DB8:0:0:1:0:0:1')).toEqual({ ip: '2001:db8::1:0:0:1', v6: true });
    expect(canonicalIp('010.001.0.1')).toEqual({ ip: '10.1.0.1', v6: false });
    expect(canonicalIp('nope')).toBeUndefined();
  });
});

describe('truncation', () => {
  const many = (n: number, ready: boolean, base: number) => Array.from({ length: n }, (_, i) => ({ ...addr(`10.${base}.${i >> 8}.${i & 255}`, `${base}-${i}`, 'n'), ready }));
  it('keeps ready addresses first and shares the rest proportionally', () => {
    const subsets: EndpointSubset[] = [
      { addresses: many(600, true, 1), notReadyAddresses: many(300, false, 2), ports: [{ port: 1, protocol: 'TCP' }] },
      { addresses: many(200, true, 3), notReadyAddresses: many(100, false, 4), ports: [{ port: 2, protocol: 'TCP' }] },
    ];
    const t = truncateSubsets(subsets);
    expect(t.truncated).toBe(true);
    // 200 not-ready places left for 400 not-ready addresses: 150 and 50
    expect(t.subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length])).toEqual([[600, 150], [200, 50]]);
  });

  it('cuts ready addresses when they alone are too many, and drops every not-ready one', () => {
    const t = truncateSubsets([{ addresses: many(1001, true, 1), notReadyAddresses: many(5, false, 2) }, { addresses: many(499, true, 3) }]);
    expect(t.subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length])).toEqual([[668, undefined], [332, undefined]]);
  });
});

describe('labels, annotations and comparison', () => {
  it('copies the Service labels, marks headless Services, claims the object', () => {
    expect(planEndpoints(svc({ clusterIP: 'None' }), [], undefined).labels).toEqual({ team: 'a', [HEADLESS_LABEL]: '', [MANAGED_BY_LABEL]: 'endpoint-controller' });
    expect(planEndpoints(svc({ labels: { [HEADLESS_LABEL]: 'x' } }), [], undefined).labels).toEqual({ [MANAGED_BY_LABEL]: 'endpoint-controller' });
  });

  it('label check as upstream: ignores the headless marker, requires managed-by', () => {
    expect(labelsCorrect({ team: 'a', [MANAGED_BY_LABEL]: 'endpoint-controller' }, { team: 'a' })).toBe(true);
    expect(labelsCorrect({ team: 'a' }, { team: 'a' })).toBe(false);
    expect(labelsCorrect({ team: 'b', [MANAGED_BY_LABEL]: 'endpoint-controller' }, { team: 'a' })).toBe(false);
    expect(labelsCorrect({ [MANAGED_BY_LABEL]: 'endpoint-controller' }, { team: 'a' })).toBe(false);
  });

  it('an equal object needs no write; pod resourceVersions and nil-vs-empty lists do not count', () => {
    const w = planEndpoints(svc(), desiredSubsets(svc(), [pod('a', '10.0.0.1')]), '2025-01-01T00:00:00Z');
    const live = nextEndpoints(undefined, w);
    expect(endpointsUpToDate(live, w)).toBe(true);
    const withRv = { ...live, subsets: live.subsets!.map((s) => ({ ...s, notReadyAddresses: [], addresses: s.addresses!.map((a) => ({ ...a, targetRef: { ...a.targetRef, resourceVersion: '9' } })) })) };
    expect(endpointsUpToDate(withRv, w)).toBe(true);
    expect(endpointsUpToDate({ ...live, metadata: { ...live.metadata, annotations: { [OVER_CAPACITY_ANNOTATION]: 'truncated' } } }, w)).toBe(false);
    expect(endpointsUpToDate({ ...live, subsets: [] }, w)).toBe(false);
  });

  it('an update keeps foreign annotations and replaces ours', () => {
    const w = planEndpoints(svc(), [], undefined);
    const next = nextEndpoints({ metadata: { name: 'web', resourceVersion: '5', annotations: { keep: 'me', [TRIGGER_TIME_ANNOTATION]: 'old', [OVER_CAPACITY_ANNOTATION]: 'truncated' } } }, w);
    expect(next.metadata?.annotations).toEqual({ keep: 'me' });
    expect(next.metadata?.resourceVersion).toBe('5');
  });
});

describe('last-change-trigger-time', () => {
  it('is the Service creation first, then the earliest newer Ready transition, else nothing', () => {
    const s = svc();
    const first = computeTriggerTime(undefined, s, [pod('a', '10.0.0.1', { readyTransitionTime: '2025-01-02T00:00:00Z' })]);
    expect(first.time).toBe('2025-01-01T00:00:00Z');
    const same = computeTriggerTime(first.state, s, [pod('a', '10.0.0.1', { readyTransitionTime: '2025-01-02T00:00:00Z' })]);
    expect(same.time).toBeUndefined();
    const changed = computeTriggerTime(same.state, s, [
      pod('a', '10.0.0.1', { readyTransitionTime: '2025-01-03T00:00:05Z' }),
      pod('b', '10.0.0.2', { readyTransitionTime: '2025-01-03T00:00:01Z' }),
    ]);
    expect(changed.time).toBe('2025-01-03T00:00:01Z');
  });
});
