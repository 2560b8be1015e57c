import { Client } from '@temporalio/client';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { mergePatch, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';

/**
 * `kubectl delete namespace` as upstream's namespace controller carries it out: content deleted,
 * conditions on the way, the `kubernetes` finalizer removed; durable across a manager restart.
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('ns-e2e');
const args = ['--controllers', 'namespace', '--namespace-sync-period', '5s', '--resync-backoff-max', '5s', '--kube-api-qps', '200', '--kube-api-burst', '400'];
let manager: ManagerProcess;
const tag = uniqueName('nsdel');
const group = `${tag}.temporal-kcm.dev`;
const crdName = `widgets.${group}`;

interface Condition { type: string; status: string; reason?: string; message?: string }
interface Ns { metadata: { uid: string }; status?: { phase?: string; conditions?: Condition[] } }

beforeAll(async () => {
  manager = await startManagerProcess(taskQueue, args);
  await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crdName },
    spec: { group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  } });
  await eventually('CRD established', async () => {
    const c = (await rest.request<{ status?: { conditions?: Condition[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`)).body;
    return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
  }, 30_000);
});

afterAll(async () => {
  await manager?.kill();
  await rest.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`).catch(() => undefined);
});

test('a namespace with pods, services, configmaps, secrets and custom resources is emptied and removed; a restart mid-way resumes, not restarts', async () => {
  const ns = await freshNamespace(testClusterAccess(), 'nsdel');
  const post = (path: string, body: unknown) => rest.request('POST', `/api/v1/namespaces/${ns}/${path}`, { body });
  const widgets = `/apis/${group}/v1/namespaces/${ns}/widgets`;
  await Promise.all([
    ...[0, 1].map((i) => post('pods', { metadata: { name: `p-${i}` }, spec: { containers: [{ name: 'c', image: 'registry.invalid/p:1' }] } })),
    post('services', { metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } }),
    ...[0, 1, 2].map((i) => post('configmaps', { metadata: { name: `cm-${i}` } })),
    ...[0, 1].map((i) => post('secrets', { metadata: { name: `s-${i}` } })),
    rest.request('POST', widgets, { body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'free' } } }),
    // a finalizer nobody removes yet: the deletion must wait for it, durably
    rest.request('POST', widgets, { body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'held', finalizers: ['temporal-kcm.dev/hold'] } } }),
  ]);

  await rest.request('DELETE', `/api/v1/namespaces/${ns}`);
  const seen = new Map<string, Condition>();
  await eventually('finalizers-remaining condition', async () => {
    const n = (await rest.request<Ns>('GET', `/api/v1/namespaces/${ns}`)).body;
    expect(n.status?.phase).toBe('Terminating');
    for (const c of n.status?.conditions ?? []) if (c.status === 'True') seen.set(c.type, c);
    return seen.has('NamespaceFinalizersRemaining') && seen.has('NamespaceContentRemaining');
  }, 60_000);
  expect(seen.get('NamespaceFinalizersRemaining')?.message).toContain('temporal-kcm.dev/hold');
  expect(seen.get('NamespaceContentRemaining')?.message).toContain(`widgets.${group}`);
  const conditions = (await rest.request<Ns>('GET', `/api/v1/namespaces/${ns}`)).body.status?.conditions ?? [];
  expect(conditions.map((c) => c.type).sort()).toEqual(['NamespaceContentRemaining', 'NamespaceDeletionContentFailure', 'NamespaceDeletionDiscoveryFailure',
    'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceFinalizersRemaining']);

  // everything without a finalizer is gone; only the held widget remains
  const count = async (p: string) => (await rest.request<{ items: unknown[] }>('GET', p)).body.items.length;
  await eventually('content but the held widget gone', async () => (await Promise.all(['pods', 'services', 'configmaps', 'secrets']
    .map((r) => count(`/api/v1/namespaces/${ns}/${r}`)))).every((n) => n === 0) && (await count(widgets)) === 1, 60_000);

  // restart the manager while the deletion waits, then let the widget go
  await manager.kill('SIGKILL');
  manager = await startManagerProcess(taskQueue, args);
  await new Promise((r) => setTimeout(r, 2000));
  await mergePatch(rest, `${widgets}/held`, { metadata: { finalizers: null } });
  await eventually('namespace gone', () => rest.request('GET', `/api/v1/namespaces/${ns}`).then(() => false, () => true), 90_000);

  // the history shows each resource emptied once: the work after the restart picked up where it was
  const deletes = new Map<string, number>();
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    for await (const wf of client.workflow.list({ query: `WorkflowId = 'namespace/${ns}'` })) {
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      for (const e of history.events ?? []) {
        const a = e.activityTaskScheduledEventAttributes;
        if (a?.activityType?.name !== 'deleteNamespaceContent') continue;
        const input = JSON.parse(Buffer.from(a.input!.payloads![0].data!).toString()) as { resource: { group: string; resource: string } };
        const key = `${input.resource.resource}.${input.resource.group}`;
        deletes.set(key, (deletes.get(key) ?? 0) + 1);
      }
    }
  } finally {
    await connection.close();
  }
  expect(deletes.get('configmaps.')).toBe(1);
  expect(deletes.get('secrets.')).toBe(1);
  expect(deletes.get('pods.')).toBeGreaterThanOrEqual(1);
  expect(deletes.get(`widgets.${group}`)).toBeGreaterThanOrEqual(2);
});
