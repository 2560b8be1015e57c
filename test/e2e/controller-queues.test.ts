import { Client, Connection } from '@temporalio/client';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { LOCAL_ACTIVITY_MARKER } from '../../workflows/runtime/local-io';
import { informerWorkflow, legacyInformerWorkflowId } from '../../workflows/informer';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { ManagerProcess, metricValue, pidOfIdentity, startManagerProcess } from '../support/manager';
import { cleanNamespace, controllerUid, listPods, testRest } from '../support/kube';

/**
 * Each controller has its own task queue. Replicas started with different --controllers split the
 * controllers between them with no leader election; workflows a build before per-controller queues
 * left on the base queue move to their controller's queue.
 */
const rest = testRest(testClusterAccess());
const managers: ManagerProcess[] = [];
let ns: string;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'queues');
  connection = await testTemporalConnection();
  client = new Client({ connection });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.kill()));
  if (ns) await cleanNamespace(rest, ns);
  await connection?.close();
});

/**
 * Worker identities (`<host>-<pid>`) that ran this workflow's API calls over its current run: those
 * that started its activities, and those that completed a workflow task recording a local activity
 * (the replicaset and deployment controllers call the API from local activities, run by the worker
 * of the task that asks for them).
 */
async function activityWorkerPids(workflowId: string): Promise<Set<number>> {
  const pids = new Set<number>();
  const add = (identity: string | null | undefined) => {
    const pid = pidOfIdentity(identity);
    if (pid !== undefined) pids.add(pid);
  };
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const taskCompletedBy = new Map<string, string | null | undefined>();
  for (const e of events) {
    add(e.activityTaskStartedEventAttributes?.identity);
    if (e.workflowTaskCompletedEventAttributes) taskCompletedBy.set(String(e.eventId), e.workflowTaskCompletedEventAttributes.identity);
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER) add(taskCompletedBy.get(String(marker.workflowTaskCompletedEventId)));
  }
  return pids;
}

const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } });

test('a replica with --controllers=endpointslice and one with *,-endpointslice split the work between them', async () => {
  const taskQueue = uniqueName('split');
  const slices = await startManagerProcess(taskQueue, [], { controllers: 'endpointslice' });
  const rest_ = await startManagerProcess(taskQueue, [], { controllers: '*,-endpointslice' });
  managers.push(slices, rest_);
  try {

    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template('web') } },
    });
    await rest.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
    });
    // the Deployment's pods exist (the other replica's deployment and replicaset controllers) and the
    // EndpointSlice lists both (this replica's endpointslice controller)
    await eventually('EndpointSlice with both pods ready', async () => {
      const list = await rest.request<{ items: Array<{ endpoints?: Array<{ conditions?: { ready?: boolean } }> }> }>(
        'GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=web')}`);
      const ready = list.body.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length;
      return ready === 2 ? true : undefined;
    }, 60_000);

    const sliceWf = await client.workflow.getHandle(`endpointslice/${ns}/web`).describe();
    expect(sliceWf.taskQueue).toBe(`${taskQueue}/endpointslice`);
    expect([...(await activityWorkerPids(`endpointslice/${ns}/web`))]).toEqual([slices.pid]);
    const deployWf = await client.workflow.getHandle(`deployment/${ns}/web`).describe();
    expect(deployWf.taskQueue).toBe(`${taskQueue}/deployment`);
    expect([...(await activityWorkerPids(`deployment/${ns}/web`))]).toEqual([rest_.pid]);

    // each replica reconciled only its own controllers (a reconcile is counted when it ends, which
    // may be after the writes a test sees)
    const reconciles = async (m: ManagerProcess, controller: string) => metricValue(await m.metrics(), 'kcm_reconciles_total', { controller });
    await eventually('reconciles counted on both replicas', async () =>
      (await reconciles(slices, 'endpointslice')) > 0 && (await reconciles(rest_, 'deployment')) > 0 ? true : undefined, 30_000);
    expect(await reconciles(slices, 'deployment')).toBe(0);
    expect(await reconciles(rest_, 'endpointslice')).toBe(0);

  } finally {
    // another deployment's replicas would watch and signal this namespace's objects too
    await Promise.all([slices.kill(), rest_.kill()]);
  }
});

test('an upgrade with workflows running on the base queue: they finish their work there and move to their controller queue', async () => {
  const taskQueue = uniqueName('upgrade');
  const rs = (await rest.request<{ metadata: { uid: string } }>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    body: { metadata: { name: 'legacy' }, spec: { replicas: 3, selector: { matchLabels: { app: 'legacy' } }, template: template('legacy') } },
  })).body;
  // What a build before per-controller queues left running: the object's workflow and the one
  // informer of every controller, both on the base queue.
  const workflowId = `replicaset/${ns}/legacy`;
  await client.workflow.signalWithStart(replicaOwnerWorkflow, {
    workflowId,
    taskQueue,
    args: [{ controller: 'replicaset', kind: 'ReplicaSet', namespace: ns, name: 'legacy', uid: rs.metadata.uid }],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [{ relist: true }],
  });
  const legacyRunId = (await client.workflow.getHandle(workflowId).describe()).runId;
  await client.workflow.start(informerWorkflow, {
    workflowId: legacyInformerWorkflowId(taskQueue),
    taskQueue,
    args: [{ controllers: ['replicaset'], heartbeatTimeoutMs: 15_000 }],
  });

  const manager = await startManagerProcess(taskQueue, [], { controllers: 'replicaset' });
  managers.push(manager);
  // the run started above, not one another replica's signal started first, is the one that moves
  expect((await client.workflow.getHandle(workflowId, legacyRunId).describe()).taskQueue).toBe(taskQueue);

  await eventually('3 pods of the legacy ReplicaSet', async () => {
    const pods = (await listPods(rest, ns, 'app=legacy')).filter((p) => controllerUid(p) === rs.metadata.uid && !p.metadata.deletionTimestamp);
    return pods.length === 3 ? pods : undefined;
  }, 60_000);
  const moved = await eventually('the workflow on its controller queue', async () => {
    const d = await client.workflow.getHandle(workflowId).describe();
    return d.taskQueue === `${taskQueue}/replicaset` && d.status.name === 'RUNNING' ? d : undefined;
  }, 60_000);
  expect(moved.runId).not.toBe(legacyRunId);
  const legacy = await client.workflow.getHandle(workflowId, legacyRunId).describe();
  expect(legacy.status.name).toBe('CONTINUED_AS_NEW');
  expect(legacy.taskQueue).toBe(taskQueue);

  // the old informer is stopped; the new one of this set runs
  const oldInformer = await client.workflow.getHandle(legacyInformerWorkflowId(taskQueue)).describe();
  expect(oldInformer.status.name).toBe('TERMINATED');

  // and the moved workflow keeps reconciling: a deleted pod is replaced
  const [victim] = await listPods(rest, ns, 'app=legacy');
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${victim.metadata.name}`);
  await eventually('replacement pod', async () => {
    const pods = (await listPods(rest, ns, 'app=legacy')).filter((p) => controllerUid(p) === rs.metadata.uid && !p.metadata.deletionTimestamp && p.metadata.name !== victim.metadata.name);
    return pods.length === 3 ? true : undefined;
  }, 60_000);
  await manager.kill();
});
