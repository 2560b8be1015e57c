import * as fs from 'node:fs';
import * as path from 'node:path';
import { proxiedKubeconfig, startFaultProxy, type FaultProxy, type ObjectRewrite } from '../../chaos/proxy';
import { pkiPaths } from '../../starter/local/pki';
import { readState } from '../../starter/local/stack';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { cleanNamespace, eventsFor, listPods, mergePatch, testRest } from '../support/kube';
import { ManagerProcess, managerKubeconfig, metricValue, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * An object the controller's own code throws on costs that object, and nothing else. The API
 * server's validation lets no such object in, so the manager under test meets one through the
 * chaos suite's proxy, which alters objects on their way to the manager. Everything else passes
 * as it is, and kubectl (this test) talks to the API server directly.
 * - A ReplicaSet, in lists, watch events and reads: its selector's matchExpressions becomes a
 *   number, which the replicaset routes cannot iterate. It exists before the manager starts, so
 *   its first list meets it. Before the informer kept a route's throw to its object, that list
 *   failed and was retried for ever, and no ReplicaSet in the cluster was reconciled again.
 * - A Job, in reads of it alone: the routes (lists and watches) see it as it is and start its
 *   workflow, whose observing activity reads it and meets the same bad selector. Before an
 *   activity's own code throwing failed for good, that was retried as a passing failure and never
 *   reported.
 */
const rest = testRest(testClusterAccess());
let proxy: FaultProxy;
let manager: ManagerProcess;
let ns: string;

const rsPath = (name?: string) => `/apis/apps/v1/namespaces/${ns}/replicasets${name ? `/${name}` : ''}`;
const replicaSet = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
  spec: {
    replicas, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }], terminationGracePeriodSeconds: 0 } },
  },
});
interface RsStatus { status?: { replicas?: number; readyReplicas?: number } }
const converged = (name: string, n: number) => eventually(`${name} at ${n} ready`, async () => {
  const rs = (await rest.request<RsStatus>('GET', rsPath(name))).body;
  const pods = await listPods(rest, ns, `app=${name}`);
  return pods.length === n && rs.status?.replicas === n && rs.status?.readyReplicas === n ? true : undefined;
}, 60_000, 500);

const jobPath = (name?: string) => `/apis/batch/v1/namespaces/${ns}/jobs${name ? `/${name}` : ''}`;
const job = (name: string) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'registry.invalid/job:1' }], terminationGracePeriodSeconds: 0 } } },
});
interface JobStatus { status?: { succeeded?: number; conditions?: Array<{ type: string; status: string }> } }
const completed = (name: string) => eventually(`${name} complete`, async () => {
  const j = (await rest.request<JobStatus>('GET', jobPath(name))).body;
  return j.status?.succeeded === 1 && j.status.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? true : undefined;
}, 60_000, 500);

/** The bad ReplicaSet, as only the manager sees it. */
const poisonReplicaSet: ObjectRewrite = (o, requestPath) => {
  const m = o.metadata as { name?: string; namespace?: string } | undefined;
  if (!requestPath.includes('/replicasets') || m?.name !== 'poison' || (m.namespace && m.namespace !== ns)) return;
  const spec = o.spec as { selector?: Record<string, unknown> } | undefined;
  if (spec?.selector) spec.selector.matchExpressions = 5;
};
/** The bad Job, in a read of it alone: a list or a watch has the collection's path. */
const poisonJob: ObjectRewrite = (o, requestPath) => {
  if (requestPath !== jobPath('poison-job')) return;
  const spec = o.spec as { selector?: Record<string, unknown> } | undefined;
  if (spec?.selector) spec.selector.matchExpressions = 5;
};

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'poison');
  // an orphan pod: the routes match every ReplicaSet's selector against it
  await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
    metadata: { name: 'stray', labels: { app: 'stray' } },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }], terminationGracePeriodSeconds: 0 },
  } });
  await rest.request('POST', rsPath(), { body: replicaSet('poison', 1) });
  await rest.request('POST', rsPath(), { body: replicaSet('healthy', 2) });
  await rest.request('POST', jobPath(), { body: job('poison-job') });
  await rest.request('POST', jobPath(), { body: job('healthy') });

  const state = readState(TEST_DATA_DIR)!;
  const pki = pkiPaths(TEST_DATA_DIR);
  const own = pki.client('kube-controller-manager');
  proxy = await startFaultProxy({
    targetPort: state.ports.apiserver, servingCert: pki.apiserverCert, servingKey: pki.apiserverKey, ca: pki.caCert,
    clientCert: own.cert, clientKey: own.key, plan: { rate: 0, watchCutMinMs: 0, watchCutMaxMs: 0 }, random: Math.random, rewrite: (o, requestPath) => { poisonReplicaSet(o, requestPath); poisonJob(o, requestPath); },
  });
  const kubeconfig = path.join(TEST_DATA_DIR, `poison-${proxy.port}.kubeconfig`);
  fs.writeFileSync(kubeconfig, proxiedKubeconfig(managerKubeconfig(), proxy.port), { mode: 0o600 });
  manager = await startManagerProcess(uniqueName('poison'), [], { controllers: 'replicaset,job', kubeconfig });
});

afterAll(async () => {
  await manager?.kill();
  await proxy?.close();
  if (ns) await cleanNamespace(rest, ns);
});

test('a ReplicaSet the routes throw on: the others converge, it gets Warning ReconcileError, and it converges once it can be read', async () => {
  await converged('healthy', 2);
  // one made after it, through the watch
  await rest.request('POST', rsPath(), { body: replicaSet('later', 1) });
  await converged('later', 1);

  const [report] = await eventually('Warning ReconcileError on the bad ReplicaSet', async () => {
    const evs = (await eventsFor(rest, ns, 'poison', 'ReconcileError')).filter((e) => e.type === 'Warning');
    return evs.length ? evs : undefined;
  }, 30_000, 500);
  expect(report.message).toMatch(/^the replicaset controller threw (routing a change of it|reconciling it) and retries with backoff: .*iterable/);
  expect(metricValue(await manager.metrics(), 'kcm_controller_throws_total', { controller: 'replicaset' })).toBeGreaterThanOrEqual(1);
  expect(await listPods(rest, ns, 'app=poison')).toEqual([]);
  // the orphan was left alone: no selector that matches it
  expect((await listPods(rest, ns, 'app=stray')).map((p) => p.metadata?.ownerReferences ?? [])).toEqual([[]]);

  // the manager sees it as it is from now on; a change of it brings it in
  proxy.setRewrite(poisonJob);
  await mergePatch(rest, rsPath('poison'), { metadata: { annotations: { touched: '1' } } });
  await converged('poison', 1);
}, 150_000);

test('a Job its observing activity throws on: the other completes, it gets Warning ReconcileError naming the activity, and it completes once it can be read', async () => {
  await completed('healthy');
  const [report] = await eventually('Warning ReconcileError on the bad Job', async () => {
    const evs = (await eventsFor(rest, ns, 'poison-job', 'ReconcileError')).filter((e) => e.type === 'Warning');
    return evs.length ? evs : undefined;
  }, 30_000, 500);
  expect(report.message).toMatch(/^the job controller threw in an activity for it and retries with backoff: observeJob: TypeError: .*iterable/);
  const metrics = await manager.metrics();
  expect(metricValue(metrics, 'kcm_controller_throws_total', { controller: 'job', stage: 'activity' })).toBeGreaterThanOrEqual(1);
  // failed for good at once, not retried by Temporal as a passing failure
  expect(metricValue(metrics, 'kcm_activity_errors_total', { activity: 'observeJob', reason: 'ActivityCodeThrew' })).toBeGreaterThanOrEqual(1);
  expect(await listPods(rest, ns, 'job-name=poison-job')).toEqual([]);

  proxy.setRewrite(undefined);
  await mergePatch(rest, jobPath('poison-job'), { metadata: { annotations: { touched: '1' } } });
  await completed('poison-job');
}, 150_000);
