import { formatQuantity } from '../../workflows/common/quantity';
import { planQuotaStatus } from '../../workflows/resourcequota/logic';
import type { ContainerLike, PodLike, PvcLike, QuotaSpecLike, QuotaView, ServiceLike } from '../../workflows/resourcequota/types';
import {
  calculateUsage,
  countedGroupResource,
  isBestEffort,
  isExtendedResourceName,
  podEvaluatorMatches,
  podLimits,
  podRequests,
  pvcEvaluatorMatches,
  quotaListings,
  quotaV1Pod,
  trackedKinds,
} from '../../workflows/resourcequota/usage';

const NOW = Date.parse('2025-06-01T12:00:00Z');

function container(name: string, requests?: Record<string, string>, limits?: Record<string, string>, restartPolicy?: string): ContainerLike {
  return { name, resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...(restartPolicy ? { restartPolicy } : {}) };
}

function pod(containers: ContainerLike[], extra: { init?: ContainerLike[]; spec?: PodLike['spec']; status?: PodLike['status']; metadata?: PodLike['metadata'] } = {}): PodLike {
  return {
    metadata: { name: 'p', ...extra.metadata },
    spec: { containers, initContainers: extra.init ?? [], ...extra.spec },
    status: { phase: 'Running', ...extra.status },
  };
}

const list = (m: Map<string, import('../../workflows/common/quantity').Quantity>) =>
  Object.fromEntries([...m].map(([k, q]) => [k, formatQuantity(q)]));

const usage = (hard: string[], objects: Parameters<typeof calculateUsage>[1], spec: Omit<QuotaSpecLike, 'hard'> = {}) =>
  calculateUsage({ ...spec, hard: Object.fromEntries(hard.map((h) => [h, '100'])) }, objects, NOW);

describe('pod requests and limits (PodRequests / PodLimits)', () => {
  test('regular containers add up; a limit counts only where set', () => {
    const p = pod([container('a', { cpu: '100m', memory: '128Mi' }, { cpu: '200m', memory: '256Mi' }), container('b', { cpu: '250m', memory: '64Mi' })]);
    expect(list(podRequests(p))).toEqual({ cpu: '350m', memory: '192Mi' });
    expect(list(podLimits(p))).toEqual({ cpu: '200m', memory: '256Mi' });
  });

  test('a classic init container runs alone: the pod needs the larger of it and the app', () => {
    const p = pod([container('app', { cpu: '500m', memory: '100Mi' })], { init: [container('init', { cpu: '2', memory: '50Mi' })] });
    expect(list(podRequests(p))).toEqual({ cpu: '2', memory: '100Mi' });
  });

  test('sidecars add to the app and to every later init container', () => {
    const sidecarFirst = pod([container('app', { cpu: '500m' })], {
      init: [container('sidecar', { cpu: '100m' }, undefined, 'Always'), container('init', { cpu: '1' })],
    });
    // app 500m + sidecar 100m = 600m; init runs next to the sidecar: 1 + 100m = 1100m
    expect(list(podRequests(sidecarFirst))).toEqual({ cpu: '1100m' });

    const initFirst = pod([container('app', { cpu: '500m' })], {
      init: [container('init', { cpu: '1' }), container('sidecar', { cpu: '100m' }, undefined, 'Always')],
    });
    expect(list(podRequests(initFirst))).toEqual({ cpu: '1' });

    const smallInit = pod([container('app', { cpu: '1' })], {
      init: [container('sidecar', { cpu: '200m', memory: '1Gi' }, { memory: '2Gi' }, 'Always'), container('init', { cpu: '100m' })],
    });
    expect(list(podRequests(smallInit))).toEqual({ cpu: '1200m', memory: '1Gi' });
    expect(list(podLimits(smallInit))).toEqual({ memory: '2Gi' });
  });

  test('overhead adds to requests, and to limits only where one is set and non-zero', () => {
    const p = pod([container('app', { cpu: '1' }, { cpu: '2' })], { spec: { overhead: { cpu: '250m', memory: '120Mi' } } });
    expect(list(podRequests(p))).toEqual({ cpu: '1250m', memory: '120Mi' });
    expect(list(podLimits(p))).toEqual({ cpu: '2250m' });
  });

  test('pod-level resources override the containers for cpu, memory and hugepages', () => {
    const p = pod([container('app', { cpu: '100m', 'ephemeral-storage': '1Gi' }, { cpu: '100m' })], {
      spec: { resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2' } } },
    });
    expect(list(podRequests(p))).toEqual({ cpu: '1', memory: '1Gi', 'ephemeral-storage': '1Gi' });
    expect(list(podLimits(p))).toEqual({ cpu: '2' });
  });

  test('in-place resize: the larger of spec, allocated and actual; after an infeasible resize only the latter', () => {
    const status = (requests: Record<string, string>, allocated: Record<string, string>) => ({
      containerStatuses: [{ name: 'app', allocatedResources: allocated, resources: { requests, limits: { cpu: '3' } } }],
    });
    const shrinking = pod([container('app', { cpu: '500m' }, { cpu: '1' })], { status: status({ cpu: '1' }, { cpu: '500m' }) });
    expect(list(podRequests(shrinking))).toEqual({ cpu: '1' });
    expect(list(podLimits(shrinking))).toEqual({ cpu: '3' });

    const infeasible = pod([container('app', { cpu: '2' }, { cpu: '8' })], {
      status: { ...status({ cpu: '1' }, { cpu: '1' }), conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }] },
    });
    expect(list(podRequests(infeasible))).toEqual({ cpu: '1' });
    expect(list(podLimits(infeasible))).toEqual({ cpu: '3' });

    // no status resources yet (not started): the spec alone
    const pending = pod([container('app', { cpu: '2' })], { status: { containerStatuses: [{ name: 'app' }] } });
    expect(list(podRequests(pending))).toEqual({ cpu: '2' });
  });

  test('classic init containers never read their status; sidecars do', () => {
    const p = pod([], {
      init: [container('init', { cpu: '100m' }), container('side', { cpu: '100m' }, undefined, 'Always')],
      status: {
        initContainerStatuses: [
          { name: 'init', resources: { requests: { cpu: '5' } } },
          { name: 'side', resources: { requests: { cpu: '300m' } } },
        ],
      },
    });
    expect(list(podRequests(p))).toEqual({ cpu: '300m' });
  });
});

describe('which pods are charged (QuotaV1Pod)', () => {
  test('terminal pods are not', () => {
    expect(quotaV1Pod(pod([], { status: { phase: 'Succeeded' } }), NOW)).toBe(false);
    expect(quotaV1Pod(pod([], { status: { phase: 'Failed' } }), NOW)).toBe(false);
    expect(quotaV1Pod(pod([], { status: { phase: 'Pending' } }), NOW)).toBe(true);
  });

  test('a pod past its deletion grace period is not; one within it still is', () => {
    const deleted = (agoS: number, grace: number) => pod([], { metadata: { deletionTimestamp: new Date(NOW - agoS * 1000).toISOString(), deletionGracePeriodSeconds: grace } });
    expect(quotaV1Pod(deleted(60, 30), NOW)).toBe(false);
    expect(quotaV1Pod(deleted(10, 30), NOW)).toBe(true);
    expect(quotaV1Pod(deleted(30, 30), NOW)).toBe(true); // exactly at the deadline: still charged
    expect(quotaV1Pod(pod([], { metadata: { deletionTimestamp: new Date(NOW - 600_000).toISOString() } }), NOW)).toBe(true); // no grace given
  });
});

describe('pod evaluator', () => {
  const hard = ['pods', 'count/pods', 'cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory', 'requests.ephemeral-storage', 'limits.ephemeral-storage', 'ephemeral-storage'];

  test('sums compute resources of live pods; count/pods counts every pod', () => {
    const pods = [
      pod([container('a', { cpu: '100m', memory: '128Mi' }, { cpu: '200m', memory: '256Mi' })]),
      pod([container('a', { cpu: '250m', memory: '64Mi', 'ephemeral-storage': '1Gi' }, { 'ephemeral-storage': '2Gi' })]),
      pod([container('a', { cpu: '4', memory: '4Gi' })], { status: { phase: 'Succeeded' } }),
      pod([container('a', { cpu: '4' })], { metadata: { deletionTimestamp: new Date(NOW - 120_000).toISOString(), deletionGracePeriodSeconds: 30 } }),
    ];
    const r = usage(hard, { pods });
    expect(r.errors).toEqual([]);
    expect(r.used).toEqual({
      pods: '2',
      'count/pods': '4',
      cpu: '350m',
      'requests.cpu': '350m',
      memory: '192Mi',
      'requests.memory': '192Mi',
      'limits.cpu': '200m',
      'limits.memory': '256Mi',
      'ephemeral-storage': '1Gi',
      'requests.ephemeral-storage': '1Gi',
      'limits.ephemeral-storage': '2Gi',
    });
  });

  test('an empty namespace uses zero of everything it tracks', () => {
    expect(usage(['pods', 'requests.cpu'], { pods: [] }).used).toEqual({ pods: '0', 'requests.cpu': '0' });
  });

  test('totals print in the format of the first pod that charged something', () => {
    const two = (a: string, b: string) => usage(['requests.memory'], { pods: [pod([container('a', { memory: a })]), pod([container('a', { memory: b })])] }).used['requests.memory'];
    expect(two('1Gi', '1G')).toBe('2073741824');
    expect(two('1G', '1Gi')).toBe('2073741824');
    expect(two('0', '1G')).toBe('1G');
    expect(two('512Mi', '512Mi')).toBe('1Gi');
    expect(two('1500M', '500M')).toBe('2G');
  });

  test('hugepages and extended resources are charged from requests', () => {
    const p = pod([container('a', { 'hugepages-2Mi': '4Mi', 'nvidia.com/gpu': '2', cpu: '1' }, { 'hugepages-2Mi': '4Mi', 'nvidia.com/gpu': '2' })]);
    const r = usage(['hugepages-2Mi', 'requests.hugepages-2Mi', 'requests.nvidia.com/gpu', 'limits.nvidia.com/gpu'], { pods: [p, p] });
    // limits.<extended> is not something quota tracks
    expect(r.used).toEqual({ 'hugepages-2Mi': '8Mi', 'requests.hugepages-2Mi': '8Mi', 'requests.nvidia.com/gpu': '4' });
  });

  test('a pod waiting out its deletion grace asks for a recheck when it stops counting', () => {
    const dying = pod([container('a', { cpu: '1' })], { metadata: { deletionTimestamp: new Date(NOW - 10_000).toISOString(), deletionGracePeriodSeconds: 30 } });
    const r = usage(['pods'], { pods: [dying, pod([])] });
    expect(r.used).toEqual({ pods: '2' });
    expect(r.recheckAfterMs).toBe(20_001);
    expect(usage(['pods'], { pods: [pod([])] }).recheckAfterMs).toBeUndefined();
  });

  test('resource names the pod evaluator answers for', () => {
    for (const n of ['pods', 'count/pods', 'cpu', 'limits.memory', 'hugepages-1Gi', 'requests.hugepages-2Mi', 'requests.example.com/gpu', 'requests.deviceclass.resource.kubernetes.io/gpu'])
      expect([n, podEvaluatorMatches(n)]).toEqual([n, true]);
    for (const n of ['limits.example.com/gpu', 'example.com/gpu', 'requests.storage', 'services', 'requests.kubernetes.io/foo', 'count/services'])
      expect([n, podEvaluatorMatches(n)]).toEqual([n, false]);
    expect(isExtendedResourceName('example.com/gpu')).toBe(true);
    expect(isExtendedResourceName('kubernetes.io/foo')).toBe(false);
    expect(isExtendedResourceName('cpu')).toBe(false);
    expect(isExtendedResourceName('requests.example.com/gpu')).toBe(false);
  });
});

describe('scopes', () => {
  const bestEffort = pod([container('a')], { status: { qosClass: 'BestEffort' } });
  const burstable = pod([container('a', { cpu: '100m' })], { status: { qosClass: 'Burstable' } });
  const terminating = pod([container('a', { cpu: '1' })], { spec: { activeDeadlineSeconds: 0 } });
  const withClass = (c: string | undefined) => pod([container('a', { cpu: '1' })], { spec: c === undefined ? {} : { priorityClassName: c } });
  const pods = (...ps: PodLike[]) => ({ pods: ps });

  test('BestEffort / NotBestEffort', () => {
    expect(usage(['pods'], pods(bestEffort, burstable), { scopes: ['BestEffort'] }).used).toEqual({ pods: '1' });
    expect(usage(['pods', 'requests.cpu'], pods(bestEffort, burstable), { scopes: ['NotBestEffort'] }).used).toEqual({ pods: '1', 'requests.cpu': '100m' });
  });

  test('QoS falls back to the spec when the status has none: cpu or memory anywhere, or pod-level', () => {
    expect(isBestEffort(pod([container('a'), container('b', { 'ephemeral-storage': '1Gi' })]))).toBe(true);
    expect(isBestEffort(pod([container('a')], { init: [container('i', undefined, { memory: '1Gi' })] }))).toBe(false);
    expect(isBestEffort(pod([container('a', { cpu: '0' })]))).toBe(true);
    expect(isBestEffort(pod([container('a', { cpu: '1' })], { spec: { resources: {} } }))).toBe(true);
    expect(isBestEffort(pod([container('a')], { spec: { resources: { limits: { memory: '1Gi' } } } }))).toBe(false);
    // the recorded class wins
    expect(isBestEffort(pod([container('a', { cpu: '1' })], { status: { qosClass: 'BestEffort' } }))).toBe(true);
  });

  test('Terminating / NotTerminating (an active deadline, zero included)', () => {
    expect(usage(['pods'], pods(terminating, burstable), { scopes: ['Terminating'] }).used).toEqual({ pods: '1' });
    expect(usage(['pods'], pods(terminating, burstable, bestEffort), { scopes: ['NotTerminating'] }).used).toEqual({ pods: '2' });
  });

  test('several scopes must all hold', () => {
    expect(usage(['pods'], pods(terminating, burstable, bestEffort), { scopes: ['NotTerminating', 'BestEffort'] }).used).toEqual({ pods: '1' });
  });

  test('PriorityClass with In, NotIn, Exists, DoesNotExist', () => {
    const all = pods(withClass('high'), withClass('low'), withClass(undefined), withClass(''));
    const sel = (operator: string, values?: string[]) => ({ scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, ...(values ? { values } : {}) }] } });
    expect(usage(['pods'], all, sel('In', ['high'])).used).toEqual({ pods: '1' });
    expect(usage(['pods'], all, sel('In', ['high', 'low'])).used).toEqual({ pods: '2' });
    expect(usage(['pods'], all, sel('NotIn', ['high'])).used).toEqual({ pods: '3' });
    expect(usage(['pods'], all, sel('Exists')).used).toEqual({ pods: '2' });
    expect(usage(['pods'], all, sel('DoesNotExist')).used).toEqual({ pods: '2' });
    // spec.scopes PriorityClass reads as Exists
    expect(usage(['pods'], all, { scopes: ['PriorityClass'] }).used).toEqual({ pods: '2' });
  });

  test('a selector upstream cannot parse fails the pod evaluator only', () => {
    const svc: ServiceLike = { spec: { type: 'ClusterIP', ports: [{}] } };
    const r = calculateUsage({ hard: { pods: '10', services: '10' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [] }] } },
      { pods: [withClass('high')], services: [svc] }, NOW);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^pods: /);
    // a scoped quota never counts non-pod objects
    expect(r.used).toEqual({ services: '0' });
    const bad = calculateUsage({ hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] }] } }, { pods: [withClass('x')] }, NOW);
    expect(bad.used).toEqual({});
    expect(bad.errors[0]).toMatch(/not a valid scope selector operator/);
  });

  test('CrossNamespacePodAffinity: terms naming namespaces or a namespace selector', () => {
    const aff = (affinity: NonNullable<PodLike['spec']>['affinity']) => pod([container('a')], { spec: { affinity } });
    const ps = pods(
      aff({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: ['other'] }] } }),
      aff({ podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ podAffinityTerm: { namespaceSelector: {} } }] } }),
      aff({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: [] }] } }),
      aff({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaceSelector: null }] } }),
      pod([container('a')]),
    );
    expect(usage(['pods'], ps, { scopes: ['CrossNamespacePodAffinity'] }).used).toEqual({ pods: '2' });
  });
});

describe('services, claims and object counts', () => {
  test('services: node ports for NodePort and LoadBalancer, load balancers for LoadBalancer', () => {
    const services: ServiceLike[] = [
      { spec: { type: 'ClusterIP', ports: [{}, {}] } },
      { spec: { type: 'NodePort', ports: [{}, {}, {}] } },
      { spec: { type: 'LoadBalancer', ports: [{}, {}] } },
      { spec: {} },
    ];
    expect(usage(['services', 'count/services', 'services.nodeports', 'services.loadbalancers'], { services }).used)
      .toEqual({ services: '4', 'count/services': '4', 'services.nodeports': '5', 'services.loadbalancers': '1' });
    expect(usage(['services.nodeports'], { services: [{ spec: { type: 'ClusterIP', ports: [{}] } }] }).used).toEqual({ 'services.nodeports': '0' });
  });

  test('claims: storage by request (whole bytes), per storage class, the beta annotation first', () => {
    const claims: PvcLike[] = [
      { spec: { storageClassName: 'gold', resources: { requests: { storage: '1Gi' } } } },
      { metadata: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'silver' } }, spec: { storageClassName: 'gold', resources: { requests: { storage: '500Mi' } } } },
      { spec: { resources: { requests: { storage: '1.5' } } } },
      { spec: { storageClassName: 'gold' } },
    ];
    const r = usage([
      'persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage',
      'gold.storageclass.storage.k8s.io/requests.storage', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
      'silver.storageclass.storage.k8s.io/requests.storage', 'bronze.storageclass.storage.k8s.io/persistentvolumeclaims',
    ], { persistentvolumeclaims: claims });
    expect(r.used).toEqual({
      persistentvolumeclaims: '4',
      'count/persistentvolumeclaims': '4',
      // 1Gi + 500Mi + 2 bytes, printed in the first claim's (binary) format: not a whole Ki, so plain
      'requests.storage': '1598029826',
      'gold.storageclass.storage.k8s.io/requests.storage': '1Gi',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '2',
      'silver.storageclass.storage.k8s.io/requests.storage': '500Mi',
      'bronze.storageclass.storage.k8s.io/persistentvolumeclaims': '0',
    });
  });

  test('a claim allocated more than it asks for (expansion being recovered) is charged the allocation', () => {
    const grown: PvcLike = { spec: { resources: { requests: { storage: '1Gi' } } }, status: { allocatedResources: { storage: '2Gi' } } };
    const shrunk: PvcLike = { spec: { resources: { requests: { storage: '3Gi' } } }, status: { allocatedResources: { storage: '2Gi' } } };
    expect(usage(['requests.storage'], { persistentvolumeclaims: [grown] }).used).toEqual({ 'requests.storage': '2Gi' });
    expect(usage(['requests.storage'], { persistentvolumeclaims: [shrunk] }).used).toEqual({ 'requests.storage': '3Gi' });
    expect(pvcEvaluatorMatches('x.storageclass.storage.k8s.io/requests.storage')).toBe(true);
    expect(pvcEvaluatorMatches('x.storageclass.storage.k8s.io/limits.storage')).toBe(false);
  });

  test('object counts under their legacy alias and count/<resource>[.<group>]', () => {
    const r = usage(['configmaps', 'count/configmaps', 'secrets', 'count/deployments.apps', 'count/jobs.batch', 'resourcequotas'],
      { counts: { configmaps: 4, secrets: 0, 'deployments.apps': 2, resourcequotas: 1 } });
    // jobs were not counted (unknown to discovery, or not asked): left as the status has them
    expect(r.used).toEqual({ configmaps: '4', 'count/configmaps': '4', secrets: '0', 'count/deployments.apps': '2', resourcequotas: '1' });
    expect(usage(['count/widgets.example.com'], { counts: { 'widgets.example.com': 1500 } }).used).toEqual({ 'count/widgets.example.com': '1500' });
    expect(usage(['count/deployments.apps'], { counts: { 'deployments.apps': 3 } }, { scopes: ['BestEffort'] }).used).toEqual({ 'count/deployments.apps': '0' });
  });

  test('count names: who owns which', () => {
    expect(countedGroupResource('count/pods')).toBeUndefined();
    expect(countedGroupResource('count/services')).toBeUndefined();
    expect(countedGroupResource('count/persistentvolumeclaims')).toBeUndefined();
    expect(countedGroupResource('count/events')).toBeUndefined();
    expect(countedGroupResource('secrets')).toBe('secrets');
    expect(countedGroupResource('count/secrets')).toBe('secrets');
    expect(countedGroupResource('count/serviceaccounts')).toBe('serviceaccounts');
    expect(countedGroupResource('count/cronjobs.batch')).toBe('cronjobs.batch');
    expect(countedGroupResource('cpu')).toBeUndefined();
    expect(countedGroupResource('foo')).toBeUndefined();
  });
});

describe('what to read and whom to nudge', () => {
  const hard = ['pods', 'requests.cpu', 'services.nodeports', 'requests.storage', 'configmaps', 'count/secrets', 'count/deployments.apps', 'foo'];

  test('trackedKinds lists the watched kinds that move the usage', () => {
    expect(trackedKinds(hard).sort()).toEqual(['configmaps', 'persistentvolumeclaims', 'pods', 'secrets', 'services']);
    expect(trackedKinds(['resourcequotas', 'count/replicationcontrollers']).sort()).toEqual(['replicationcontrollers', 'resourcequotas']);
    expect(trackedKinds(['count/deployments.apps', 'foo'])).toEqual([]);
  });

  test('a full recount reads everything; a nudge only what its kinds feed', () => {
    expect(quotaListings(hard)).toEqual({ pods: true, services: true, persistentvolumeclaims: true, counts: ['configmaps', 'deployments.apps', 'secrets'] });
    expect(quotaListings(hard, ['pods'])).toEqual({ pods: true, services: false, persistentvolumeclaims: false, counts: [] });
    expect(quotaListings(hard, ['secrets', 'services'])).toEqual({ pods: false, services: true, persistentvolumeclaims: false, counts: ['secrets'] });
    expect(quotaListings(['cpu'], ['services'])).toEqual({ pods: false, services: false, persistentvolumeclaims: false, counts: [] });
  });
});

describe('status decision (syncResourceQuota)', () => {
  const quota = (q: Partial<QuotaView>): QuotaView => ({ namespace: 'ns', name: 'q', uid: 'u', resourceVersion: '7', hard: {}, ...q });

  test('first sync writes hard and used', () => {
    const p = planQuotaStatus(quota({ hard: { pods: '10', cpu: '2' } }), { pods: '3', cpu: '1500m' });
    expect(p).toMatchObject({ write: true, hard: { pods: '10', cpu: '2' }, used: { pods: '3', cpu: '1500m' } });
    expect(p.reason).toContain('used.pods set to 3');
  });

  test('no write when status already says the same amounts, whatever the spelling', () => {
    const p = planQuotaStatus(quota({ hard: { cpu: '2', memory: '1Gi' }, statusHard: { cpu: '2000m', memory: '1024Mi' }, statusUsed: { cpu: '1', memory: '512Mi' } }),
      { cpu: '1000m', memory: '0.5Gi' });
    expect(p.write).toBe(false);
    expect(p.reason).toBe('');
  });

  test('a changed spec.hard is mirrored, and a resource dropped from it leaves used', () => {
    const p = planQuotaStatus(quota({ hard: { pods: '5' }, statusHard: { pods: '10', cpu: '2' }, statusUsed: { pods: '3', cpu: '1' } }), { pods: '3' });
    expect(p).toMatchObject({ write: true, hard: { pods: '5' }, used: { pods: '3' } });
    expect(p.reason).toContain('hard.pods 10 -> 5');
    expect(p.reason).toContain('used.cpu dropped');
  });

  test('resources not recounted keep their stored usage; ones nobody can count stay absent', () => {
    const p = planQuotaStatus(quota({ hard: { pods: '5', secrets: '9', foo: '1' }, statusHard: { pods: '5', secrets: '9', foo: '1' }, statusUsed: { pods: '1', secrets: '4' } }),
      { pods: '2' });
    expect(p).toMatchObject({ write: true, used: { pods: '2', secrets: '4' } });
    expect(p.used).not.toHaveProperty('foo');
  });

  test('an empty quota never needs a write', () => {
    expect(planQuotaStatus(quota({}), {}).write).toBe(false);
  });
});
