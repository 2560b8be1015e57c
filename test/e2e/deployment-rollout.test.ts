import { Client, Connection } from '@temporalio/client';
import type { KubeObject } from '../../activities/kube/projections';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { ManagerProcess, pidWorkingOn, startManagerProcess } from '../support/manager';
import { PodObject, cleanNamespace, controllerUid, listPods, livePods, mergePatch, podImage, testRest } from '../support/kube';

/** Rolling-update invariants, durable progress deadlines and replica failover for Deployments. */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('rollout');
const ARGS = ['--controllers', 'replicaset,deployment', '--informer-heartbeat-timeout', '3s', '--kube-api-qps', '200', '--kube-api-burst', '400'];
const managers: ManagerProcess[] = [];
let ns: string;
let connection: Connection;
let client: Client;

type Obj = KubeObject & { status?: Record<string, unknown> & { conditions?: Array<{ type: string; status: string; reason?: string; lastUpdateTime?: string }> } };

const dPath = (name?: string) => `/apis/apps/v1/namespaces/${ns}/deployments${name ? `/${name}` : ''}`;
const deployment = async (name: string) => (await rest.request<Obj>('GET', dPath(name))).body;
const image = podImage;
const ready = (p: PodObject) => ((p.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const live = livePods;

function manifest(name: string, replicas: number, img: string, extra: Record<string, unknown> = {}) {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: img }], terminationGracePeriodSeconds: 0 } },
      ...extra,
    },
  };
}

async function rolledOut(name: string, replicas: number, img: string, timeoutMs = 120_000): Promise<void> {
  await eventually(`${name} rolled out to ${img}`, async () => {
    const d = await deployment(name);
    const pods = live(await listPods(rest, ns, `app=${name}`));
    const s = d.status ?? {};
    return s.observedGeneration === d.metadata?.generation && s.updatedReplicas === replicas && s.availableReplicas === replicas &&
      s.replicas === replicas && pods.length === replicas && pods.every((p) => image(p) === img);
  }, timeoutMs, 100);
}

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'rollout');
  managers.push(await startManagerProcess(taskQueue, ARGS), await startManagerProcess(taskQueue, ARGS));
  connection = await testTemporalConnection();
  client = new Client({ connection });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.kill()));
  await connection?.close();
  if (ns) {
    await rest.request('DELETE', dPath(), { body: {} }).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});

test('maxSurge/maxUnavailable hold at every observed moment of a 30-replica rolling update', async () => {
  const strategy = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } };
  await rest.request('POST', dPath(), { body: manifest('roll', 30, 'registry.invalid/roll:1', strategy) });
  await rolledOut('roll', 30, 'registry.invalid/roll:1');
  // 25% of 30: surge rounds up to 8, unavailable rounds down to 7
  const maxPods = 30 + 8;
  const minAvailable = 30 - 7;
  await mergePatch(rest, dPath('roll'), { spec: { template: { spec: { containers: [{ name: 'app', image: 'registry.invalid/roll:2' }] } } } });
  let samples = 0;
  let worstTotal = 0;
  let worstAvailable = 30;
  await eventually('rolled out to roll:2 while the invariants held', async () => {
    const pods = live(await listPods(rest, ns, 'app=roll'));
    samples++;
    worstTotal = Math.max(worstTotal, pods.length);
    worstAvailable = Math.min(worstAvailable, pods.filter(ready).length);
    expect(pods.length).toBeLessThanOrEqual(maxPods);
    expect(pods.filter(ready).length).toBeGreaterThanOrEqual(minAvailable);
    return pods.length === 30 && pods.every((p) => image(p) === 'registry.invalid/roll:2' && ready(p));
  }, 120_000, 25);
  process.stderr.write(`rolling 30: ${samples} samples, at most ${worstTotal} pods (limit ${maxPods}), at least ${worstAvailable} ready (limit ${minAvailable})\n`);
  expect(samples).toBeGreaterThan(5);
  await rolledOut('roll', 30, 'registry.invalid/roll:2');
});

test('kill -9 of a replica during a 100-replica rollout: it completes with correct counts and no extra ReplicaSet', async () => {
  await rest.request('POST', dPath(), { body: manifest('big', 100, 'registry.invalid/big:1') });
  await rolledOut('big', 100, 'registry.invalid/big:1');
  await mergePatch(rest, dPath('big'), { spec: { template: { spec: { containers: [{ name: 'app', image: 'registry.invalid/big:2' }] } } } });
  await eventually('rollout under way', async () => {
    const n = live(await listPods(rest, ns, 'app=big')).filter((p) => image(p) === 'registry.invalid/big:2').length;
    return n >= 10 && n <= 80;
  }, 60_000, 25);
  // kill the replica that last ran this Deployment's work (else the first)
  const pid = await pidWorkingOn(client, `deployment/${ns}/big`);
  const victim = managers.find((m) => m.pid === pid) ?? managers[0];
  const killedAt = Date.now();
  await victim.kill('SIGKILL');
  await rolledOut('big', 100, 'registry.invalid/big:2');
  process.stderr.write(`deployment failover: killed pid ${victim.pid}; rollout of 100 done ${Date.now() - killedAt} ms after the kill\n`);
  const dep = await deployment('big');
  const rss = (await rest.request<{ items: Obj[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items
    .filter((rs) => controllerUid(rs) === dep.metadata?.uid);
  expect(rss).toHaveLength(2);
  expect(rss.map((rs) => (rs.spec as { replicas: number }).replicas).sort((a, b) => a - b)).toEqual([0, 100]);
  expect(live(await listPods(rest, ns, 'app=big'))).toHaveLength(100);
  managers.push(await startManagerProcess(taskQueue, ARGS));
});

test('ProgressDeadlineExceeded arrives on time, also when the manager restarts during the wait', async () => {
  const deadlineSeconds = 15;
  await rest.request('POST', dPath(), {
    body: manifest('never', 2, 'registry.invalid/never:1', { progressDeadlineSeconds: deadlineSeconds }),
  });
  await rolledOut('never', 2, 'registry.invalid/never:1');
  // a template whose pods the API refuses: the new ReplicaSet never gets a pod
  await mergePatch(rest, dPath('never'), { spec: { template: { spec: { serviceAccountName: 'does-not-exist' } } } });
  const progressing = await eventually('new rollout started', async () => {
    const c = (await deployment('never')).status?.conditions?.find((x) => x.type === 'Progressing');
    return c?.reason === 'NewReplicaSetCreated' || c?.reason === 'ReplicaSetUpdated' ? c : undefined;
  });
  const startedAt = Date.parse(progressing.lastUpdateTime!);
  // every replica goes away for a while in the middle of the wait, then one comes back
  await new Promise((r) => setTimeout(r, 3000));
  await Promise.all(managers.map((m) => m.kill('SIGKILL')));
  await new Promise((r) => setTimeout(r, 4000));
  managers.push(await startManagerProcess(taskQueue, ARGS));
  const exceeded = await eventually('ProgressDeadlineExceeded', async () => {
    const c = (await deployment('never')).status?.conditions?.find((x) => x.type === 'Progressing');
    return c?.reason === 'ProgressDeadlineExceeded' ? c : undefined;
  }, 90_000, 200);
  const late = Date.parse(exceeded.lastUpdateTime!) - (startedAt + deadlineSeconds * 1000);
  process.stderr.write(`progress deadline: condition set ${late} ms after the deadline (manager restarted during the wait)\n`);
  expect(late).toBeGreaterThanOrEqual(-1000);
  expect(late).toBeLessThan(15_000);
});
