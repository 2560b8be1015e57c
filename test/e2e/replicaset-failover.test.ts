import { Client, Connection } from '@temporalio/client';
import { informerWorkflowId } from '../../workflows/informer';
import { stopProcess } from '../../starter/local/processes';
import { TEST_DATA_DIR } from '../support/stack';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { ManagerProcess, metricValue, pidWorkingOn, startManagerProcess } from '../support/manager';
import { PodObject, cleanNamespace, controllerUid, listPods, mergePatch, testRest } from '../support/kube';
import { podSummary, type KubeObject } from '../../activities/kube/projections';
import { choosePodsToDelete } from '../../workflows/replicaset/logic';
import { staleAttemptWrites } from '../../chaos/checks';
import { scaleToFence } from '../support/fencing';
import { up } from '../../starter/local/stack';

/**
 * Active-active replicas, no leader election: any replica may die at any moment, and the survivors
 * finish its work without duplicating it.
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('failover');
const managers: ManagerProcess[] = [];
let ns: string;
let connection: Connection;
let client: Client;

const ARGS = ['--informer-heartbeat-timeout', '3s', '--kube-api-qps', '50', '--kube-api-burst', '100'];

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'failover');
  managers.push(await startManagerProcess(taskQueue, ARGS), await startManagerProcess(taskQueue, ARGS));
  connection = await testTemporalConnection();
  client = new Client({ connection });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.kill()));
  if (ns) await cleanNamespace(rest, ns);
  await connection?.close();
});

const owned = (pods: PodObject[], uid: string) => pods.filter((p) => controllerUid(p) === uid && !p.metadata.deletionTimestamp);

test('kill -9 of the replica creating pods mid scale-up to 200: exactly 200 pods, none orphaned, resumed within seconds', async () => {
  const rs = (await rest.request<{ metadata: { uid: string } }>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    body: {
      metadata: { name: 'big' },
      spec: {
        replicas: 200,
        selector: { matchLabels: { app: 'big' } },
        template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } },
      },
    },
  })).body;
  const workflowId = `replicaset/${ns}/big`;

  // wait until the scale-up is well under way, then kill whichever replica runs the create batch
  // (a local activity: the replica with the workflow's open task)
  const { victim, atKill } = await eventually('scale-up under way with a createPods running', async () => {
    const count = owned(await listPods(rest, ns, 'app=big'), rs.metadata.uid).length;
    if (count < 15 || count >= 150) return undefined;
    const pid = await pidWorkingOn(client, workflowId);
    const m = managers.find((x) => x.pid === pid);
    return m ? { victim: m, atKill: count } : undefined;
  }, 60_000, 50);
  const killedAt = Date.now();
  await victim.kill('SIGKILL');

  let resumedAfterMs: number | undefined;
  await eventually('200 pods', async () => {
    const n = owned(await listPods(rest, ns, 'app=big'), rs.metadata.uid).length;
    if (resumedAfterMs === undefined && n > atKill) resumedAfterMs = Date.now() - killedAt;
    return n === 200;
  }, 120_000, 100);
  process.stderr.write(`failover: killed pid ${victim.pid} at ${atKill}/200 pods; creation resumed after ${resumedAfterMs} ms; done ${Date.now() - killedAt} ms after the kill\n`);

  // settle, then count again: nothing created twice, nothing left without its controller
  await new Promise((r) => setTimeout(r, 3000));
  const pods = await listPods(rest, ns, 'app=big');
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  expect(live).toHaveLength(200);
  expect(new Set(live.map((p) => p.metadata.uid)).size).toBe(200);
  expect(live.filter((p) => controllerUid(p) !== rs.metadata.uid)).toEqual([]);
  expect(pods.filter((p) => p.metadata.deletionTimestamp)).toEqual([]);
  expect(resumedAfterMs).toBeDefined();
  expect(resumedAfterMs!).toBeLessThan(30_000);
  const status = await eventually('status 200', async () => {
    const o = (await rest.request<{ status?: { replicas?: number; readyReplicas?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/big`)).body;
    return o.status?.replicas === 200 && o.status.readyReplicas === 200 ? o.status : undefined;
  });
  expect(status.replicas).toBe(200);
});

test('kill -9 of the replica holding the watch: another replica resumes it where it stood, and only the changes since are signalled', async () => {
  managers.push(await startManagerProcess(taskQueue, ARGS));
  // idle ReplicaSets whose workflows a fresh list would each signal again
  const IDLE = 20;
  for (let i = 0; i < IDLE; i++) {
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
      metadata: { name: `idle-${i}` },
      spec: { replicas: 0, selector: { matchLabels: { app: `idle-${i}` } }, template: { metadata: { labels: { app: `idle-${i}` } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } } },
    } });
  }
  await eventually('every idle ReplicaSet observed', async () => {
    const list = (await rest.request<{ items: Array<{ metadata: { name: string; generation?: number }; status?: { observedGeneration?: number } }> }>(
      'GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items.filter((r) => r.metadata.name.startsWith('idle-'));
    return list.length === IDLE && list.every((r) => r.status?.observedGeneration === r.metadata.generation);
  }, 60_000, 250);
  // the heartbeat carries a position once those signals have gone out (the worker sends the
  // newest details every third of the 3 s heartbeat timeout)
  await new Promise((r) => setTimeout(r, 4000));
  const holder = await eventually('informer activity running', async () => {
    const d = await client.workflow.getHandle(informerWorkflowId(taskQueue, ['replicaset', 'replicationcontroller'])).describe();
    const pid = Number(/-(\d+)$/.exec(d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '')?.[1]);
    return managers.find((m) => m.pid === pid && m.child.exitCode === null && m.child.signalCode === null);
  });
  const killedAt = Date.now();
  await holder.kill('SIGKILL');
  await mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/replicasets/big`, { spec: { replicas: 190 } });
  await eventually('scaled down to 190 through the new watch', async () => {
    const live = (await listPods(rest, ns, 'app=big')).filter((p) => !p.metadata.deletionTimestamp);
    return live.length === 190;
  }, 60_000, 100);
  const tookOver = await eventually('informer on a live replica', async () => {
    const d = await client.workflow.getHandle(informerWorkflowId(taskQueue, ['replicaset', 'replicationcontroller'])).describe();
    const pid = Number(/-(\d+)$/.exec(d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '')?.[1]);
    return pid !== holder.pid && managers.some((m) => m.pid === pid) ? pid : undefined;
  });
  process.stderr.write(`watch failover: pid ${holder.pid} killed; pid ${tookOver} holds the watch; scale-down done ${Date.now() - killedAt} ms after the kill\n`);
  // it listed where the killed holder stood, without signals, and watched from there: the
  // scale-down above came through that watch; the idle ReplicaSets heard nothing
  const next = managers.find((m) => m.pid === tookOver)!;
  const text = await next.metrics();
  expect(metricValue(text, 'kcm_informer_resumes_total', { resource: 'replicasets.apps', outcome: 'resumed' })).toBe(1);
  expect(metricValue(text, 'kcm_informer_resumes_total', { resource: 'pods', outcome: 'resumed' })).toBe(1);
  expect(metricValue(text, 'kcm_informer_resumes_total', { outcome: 'expired' })).toBe(0);
  const sent = metricValue(text, 'kcm_signals_sent_total', { controller: 'replicaset' });
  process.stderr.write(`watch failover: the new holder sent ${sent} replicaset signals for ${IDLE + 1} ReplicaSets\n`);
  expect(sent).toBeLessThan(IDLE / 2);
});

test('kill -9 of the replica holding the watch while it holds events: the next holder sends the full state first, and a scale-down ranks pods on what was held', async () => {
  managers.push(await startManagerProcess(taskQueue, ARGS));
  const name = 'ranked';
  const rs = (await rest.request<{ metadata: { uid: string } }>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
    metadata: { name },
    spec: { replicas: 3, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } } },
  } })).body;
  await eventually('3 ready pods in the status', async () => {
    const o = (await rest.request<{ metadata: { generation?: number }; status?: { readyReplicas?: number; observedGeneration?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`)).body;
    return o.status?.readyReplicas === 3 && o.status.observedGeneration === o.metadata.generation;
  }, 60_000, 250);
  const holderNow = async () => {
    const d = await client.workflow.getHandle(informerWorkflowId(taskQueue, ['replicaset', 'replicationcontroller'])).describe();
    const pid = Number(/-(\d+)$/.exec(d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '')?.[1]);
    return managers.find((m) => m.pid === pid && m.child.exitCode === null && m.child.signalCode === null);
  };
  const holder = await eventually('informer activity running', holderNow);
  const heldSoFar = async () => metricValue(await holder.metrics(), 'kcm_signal_events_held_total', { controller: 'replicaset' });

  // The pod the scale-down would take with every deletion cost equal (upstream's ranking, as the
  // workflow applies it); the test makes another one the cheapest, so only a workflow that heard of
  // the costs deletes that one.
  const pods = owned(await listPods(rest, ns, `app=${name}`), rs.metadata.uid);
  expect(pods).toHaveLength(3);
  const natural = choosePodsToDelete(pods.map((p) => podSummary(p as KubeObject)), 1, [], Date.now())[0].uid;
  const cheapest = pods.find((p) => p.metadata.uid !== natural)!;
  const before = await heldSoFar();
  // a deletion cost changes what the workflow keeps of a pod but nothing it would write now: held
  for (const p of pods) {
    if (p === cheapest) continue;
    await mergePatch(rest, `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' } } });
  }
  await eventually('both cost changes held by the watch holder', async () => (await heldSoFar()) - before >= 2, 30_000, 200);
  // the heartbeat's position passes the held events (the worker sends details every third of the timeout)
  await new Promise((r) => setTimeout(r, 4000));
  await holder.kill('SIGKILL');

  await mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`, { spec: { replicas: 2 } });
  const left = await eventually('scaled down to 2', async () => {
    const live = owned(await listPods(rest, ns, `app=${name}`), rs.metadata.uid);
    return live.length === 2 ? live : undefined;
  }, 60_000, 100);
  expect(left.map((p) => p.metadata.uid).sort()).toEqual(pods.filter((p) => p !== cheapest).map((p) => p.metadata.uid).sort());
  // the new holder took the watch over at the killed one's position, so its muted list never
  // signalled the costs: only the full state it sent first can have told the workflow
  const next = await eventually('informer on a live replica', async () => {
    const m = await holderNow();
    return m && m.pid !== holder.pid ? m : undefined;
  });
  expect(metricValue(await next.metrics(), 'kcm_informer_resumes_total', { resource: 'pods', outcome: 'resumed' })).toBeGreaterThanOrEqual(1);
});

test('a kube-apiserver restart: watches reconnect (or relist) and reconciling goes on', async () => {
  await stopProcess(TEST_DATA_DIR, 'kube-apiserver');
  // up restarts the apiserver on its data (and the parts that depend on it)
  await up({ dataDir: TEST_DATA_DIR, log: () => undefined });
  const fresh = testRest(testClusterAccess());
  await mergePatch(fresh, `/apis/apps/v1/namespaces/${ns}/replicasets/big`, { spec: { replicas: 195 } });
  await eventually('scaled to 195 after the apiserver restart', async () => {
    const live = (await listPods(fresh, ns, 'app=big')).filter((p) => !p.metadata.deletionTimestamp);
    const rs = (await fresh.request<{ status?: { replicas?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/big`)).body;
    return live.length === 195 && rs.status?.replicas === 195;
  }, 90_000, 200);
});

test('SIGSTOP of the replica creating pods for 20 s, then SIGCONT: it writes nothing more for the work another replica took over', async () => {
  // late in the file: the watch moves while a replica is stopped, which the watch tests above count
  const live = () => managers.filter((m) => m.child.exitCode === null && m.child.signalCode === null);
  if (live().length < 2) managers.push(await startManagerProcess(taskQueue, ARGS));
  const scale = await scaleToFence(rest, ns, 'paused', 300);
  // inside the slow-start batch of 128 (pods 128 to 255), which at 50 requests a second takes 2.5 s:
  // the replica running it has most of its creates still to send
  const victim = await eventually('the batch of 128 under way', async () => {
    const count = await scale.owned();
    if (count < 140 || count >= 220) return undefined;
    const pid = await pidWorkingOn(client, `replicaset/${ns}/paused`);
    return live().find((m) => m.pid === pid);
  }, 60_000, 20);
  process.kill(victim.pid, 'SIGSTOP');
  const atStop = await scale.owned();
  // the workflow task times out after 10 s and the other replica runs the batch again
  await new Promise((r) => setTimeout(r, 20_000));
  const atCont = await scale.owned();
  process.kill(victim.pid, 'SIGCONT');
  const { events, fenced } = await scale.outcome(victim);
  process.stderr.write(`fencing: stopped pid ${victim.pid} at ${atStop}/300 pods, ${atCont} when it went on; its fenced attempts: ${fenced}\n`);
  // the paused replica woke with creates of its batch still to send (without the fence, 155 of
  // them reached the server after the other replica's): refused, none went out
  expect(staleAttemptWrites(events)).toEqual([]);
  expect(fenced).toBeGreaterThanOrEqual(1);
  expect(await scale.owned()).toBe(300);
});

test('objects deleted while no replica ran: their workflows end once a replica lists again', async () => {
  // its own deployment of the manager, alone on the cluster: every replica of it is stopped while
  // the objects go, and no other manager's watch may see them go either
  await Promise.all(managers.splice(0).map((m) => m.kill()));
  const queue = uniqueName('gone');
  const opts = { controllers: 'replicaset,deployment,job,endpoint,endpointslice' };
  const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } });
  const objects = [
    { path: `/apis/apps/v1/namespaces/${ns}/replicasets`, workflowId: `replicaset/${ns}/lone`,
      body: { metadata: { name: 'lone' }, spec: { replicas: 1, selector: { matchLabels: { app: 'lone' } }, template: template('lone') } } },
    { path: `/apis/apps/v1/namespaces/${ns}/deployments`, workflowId: `deployment/${ns}/gone`,
      body: { metadata: { name: 'gone' }, spec: { replicas: 1, selector: { matchLabels: { app: 'gone' } }, template: template('gone') } } },
    { path: `/apis/batch/v1/namespaces/${ns}/jobs`, workflowId: `job/${ns}/gone-job`,
      body: { metadata: { name: 'gone-job' }, spec: { template: { ...template('gone-job'), spec: { ...template('gone-job').spec, restartPolicy: 'Never' } } } } },
    { path: `/api/v1/namespaces/${ns}/services`, workflowId: `endpoints/${ns}/gone-svc`,
      body: { metadata: { name: 'gone-svc' }, spec: { selector: { app: 'gone' }, ports: [{ port: 80 }] } } },
  ];
  const ids = [...objects.map((o) => o.workflowId), `endpointslice/${ns}/gone-svc`];
  const first = await startManagerProcess(queue, ARGS, opts);
  managers.push(first);
  for (const o of objects) await rest.request('POST', o.path, { body: o.body });
  // settled: the Deployment complete, so no timer of its own would have it read the API again
  await eventually('every object\'s workflow open and the Deployment complete', async () => {
    const d = await rest.request<{ status?: { availableReplicas?: number; conditions?: Array<{ type: string; reason?: string }> } }>(
      'GET', `/apis/apps/v1/namespaces/${ns}/deployments/gone`);
    if (d.body.status?.availableReplicas !== 1 || !d.body.status.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable')) return false;
    const runs = await Promise.all(ids.map((id) => client.workflow.getHandle(id).describe().catch(() => undefined)));
    return runs.every((r) => r?.status.name === 'RUNNING');
  }, 60_000, 250);

  await first.kill();
  // in the background: a Job's default (orphan) would keep it, finalized, until a garbage collector ran
  for (const o of objects) await rest.request('DELETE', `${o.path}/${o.body.metadata.name}`, { body: { propagationPolicy: 'Background' } });
  // one more controller: a new set of controllers has a watch of its own with no position to resume
  // from, as positions compacted away by a long outage would be
  managers.push(await startManagerProcess(queue, ARGS, { controllers: `${opts.controllers},cronjob` }));

  // no watch ever sees these deletions: the new replica's first list lacks the objects, and their
  // open workflows are told to read them again, or told of the deletion
  await eventually('every workflow completed', async () => {
    const runs = await Promise.all(ids.map((id) => client.workflow.getHandle(id).describe()));
    return runs.every((r) => r.status.name === 'COMPLETED');
  }, 60_000, 250);
});
