import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import {
  SelectorParseError, apiGroupList, apiResourceList, customValue, externalValues, listMetricValues, listPodMetrics, nodeMetrics,
  parseSelector, parseWindow, podCustomMetricNames, podUsage, route, selectorMatches, toLabelSelector,
} from '../../starter/local/metrics/logic';
import { wiringObjects } from '../../starter/local/metrics/wiring';

const now = new Date('2026-11-25T03:00:00.123Z');

function pod(name: string, opts: { ann?: Record<string, string>; labels?: Record<string, string>; phase?: string; node?: string; containers?: string[]; ns?: string } = {}): V1Pod {
  return {
    metadata: { name, namespace: opts.ns ?? 'default', labels: opts.labels, annotations: opts.ann },
    spec: { nodeName: opts.node ?? 'n1', containers: (opts.containers ?? ['main']).map((c) => ({ name: c })) },
    status: { phase: opts.phase ?? 'Running' },
  };
}

describe('label selector strings', () => {
  test.each([
    ['', {}, true],
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'web' }, true],
    ['app=web', { app: 'db' }, false],
    ['app!=web', {}, true],
    ['app!=web', { app: 'web' }, false],
    ['tier in (a, b),app', { tier: 'b', app: 'x' }, true],
    ['tier in (a,b)', { tier: 'c' }, false],
    ['tier notin (a,b)', {}, true],
    ['!canary', { canary: '1' }, false],
    ['!canary', {}, true],
    ['example.com/x', { 'example.com/x': '' }, true],
    ['gen>2', { gen: '3' }, true],
    ['gen<2', { gen: '3' }, false],
    ['app=web,tier=front', { app: 'web' }, false],
  ])('%j on %j -> %s', (sel, labels, want) => {
    expect(selectorMatches(parseSelector(sel), labels)).toBe(want);
  });

  test.each(['app in (x', 'app=', 'a,,b', '=x', 'gen>x', 'app=web!'])('%j is refused', (sel) => {
    if (sel === 'app=') {
      // an empty value is allowed (labels may be empty strings)
      expect(parseSelector(sel)).toEqual([{ key: 'app', op: 'in', values: [''] }]);
      return;
    }
    expect(() => parseSelector(sel)).toThrow(SelectorParseError);
  });

  test('as a metav1.LabelSelector', () => {
    expect(toLabelSelector(parseSelector(''))).toBeNull();
    expect(toLabelSelector(parseSelector('a=b,c in (d,e),!f'))).toEqual({
      matchLabels: { a: 'b' },
      matchExpressions: [{ key: 'c', operator: 'In', values: ['d', 'e'] }, { key: 'f', operator: 'DoesNotExist' }],
    });
  });
});

describe('pod usage from annotations', () => {
  test('pod-level cpu and memory apply to each container, canonical', () => {
    const u = podUsage(pod('p', { ann: { 'metrics.temporal-kcm.io/cpu': '0.15', 'metrics.temporal-kcm.io/memory': '67108864' }, containers: ['a', 'b'] }));
    expect(u.containers).toEqual([
      { name: 'a', usage: { cpu: '150m', memory: '67108864' } },
      { name: 'b', usage: { cpu: '150m', memory: '67108864' } },
    ]);
    expect(u.window).toBe('15s');
  });

  test('the containers annotation overrides per container; unnamed resources report 0', () => {
    const u = podUsage(pod('p', {
      ann: { 'metrics.temporal-kcm.io/cpu': '100m', 'metrics.temporal-kcm.io/containers': '{"b":{"cpu":"1","memory":"64Mi"},"gone":{"cpu":"5"}}' },
      containers: ['a', 'b'],
    }));
    expect(u.containers).toEqual([
      { name: 'a', usage: { cpu: '100m', memory: '0' } },
      { name: 'b', usage: { cpu: '1', memory: '64Mi' } },
    ]);
  });

  test('the window annotation sets the reported window (whole seconds, printed as Go does)', () => {
    const ann = { 'metrics.temporal-kcm.io/cpu': '1', 'metrics.temporal-kcm.io/window': '1s' };
    expect(podUsage(pod('p', { ann })).window).toBe('1s');
    expect(podUsage(pod('p', { ann: { 'metrics.temporal-kcm.io/cpu': '1' } })).window).toBe('15s');
    expect(listPodMetrics([pod('p', { ann })], 'default', [], now)[0].window).toBe('1s');
    expect(parseWindow('90s')).toBe('1m30s');
    expect(parseWindow('3600s')).toBe('1h0m0s');
    for (const bad of ['0s', '1.5s', '5', '3601s', 'soon']) expect(parseWindow(bad)).toBeUndefined();
    expect(podUsage(pod('p', { ann: { ...ann, 'metrics.temporal-kcm.io/window': '5m' } })).error).toContain('window');
  });

  test('no annotation, or not Running: no metrics yet', () => {
    expect(podUsage(pod('p'))).toEqual({});
    expect(podUsage(pod('p', { ann: { 'metrics.temporal-kcm.io/cpu': '1' }, phase: 'Pending' }))).toEqual({});
  });

  test.each([
    [{ 'metrics.temporal-kcm.io/cpu': 'lots' }, 'is not a quantity'],
    [{ 'metrics.temporal-kcm.io/memory': '-1Mi' }, 'negative'],
    [{ 'metrics.temporal-kcm.io/containers': '{' }, 'not JSON'],
    [{ 'metrics.temporal-kcm.io/containers': '{"a":{"gpu":"1"}}' }, 'unknown resource gpu'],
    [{ 'metrics.temporal-kcm.io/containers': '[1]' }, 'want'],
  ])('malformed %j: skipped with a reason', (ann, msg) => {
    const u = podUsage(pod('p', { ann, containers: ['a'] }));
    expect(u.containers).toBeUndefined();
    expect(u.error).toContain(msg);
  });
});

describe('PodMetrics and NodeMetrics', () => {
  const pods = [
    pod('b', { ann: { 'metrics.temporal-kcm.io/cpu': '200m' }, labels: { app: 'web' }, node: 'n1' }),
    pod('a', { ann: { 'metrics.temporal-kcm.io/cpu': '100m', 'metrics.temporal-kcm.io/memory': '1Gi' }, labels: { app: 'web' }, node: 'n1' }),
    pod('c', { ann: { 'metrics.temporal-kcm.io/cpu': '1' }, labels: { app: 'db' }, node: 'n2' }),
    pod('d', { labels: { app: 'web' } }),
    pod('e', { ann: { 'metrics.temporal-kcm.io/cpu': '1' }, labels: { app: 'web' }, ns: 'other' }),
  ];

  test('a list: reporting pods of the namespace matching the selector, sorted, as metrics-server shapes them', () => {
    const items = listPodMetrics(pods, 'default', parseSelector('app=web'), now);
    expect(items).toEqual([
      {
        metadata: { name: 'a', namespace: 'default', labels: { app: 'web' }, creationTimestamp: '2026-11-25T03:00:00Z' },
        timestamp: '2026-11-25T03:00:00Z', window: '15s',
        containers: [{ name: 'main', usage: { cpu: '100m', memory: '1Gi' } }],
      },
      {
        metadata: { name: 'b', namespace: 'default', labels: { app: 'web' }, creationTimestamp: '2026-11-25T03:00:00Z' },
        timestamp: '2026-11-25T03:00:00Z', window: '15s',
        containers: [{ name: 'main', usage: { cpu: '200m', memory: '0' } }],
      },
    ]);
    expect(listPodMetrics(pods, undefined, [], now).map((p) => `${p.metadata.namespace}/${p.metadata.name}`))
      .toEqual(['default/a', 'default/b', 'default/c', 'other/e']);
  });

  test('a node reports the sum of its reporting pods, 0 when none', () => {
    const n1: V1Node = { metadata: { name: 'n1', labels: { zone: 'a' } } };
    expect(nodeMetrics(n1, pods, now)).toEqual({
      metadata: { name: 'n1', labels: { zone: 'a' }, creationTimestamp: '2026-11-25T03:00:00Z' },
      timestamp: '2026-11-25T03:00:00Z', window: '15s', usage: { cpu: '1300m', memory: '1Gi' }, // pods of every namespace
    });
    expect(nodeMetrics({ metadata: { name: 'n9' } }, pods, now).usage).toEqual({ cpu: '0', memory: '0' });
  });
});

describe('custom metrics', () => {
  const ann = (v: string) => ({ 'custom.metrics.temporal-kcm.io/rps': v });

  test('values of the annotated objects matching the selector, with the metric selector echoed', () => {
    const pods = [pod('x', { ann: ann('1.5'), labels: { app: 'web' } }), pod('y', { labels: { app: 'web' } }), pod('z', { ann: ann('3'), labels: { app: 'db' } })];
    expect(listMetricValues(pods, { kind: 'Pod', apiVersion: 'v1' }, 'rps', parseSelector('app=web'), parseSelector('verb=GET'), now)).toEqual([{
      describedObject: { kind: 'Pod', namespace: 'default', name: 'x', apiVersion: 'v1' },
      metric: { name: 'rps', selector: { matchLabels: { verb: 'GET' } } },
      timestamp: '2026-11-25T03:00:00Z', windowSeconds: 15, value: '1500m',
    }]);
  });

  test('a missing annotation is no value; a malformed one is an error', () => {
    expect(customValue({ metadata: { name: 'd' } }, 'rps')).toBeUndefined();
    expect(() => customValue({ metadata: { name: 'd', annotations: ann('fast') } }, 'rps')).toThrow('is not a quantity');
  });

  test('discovery lists the pod metrics seen', () => {
    expect(podCustomMetricNames([pod('x', { ann: { ...ann('1'), 'custom.metrics.temporal-kcm.io/queue': '2', 'other/x': '1' } }), pod('y', { ann: ann('1') })]))
      .toEqual(['queue', 'rps']);
    expect(apiResourceList('custom.metrics.k8s.io', ['rps']).resources).toEqual([
      { name: 'pods/rps', singularName: '', namespaced: true, kind: 'MetricValueList', verbs: ['get'] },
    ]);
  });
});

describe('external metrics', () => {
  const cm = (data: Record<string, string>): V1ConfigMap => ({ metadata: { name: 'temporal-kcm-external-metrics' }, data });

  test('a plain quantity: one value without labels', () => {
    expect(externalValues(cm({ depth: '2500m' }), 'depth', [], now)).toEqual([
      { metricName: 'depth', metricLabels: {}, timestamp: '2026-11-25T03:00:00Z', window: 15, value: '2500m' },
    ]);
  });

  test('a JSON array: the values whose labels match', () => {
    const data = { jobs: '[{"labels":{"queue":"a"},"value":"3"},{"labels":{"queue":"b"},"value":1.5},{"value":"7"}]' };
    expect(externalValues(cm(data), 'jobs', parseSelector('queue=b'), now)?.map((v) => [v.metricLabels, v.value])).toEqual([[{ queue: 'b' }, '1500m']]);
    expect(externalValues(cm(data), 'jobs', [], now)?.map((v) => v.value)).toEqual(['3', '1500m', '7']);
    // a selector requiring a label excludes an unlabelled plain value
    expect(externalValues(cm({ d: '1' }), 'd', parseSelector('queue=a'), now)).toEqual([]);
  });

  test('absent ConfigMap or key: undefined; malformed: an error', () => {
    expect(externalValues(undefined, 'x', [], now)).toBeUndefined();
    expect(externalValues(cm({}), 'x', [], now)).toBeUndefined();
    expect(() => externalValues(cm({ x: 'many' }), 'x', [], now)).toThrow(SelectorParseError);
    expect(() => externalValues(cm({ x: '[{"value":"zz"}]' }), 'x', [], now)).toThrow('not a quantity');
  });
});

describe('routes', () => {
  test.each([
    ['/healthz', { kind: 'health' }],
    ['/readyz', { kind: 'health' }],
    ['/openapi/v2', { kind: 'openapi-v2' }],
    ['/apis', { kind: 'apis' }],
    ['/apis/metrics.k8s.io', { kind: 'group', group: 'metrics.k8s.io' }],
    ['/apis/metrics.k8s.io/v1beta1', { kind: 'discovery', group: 'metrics.k8s.io', version: 'v1beta1' }],
    ['/apis/metrics.k8s.io/v1beta1/pods', { kind: 'pod-metrics', name: undefined }],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods', { kind: 'pod-metrics', namespace: 'ns', name: undefined }],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p', { kind: 'pod-metrics', namespace: 'ns', name: 'p' }],
    ['/apis/metrics.k8s.io/v1beta1/nodes/n', { kind: 'node-metrics', name: 'n' }],
    ['/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/rps', { kind: 'custom', namespace: 'ns', resource: 'pods', name: '*', metric: 'rps' }],
    ['/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/deployments.apps/web/rps', { kind: 'custom', namespace: 'ns', resource: 'deployments.apps', name: 'web', metric: 'rps' }],
    ['/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/metrics/rps', { kind: 'custom', resource: 'metrics', name: 'ns', metric: 'rps' }],
    ['/apis/custom.metrics.k8s.io/v1beta2/nodes/n1/rps', { kind: 'custom', resource: 'nodes', name: 'n1', metric: 'rps' }],
    ['/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue', { kind: 'external', namespace: 'ns', metric: 'queue' }],
    ['/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/*/rps', { kind: 'not-found' }],
    ['/api/v1/pods', { kind: 'not-found' }],
  ])('%s', (p, want) => {
    expect(route(p)).toEqual(want);
  });

  test('the group list names the three group-versions', () => {
    expect(apiGroupList().groups.map((g) => g.preferredVersion.groupVersion))
      .toEqual(['metrics.k8s.io/v1beta1', 'custom.metrics.k8s.io/v1beta2', 'external.metrics.k8s.io/v1beta1']);
    expect(apiResourceList('metrics.k8s.io').resources.map((r) => [r.name, r.kind, r.namespaced]))
      .toEqual([['nodes', 'NodeMetrics', false], ['pods', 'PodMetrics', true]]);
  });
});

describe('wiring objects', () => {
  test('a selectorless Service, an EndpointSlice no controller manages, three APIServices with the CA', () => {
    const objs = wiringObjects({ namespace: 'kube-system', name: 'temporal-kcm-metrics', address: '192.0.2.2', port: 4443, caBundle: Buffer.from('PEM') });
    const svc = objs[0].body as { spec: { selector?: unknown; ports: Array<{ name: string; port: number }> } };
    expect(svc.spec.selector).toBeUndefined();
    expect(svc.spec.ports).toEqual([expect.objectContaining({ name: 'https', port: 443 })]);
    const slice = objs[1].body as { metadata: { labels: Record<string, string> }; endpoints: unknown[]; ports: unknown[] };
    expect(slice.metadata.labels['kubernetes.io/service-name']).toBe('temporal-kcm-metrics');
    expect(slice.metadata.labels['endpointslice.kubernetes.io/managed-by']).not.toMatch(/endpointslice(mirroring)?-controller\.k8s\.io/);
    expect(slice.endpoints).toEqual([{ addresses: ['192.0.2.2'], conditions: { ready: true, serving: true, terminating: false } }]);
    expect(slice.ports).toEqual([{ name: 'https', port: 4443, protocol: 'TCP' }]);
    expect(objs.slice(2).map((o) => o.path.split('/').pop())).toEqual(['v1beta1.metrics.k8s.io', 'v1beta2.custom.metrics.k8s.io', 'v1beta1.external.metrics.k8s.io']);
    for (const o of objs.slice(2)) {
      expect((o.body as { spec: { caBundle: string; service: unknown } }).spec).toEqual(expect.objectContaining({
        caBundle: Buffer.from('PEM').toString('base64'), service: { namespace: 'kube-system', name: 'temporal-kcm-metrics', port: 443 },
      }));
    }
  });
});
