import { MIRRORING_SERVICE_FIELDS, hasSelector, mirrorable, mirroringRoutes, sliceInfo } from '../../activities/endpointslicemirroring/routes';
import { METADATA, prune, unionMask, type FieldMask } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { ENDPOINT_POD_FIELDS, SERVICE_VIEW_FIELDS, endpointPod, serviceView } from '../../activities/service-endpoints/projections';
import { PODS_BY_NODE } from '../../activities/informers/indexes';
import { SERVICES_BY_SELECTOR_PAIR, serviceEndpointsRoutes } from '../../activities/service-endpoints/routes';
import type { RouteContext } from '../../workers/descriptor';
import { routeHarness } from '../support/routes';

/**
 * The shared stores keep of an object only what its readers' masks name: each projection (and
 * index) of the endpoints, endpointslice and mirroring routes must read nothing outside its mask.
 * Every fixture sets each field its reader reads, and some no one reads.
 */
const richPod = (): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: {
    namespace: 'a', name: 'p', uid: 'u', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-02T00:00:00Z',
    labels: { app: 'web' }, annotations: { a: 'b' },
  },
  spec: {
    nodeName: 'n1', hostname: 'h', subdomain: 'sub', restartPolicy: 'OnFailure', serviceAccountName: 'sa', volumes: [{ name: 'v' }],
    containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP', hostPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }],
    initContainers: [
      { name: 'side', image: 'y', restartPolicy: 'Always', ports: [{ name: 'metrics', containerPort: 9090, protocol: 'SCTP' }] },
      { name: 'init', image: 'z', ports: [{ containerPort: 1 }] },
    ],
  },
  status: {
    phase: 'Running', podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], hostIP: '192.168.0.1', qosClass: 'Burstable',
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z', reason: 'R' },
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:03Z', message: 'M' },
    ],
    containerStatuses: [{ name: 'c', restartCount: 2, ready: true }],
  },
} as unknown as KubeObject);

const richService = (): KubeObject => ({
  apiVersion: 'v1', kind: 'Service',
  metadata: { namespace: 'a', name: 's', uid: 'su', resourceVersion: '3', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-02T00:00:00Z', labels: { l: 'v' } },
  spec: {
    selector: { app: 'web', tier: 'fe' },
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', appProtocol: 'h2c', nodePort: 30080 }, { port: 53, protocol: 'UDP', targetPort: 5353 }],
    clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], type: 'NodePort', publishNotReadyAddresses: true, ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'PreferDualStack', trafficDistribution: 'PreferClose', sessionAffinity: 'None', externalTrafficPolicy: 'Local',
  },
  status: { loadBalancer: {} },
} as unknown as KubeObject);

const richNode = (): KubeObject => ({
  apiVersion: 'v1', kind: 'Node',
  metadata: { name: 'n1', uid: 'nu', resourceVersion: '4', labels: { 'topology.kubernetes.io/zone': 'z1', 'kubernetes.io/os': 'linux' } },
  spec: { podCIDR: '10.0.0.0/24' },
  status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { cpu: '4' } },
} as unknown as KubeObject);

const richEndpoints = (): KubeObject => ({
  apiVersion: 'v1', kind: 'Endpoints',
  metadata: {
    namespace: 'a', name: 's', uid: 'eu', resourceVersion: '5', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'false' },
    annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' },
  },
  subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }],
} as unknown as KubeObject);

const richSlice = (): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
  metadata: {
    namespace: 'a', name: 's-abc', uid: 'slu', resourceVersion: '6',
    labels: { 'kubernetes.io/service-name': 's', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' },
  },
  addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }],
} as unknown as KubeObject);

const zoneOf = (o: KubeObject) => o.metadata?.labels?.['topology.kubernetes.io/zone'];

test.each([
  ['endpointPod', ENDPOINT_POD_FIELDS, (o: KubeObject) => endpointPod(o, 'z1'), richPod],
  ['the pods-by-node index', ENDPOINT_POD_FIELDS, PODS_BY_NODE.keys, richPod],
  ['serviceView', SERVICE_VIEW_FIELDS, serviceView, richService],
  ['the Services-by-selector index', SERVICE_VIEW_FIELDS, SERVICES_BY_SELECTOR_PAIR.keys, richService],
  ['a Node\'s zone', METADATA, zoneOf, richNode],
  ['hasSelector', MIRRORING_SERVICE_FIELDS, hasSelector, richService],
  ['mirrorable', METADATA, mirrorable, richEndpoints],
  ['sliceInfo', METADATA, sliceInfo, richSlice],
] as Array<[string, FieldMask, (o: KubeObject) => unknown, () => KubeObject]>)('%s reads nothing its mask drops', (_name, mask, read, fixture) => {
  const full = read(fixture());
  expect(full).toBeDefined();
  expect(read(prune(fixture(), mask) as KubeObject)).toEqual(full);
});

test('the fixtures exercise what they should (sidecar ports, dual-stack IPs, a full Service)', () => {
  const p = endpointPod(richPod(), 'z1');
  expect(p.ports.map((x) => x.containerPort)).toEqual([8080, 53, 9090]);
  expect(p.ips).toEqual(['10.0.0.2', '10.0.0.1', 'fd00::1']);
  expect(p).toMatchObject({ hostname: 'h', subdomain: 'sub', restartPolicy: 'OnFailure', ready: true, readyTransitionTime: '2026-01-01T00:00:03Z', deletionTimestamp: expect.any(String) });
  expect(serviceView(richService())).toMatchObject({ trafficDistribution: 'PreferClose', publishNotReadyAddresses: true, type: 'NodePort', clusterIP: '10.96.0.10' });
  expect(mirrorable(richEndpoints())).toBe(false);
  expect(sliceInfo(richSlice())).toEqual({ key: 'a/s', name: 's-abc' });
});

test('the masks drop what no reader needs', () => {
  const pod = prune(richPod(), ENDPOINT_POD_FIELDS) as { spec: Record<string, unknown>; status: Record<string, unknown> };
  expect(Object.keys(pod.spec).sort()).toEqual(['containers', 'hostname', 'initContainers', 'nodeName', 'restartPolicy', 'subdomain']);
  expect(pod.spec.containers).toEqual([{ ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }] }]);
  expect(Object.keys(pod.status).sort()).toEqual(['conditions', 'phase', 'podIP', 'podIPs']);
  const svc = prune(richService(), SERVICE_VIEW_FIELDS) as { spec: Record<string, unknown>; status?: unknown };
  expect(svc.status).toBeUndefined();
  expect(svc.spec.sessionAffinity).toBeUndefined();
});

test('both families share one store per resource, holding the union of what they read', () => {
  const both = (ctx: RouteContext) => {
    serviceEndpointsRoutes(ctx);
    mirroringRoutes(ctx);
    return {};
  };
  const { cache, h } = routeHarness(both, { controllers: ['endpoint', 'endpointslice', 'endpointslicemirroring'] });
  expect(cache.paths.sort()).toEqual(['/api/v1/endpoints', '/api/v1/nodes', '/api/v1/pods', '/api/v1/services', '/apis/discovery.k8s.io/v1/endpointslices']);
  h(RESOURCES.services).relisted([richService()]);
  h(RESOURCES.endpoints).relisted([richEndpoints()]);
  const [svc] = [...cache.store(RESOURCES.services)!.list()];
  expect(svc).toEqual(prune(richService(), unionMask(METADATA, SERVICE_VIEW_FIELDS)));
  expect([...cache.store(RESOURCES.endpoints)!.list()]).toEqual([prune(richEndpoints(), METADATA)]);
});
