import { ApiError } from '../../activities/kube/rest';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { cleanNamespace, listPods, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';

/** ResourceQuota status as upstream's controller keeps it, and the API server enforcing it. */
const rest = testRest(testClusterAccess());
let manager: ManagerProcess;
let ns: string;

interface Quota { metadata: { name: string }; status?: { hard?: Record<string, string>; used?: Record<string, string> } }
const quotaPath = (name = '') => `/api/v1/namespaces/${ns}/resourcequotas${name ? `/${name}` : ''}`;
const getQuota = async (name: string) => (await rest.request<Quota>('GET', quotaPath(name))).body;

function pod(name: string, cpu: string, memory: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'quota' } },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/q:1', resources: { requests: { cpu, memory }, limits: { cpu, memory } } }] } };
}

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'quota');
  manager = await startManagerProcess(uniqueName('quota-e2e'), ['--controllers', 'resourcequota', '--resource-quota-sync-period', '30s']);
});

afterAll(async () => {
  await manager?.kill();
  if (ns) await cleanNamespace(rest, ns);
});

test('status.used equals a recount after a burst of creates and deletes', async () => {
  await rest.request('POST', quotaPath(), { body: { metadata: { name: 'all' }, spec: { hard: {
    pods: '100', configmaps: '200', 'count/secrets': '100', 'requests.cpu': '20', 'requests.memory': '20Gi', 'limits.cpu': '40', 'limits.memory': '40Gi',
    services: '10', 'services.nodeports': '5',
  } } } });
  await eventually('status filled', async () => (await getQuota('all')).status?.used?.pods === '0', 20_000);

  // a burst: 30 ConfigMaps, 20 pods, 3 Secrets, 2 Services (one NodePort) at once; then delete some
  await Promise.all([
    ...Array.from({ length: 30 }, (_, i) => rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `cm-${i}` } } })),
    ...Array.from({ length: 20 }, (_, i) => rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(`p-${i}`, '100m', '64Mi') })),
    ...Array.from({ length: 3 }, (_, i) => rest.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { metadata: { name: `s-${i}` } } })),
    rest.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } } }),
    rest.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } } }),
  ]);
  await Promise.all([
    ...Array.from({ length: 12 }, (_, i) => rest.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/cm-${i}`)),
    ...Array.from({ length: 7 }, (_, i) => rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/p-${i}`, { body: { gracePeriodSeconds: 0 } })),
    rest.request('DELETE', `/api/v1/namespaces/${ns}/secrets/s-0`),
    rest.request('DELETE', `/api/v1/namespaces/${ns}/services/svc`),
  ]);
  await eventually('deleted pods gone', async () => (await listPods(rest, ns)).length === 13, 30_000);

  // the recount, by listing what is there
  const count = async (res: string) => (await rest.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/${res}`)).body.items.length;
  const pods = (await listPods(rest, ns)).length;
  const want = {
    pods: String(pods), configmaps: String(await count('configmaps')), 'count/secrets': String(await count('secrets')),
    'requests.cpu': `${pods * 100}m`, 'requests.memory': `${pods * 64}Mi`, 'limits.cpu': `${pods * 100}m`, 'limits.memory': `${pods * 64}Mi`,
    services: '1', 'services.nodeports': '1',
  };
  expect(want.pods).toBe('13');
  await eventually(`used = ${JSON.stringify(want)}`, async () => JSON.stringify((await getQuota('all')).status?.used) === JSON.stringify(sorted(want)), 30_000);
  const status = (await getQuota('all')).status!;
  expect(status.hard).toEqual({ pods: '100', configmaps: '200', 'count/secrets': '100', 'requests.cpu': '20', 'requests.memory': '20Gi',
    'limits.cpu': '40', 'limits.memory': '40Gi', services: '10', 'services.nodeports': '5' });
});

test('an exceeded quota makes creation fail at the API server', async () => {
  const have = (await rest.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`)).body.items.length;
  await rest.request('POST', quotaPath(), { body: { metadata: { name: 'tight' }, spec: { hard: { 'count/configmaps': String(have) } } } });
  // admission refuses everything the quota covers until the controller has set status.hard
  await eventually('tight status', async () => (await getQuota('tight')).status?.used?.['count/configmaps'] === String(have), 20_000);
  const err = await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'one-too-many' } } }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(403);
  expect((err as ApiError).serverMessage).toContain('exceeded quota: tight');

  // room again after a delete, once the controller has released the usage
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/cm-29`);
  await eventually('usage released', async () => (await getQuota('tight')).status?.used?.['count/configmaps'] === String(have - 1), 20_000);
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'fits-now' } } });
});

test('count/deployments.apps goes down within seconds of a delete, as upstream\'s quota monitors make it', async () => {
  await rest.request('POST', quotaPath(), { body: { metadata: { name: 'apps' }, spec: { hard: { 'count/deployments.apps': '10' } } } });
  const used = async () => (await getQuota('apps')).status?.used?.['count/deployments.apps'];
  await eventually('apps status', async () => (await used()) === '0', 20_000);
  const t0 = Date.now();
  const deployment = (name: string) => ({ metadata: { name }, spec: { replicas: 0, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/q:1' }] } } } });
  for (const name of ['d1', 'd2']) await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deployment(name) });
  await eventually('charged at admission', async () => (await used()) === '2', 10_000);
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/d1`);
  await eventually('released after the delete', async () => (await used()) === '1', 15_000);
  // the quota's full recount comes 30 s after its last one: only a watch of Deployments can have done this
  expect(Date.now() - t0).toBeLessThan(25_000);
});

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
}
