import * as fs from 'node:fs';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { aggregationPkiPaths, pkiPaths } from '../../starter/local/pki';
import { readPid } from '../../starter/local/processes';
import { readState } from '../../starter/local/stack';
import { eventually, freshNamespace, testClientNodeConfig } from '../support/cluster';
import { cleanNamespace, testRest } from '../support/kube';
import { kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * The local stack's metrics stand-in, read the way users and the HPA read it: through
 * kube-apiserver's aggregation layer (kubectl get --raw, kubectl top), with usage set by
 * annotations and a ConfigMap, and every answer following a change of them.
 */
const kc = testClientNodeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
let ns = '';

const raw = async <T>(path: string): Promise<T> => JSON.parse(await kubectl('get', '--raw', path)) as T;
const q = (s: string) => encodeURIComponent(s);

interface PodMetrics { metadata: { name: string; namespace: string }; window: string; containers: Array<{ name: string; usage: { cpu: string; memory: string } }> }
interface PodMetricsList { kind: string; items: PodMetrics[] }
interface MetricValueList { kind: string; items: Array<{ describedObject: { kind: string; name: string; namespace?: string; apiVersion: string }; metric: { name: string }; value: string }> }
interface ExternalList { kind: string; items: Array<{ metricName: string; metricLabels: Record<string, string>; value: string }> }

beforeAll(async () => {
  ns = await freshNamespace(kc, 'metrics');
});

afterAll(async () => {
  await cleanNamespace(testRest(kc), ns);
});

test('the three metrics APIs answer from annotations and a ConfigMap, and follow their changes', async () => {
  const apiservices = JSON.parse(await kubectl('get', 'apiservices', '-o', 'json')) as { items: Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string; status: string }> } }> };
  for (const name of ['v1beta1.metrics.k8s.io', 'v1beta2.custom.metrics.k8s.io', 'v1beta1.external.metrics.k8s.io']) {
    const s = apiservices.items.find((a) => a.metadata.name === name);
    expect(s?.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
  }

  await core.createNamespacedPod({ namespace: ns, body: {
    metadata: {
      name: 'web-1', labels: { app: 'web' },
      annotations: {
        'metrics.temporal-kcm.io/cpu': '150m',
        'metrics.temporal-kcm.io/memory': '64Mi',
        'metrics.temporal-kcm.io/containers': '{"side":{"cpu":"0.05"}}',
        'custom.metrics.temporal-kcm.io/requests-per-second': '12',
      },
    },
    spec: { containers: [{ name: 'main', image: 'busybox' }, { name: 'side', image: 'busybox' }] },
  } });
  await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'quiet', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
  await core.createNamespacedConfigMap({ namespace: ns, body: {
    metadata: { name: 'temporal-kcm-external-metrics' },
    data: { 'queue-depth': '30', jobs: '[{"labels":{"queue":"a"},"value":"3"},{"labels":{"queue":"b"},"value":"1.5"}]' },
  } });
  const node = await eventually('web-1 Running', async () => {
    const p = await core.readNamespacedPod({ namespace: ns, name: 'web-1' });
    return p.status?.phase === 'Running' && p.spec?.nodeName;
  }, 10_000, 100);

  // metrics.k8s.io: only the annotated Running pod reports; each container its usage
  const list = await eventually('web-1 in PodMetricsList', async () => {
    const l = await raw<PodMetricsList>(`/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods?labelSelector=${q('app=web')}`);
    return l.items.length ? l : undefined;
  }, 5000, 100);
  expect(list.kind).toBe('PodMetricsList');
  expect(list.items.map((i) => i.metadata.name)).toEqual(['web-1']);
  expect(list.items[0].window).toBe('15s');
  expect(list.items[0].containers).toEqual([
    { name: 'main', usage: { cpu: '150m', memory: '64Mi' } },
    { name: 'side', usage: { cpu: '50m', memory: '64Mi' } },
  ]);
  await expect(kubectl('get', '--raw', `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods/quiet`)).rejects.toThrow(/NotFound|not found/);
  expect((await kubectl('top', 'pod', '-n', ns, '--no-headers')).trim().split(/\s+/)).toEqual(['web-1', '200m', '128Mi']);
  const nodeLine = (await kubectl('top', 'node', node, '--no-headers')).trim().split(/\s+/);
  expect(nodeLine[0]).toBe(node);

  // custom.metrics.k8s.io: pods by selector, and one named object (the namespace's Service here)
  const rps = await raw<MetricValueList>(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${ns}/pods/*/requests-per-second?labelSelector=${q('app=web')}`);
  expect(rps.items.map((i) => [i.describedObject.kind, i.describedObject.name, i.metric.name, i.value])).toEqual([['Pod', 'web-1', 'requests-per-second', '12']]);
  await core.createNamespacedService({ namespace: ns, body: {
    metadata: { name: 'front', annotations: { 'custom.metrics.temporal-kcm.io/hits': '2500m' } },
    spec: { ports: [{ port: 80 }] },
  } });
  const hits = await raw<MetricValueList>(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${ns}/services/front/hits?metricLabelSelector=${q('verb=GET')}`);
  expect(hits.items.map((i) => [i.describedObject, i.value])).toEqual([[{ kind: 'Service', namespace: ns, name: 'front', apiVersion: 'v1' }, '2500m']]);

  // external.metrics.k8s.io: a plain value, and labelled values filtered by the selector
  const depth = await raw<ExternalList>(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${ns}/queue-depth`);
  expect(depth.items.map((i) => [i.metricName, i.metricLabels, i.value])).toEqual([['queue-depth', {}, '30']]);
  const jobs = await raw<ExternalList>(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${ns}/jobs?labelSelector=${q('queue=b')}`);
  expect(jobs.items.map((i) => [i.metricLabels, i.value])).toEqual([[{ queue: 'b' }, '1500m']]);

  // changes are seen on the next read
  await kubectl('annotate', '-n', ns, 'pod', 'web-1', '--overwrite', 'metrics.temporal-kcm.io/cpu=400m', 'metrics.temporal-kcm.io/window=2s',
    'custom.metrics.temporal-kcm.io/requests-per-second=30');
  await kubectl('patch', '-n', ns, 'configmap', 'temporal-kcm-external-metrics', '--type=merge', '-p', '{"data":{"queue-depth":"45"}}');
  await eventually('the new cpu annotation in kubectl top', async () =>
    (await kubectl('top', 'pod', '-n', ns, '--no-headers')).trim().split(/\s+/).join(' ') === 'web-1 450m 128Mi', 5000, 100);
  expect((await raw<PodMetrics>(`/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods/web-1`)).window).toBe('2s');
  const rps2 = await raw<MetricValueList>(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${ns}/pods/*/requests-per-second`);
  expect(rps2.items.map((i) => i.value)).toEqual(['30']);
  expect((await raw<ExternalList>(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${ns}/queue-depth`)).items[0].value).toBe('45');
  await expect(kubectl('get', '--raw', `/apis/external.metrics.k8s.io/v1beta1/namespaces/${ns}/nothing-here`)).rejects.toThrow(/NotFound|could not find/);
});

test('the stand-in accepts no caller but the aggregator (its front-proxy client certificate)', async () => {
  const state = readState(TEST_DATA_DIR)!;
  const bind = readPid(TEST_DATA_DIR, 'metrics-standin')?.args?.find((a) => a.startsWith('--bind-address='))?.split('=')[1];
  expect(bind).toBeDefined();
  const get = (cert: string, key: string) => new Promise<number>((resolve) => {
    const req = https.get({
      host: bind, port: state.ports.metricsStandin, path: '/apis/metrics.k8s.io/v1beta1/pods',
      ca: fs.readFileSync(pkiPaths(TEST_DATA_DIR).caCert), cert: fs.readFileSync(cert), key: fs.readFileSync(key),
      servername: 'temporal-kcm-metrics.kube-system.svc', timeout: 3000,
    }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', () => resolve(0));
  });
  const agg = aggregationPkiPaths(TEST_DATA_DIR);
  const admin = pkiPaths(TEST_DATA_DIR).client('admin');
  expect(await get(agg.frontProxyClientCert, agg.frontProxyClientKey)).toBe(200);
  expect(await get(admin.cert, admin.key)).toBe(0); // the TLS handshake fails: not signed by the front-proxy CA
});
