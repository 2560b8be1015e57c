import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { cleanNamespace, eventsFor, listPods, testRest } from '../support/kube';
import { ManagerProcess, metricValue, startManagerProcess } from '../support/manager';

/**
 * A controller that lacks a right says so. kubeadm's manager runs every controller as its own
 * ServiceAccount; here the StatefulSet controller runs with the manager's own identity instead
 * (`--use-service-account-credentials=false`), whose upstream role reads everything (by list) but
 * may not create ControllerRevisions or pods: the create is refused by the authorizer, and that must show on the object
 * (a Warning Event), in Temporal (KcmLastError) and in the metrics, not only as a silent backoff.
 */
const rest = testRest(testClusterAccess());
let manager: ManagerProcess;
let client: Client;
let ns: string;

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'forbidden');
  client = new TemporalClient({ connection: await testTemporalConnection() });
  // the refusal under test needs the manager's own identity for the controller's writes
  manager = await startManagerProcess(uniqueName('forbidden'), ['--use-service-account-credentials=false'], { controllers: 'statefulset-controller' });
});

afterAll(async () => {
  await manager?.kill();
  if (ns) {
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/statefulsets/web`).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});

test('a write the authorizer refuses: Warning Event Forbidden, KcmLastError, kcm_api_forbidden_total, and nothing made', async () => {
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/statefulsets`, { body: {
    metadata: { name: 'web' },
    spec: { replicas: 1, serviceName: 'web', selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/web:1' }] } } },
  } });

  // the StatefulSet was read (by list, the manager's role) and its revision decided on: its first
  // write, the ControllerRevision's create, is what is refused
  const [forbidden] = await eventually('Warning Forbidden on the StatefulSet', async () => {
    const evs = (await eventsFor(rest, ns, 'web', 'Forbidden')).filter((e) => e.type === 'Warning');
    return evs.length ? evs : undefined;
  }, 60_000, 500);
  expect(forbidden.message).toBe(`controllerrevisions.apps is forbidden: User "system:kube-controller-manager" cannot create resource "controllerrevisions" in API group "apps" in the namespace "${ns}"`);

  const failing = await eventually('KcmLastError set', async () => {
    const ids: string[] = [];
    for await (const w of client.workflow.list({ query: `KcmLastError IS NOT NULL AND KcmNamespace='${ns}' AND ExecutionStatus='Running'` })) ids.push(w.workflowId);
    return ids.length ? ids : undefined;
  }, 30_000, 1000);
  expect(failing).toEqual([`statefulset/${ns}/web`]);
  const memo = (await client.workflow.getHandle(`statefulset/${ns}/web`).describe()).memo as { LastError?: string } | undefined;
  expect(memo?.LastError).toContain(forbidden.message);

  expect(metricValue(await manager.metrics(), 'kcm_api_forbidden_total', { client: 'statefulset-controller', verb: 'POST', resource: 'controllerrevisions' })).toBeGreaterThanOrEqual(1);
  // a refusal is never a read's: the manager's reads stay within its role
  expect(metricValue(await manager.metrics(), 'kcm_api_forbidden_total', { verb: 'GET' })).toBe(0);
  expect(await listPods(rest, ns)).toEqual([]);

  // the Temporal SDK's own metrics are on the same page, after ours: workflow tasks ran, none failed
  const text = await manager.metrics();
  expect(metricValue(text, 'temporal_workflow_task_execution_latency_count')).toBeGreaterThanOrEqual(1);
  expect(metricValue(text, 'temporal_workflow_task_execution_failed')).toBe(0);
  // one exposition: no family declared twice, every sample line well formed
  const types = text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]);
  expect(types.filter((t, i) => types.indexOf(t) !== i)).toEqual([]);
  expect(text.split('\n').filter((l) => l && !l.startsWith('#') && !/^[a-zA-Z_:][\w:]*(\{.*\})?\s+\S+(\s+\d+)?$/.test(l))).toEqual([]);
}, 120_000);
