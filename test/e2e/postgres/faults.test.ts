import type { Connection } from '@temporalio/client';
import type { KubeObject } from '../../../activities/kube/projections';
import { readState, status, temporalUiUrl, up } from '../../../starter/local/stack';
import { AuditLog } from '../../support/audit';
import { runCli } from '../../support/cli';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../../support/cluster';
import { cleanNamespace, controllerUid, listPods, livePods, mergePatch, podImage, testRest } from '../../support/kube';
import { ManagerProcess, startManagerProcess } from '../../support/manager';
import { TEST_DATA_DIR, TEST_TEMPORAL } from '../../support/stack';
import { connectionEnv } from '../../../starter/local/stack';
import { type Timeline, type TimelineEntry, buildTimeline } from '../../../starter/why/timeline';
import { uiObjectRuns } from '../../support/web-ui';

/**
 * The production topology's faults (`npm run test:postgres`): PostgreSQL restarted, the Temporal
 * server killed with kill -9 and restarted, and that together with a manager replica, each in the
 * middle of a 200-replica rollout. Each ends with exact pod and ReplicaSet counts, exactly one
 * successful create per pod and one delete per replaced pod in the API server's audit log (no
 * duplicate and no lost write), and `why` and the Web UI (the UI server's API, as its pages read
 * it) showing the Deployment's reconciles from before and after the fault.
 */
const rest = testRest(testClusterAccess());
const REPLICAS = 200;
const ARGS = ['--use-service-account-credentials', '--kube-api-qps', '200', '--kube-api-burst', '400'];
const taskQueue = uniqueName('pg-faults');
const managers: ManagerProcess[] = [];
const audit = new AuditLog();
let ns: string;
let connection: Connection;
const convergence: string[] = [];

type Obj = KubeObject & { spec?: { replicas?: number }; status?: Record<string, unknown> };
const dPath = (name?: string) => `/apis/apps/v1/namespaces/${ns}/deployments${name ? `/${name}` : ''}`;
const image = podImage;
const live = livePods;

function manifest(name: string, img: string) {
  return {
    metadata: { name },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: img }], terminationGracePeriodSeconds: 0 } },
    },
  };
}

async function rolledOut(name: string, img: string, timeoutMs = 240_000): Promise<void> {
  await eventually(`${name} rolled out to ${img}`, async () => {
    const d = (await rest.request<Obj>('GET', dPath(name))).body;
    const s = (d.status ?? {}) as { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number; replicas?: number };
    const pods = live(await listPods(rest, ns, `app=${name}`));
    return s.observedGeneration === d.metadata?.generation && s.updatedReplicas === REPLICAS && s.availableReplicas === REPLICAS
      && s.replicas === REPLICAS && pods.length === REPLICAS && pods.every((p) => image(p) === img);
  }, timeoutMs, 200);
}

async function pidOf(part: 'postgres' | 'temporal'): Promise<number> {
  const p = (await status(TEST_DATA_DIR)).parts.find((x) => x.name === part);
  if (!p?.pid || !p.running) throw new Error(`${part} is not running in ${TEST_DATA_DIR}`);
  return p.pid;
}

async function exited(pid: number, timeoutMs = 60_000): Promise<void> {
  await eventually(`pid ${pid} gone`, async () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, timeoutMs, 100);
}

/** The stack's `up` starts again whatever part is down and keeps the rest. */
const restartStack = () => up({ dataDir: TEST_DATA_DIR, nodes: 3, temporal: TEST_TEMPORAL, log: (l) => process.stderr.write(`[postgres stack] ${l}\n`) });

/**
 * A 200-replica Deployment rolled out to image 1, then to image 2 with `fault` injected once 20
 * to 120 new pods exist; waits for the rollout and checks what the cluster holds and what was written.
 */
async function rolloutThrough(name: string, what: string, fault: () => Promise<void>): Promise<void> {
  await rest.request('POST', dPath(), { body: manifest(name, `registry.invalid/${name}:1`) });
  await rolledOut(name, `registry.invalid/${name}:1`);
  audit.mark();
  await mergePatch(rest, dPath(name), { spec: { template: { spec: { containers: [{ name: 'app', image: `registry.invalid/${name}:2` }] } } } });
  await eventually('the rollout under way', async () => {
    const n = live(await listPods(rest, ns, `app=${name}`)).filter((p) => image(p) === `registry.invalid/${name}:2`).length;
    return n >= 20 && n <= 120;
  }, 120_000, 25);
  const faultAt = Date.now();
  await fault();
  await rolledOut(name, `registry.invalid/${name}:2`);
  const ms = Date.now() - faultAt;
  convergence.push(`${what}: rollout of ${REPLICAS} complete ${(ms / 1000).toFixed(1)} s after the fault`);
  process.stderr.write(`postgres faults: ${convergence[convergence.length - 1]}\n`);

  // exactly the ReplicaSets a rollout makes, at their final sizes
  const dep = (await rest.request<Obj>('GET', dPath(name))).body;
  const rss = (await rest.request<{ items: Obj[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items.filter((rs) => controllerUid(rs) === dep.metadata?.uid);
  expect(rss.map((rs) => rs.spec?.replicas).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([0, REPLICAS]);
  expect(live(await listPods(rest, ns, `app=${name}`))).toHaveLength(REPLICAS);
  // one successful create per new pod and one delete per old pod: none twice, none lost
  await new Promise((r) => setTimeout(r, 2000));
  const podWrites = audit.events().filter((e) => e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.objectRef.namespace === ns
    && e.user.username === 'system:serviceaccount:kube-system:replicaset-controller');
  expect(podWrites.filter((e) => e.verb === 'create' && e.responseStatus?.code === 201)).toHaveLength(REPLICAS);
  expect(podWrites.filter((e) => e.verb === 'delete' && e.responseStatus?.code === 200)).toHaveLength(REPLICAS);
  // every reconcile is still readable: why shows the Deployment's scaling writes, before and after the fault
  const why = await runCli(['why', 'deployment', `${ns}/${name}`, '--json'], { ...process.env, ...(await connectionEnv(TEST_DATA_DIR)) });
  expect(why.code).toBe(0);
  const whyWrites = deploymentWrites(JSON.parse(why.stdout) as Timeline);
  expect(whyWrites.some((e) => Date.parse(e.time) < faultAt)).toBe(true);
  expect(whyWrites.some((e) => Date.parse(e.time) > faultAt)).toBe(true);
  // and so does the Web UI (read after why, so it holds at least as much): every write why showed, by run and event
  const uiWrites = deploymentWrites(buildTimeline(await uiObjectRuns(temporalUiUrl(readState(TEST_DATA_DIR)!), { kind: 'Deployment', namespace: ns, name })));
  const inUi = new Set(uiWrites.map(eventKey));
  expect(whyWrites.map(eventKey).filter((k) => !inUi.has(k))).toEqual([]);
  expect(uiWrites.some((e) => Date.parse(e.time) < faultAt)).toBe(true);
  expect(uiWrites.some((e) => Date.parse(e.time) > faultAt)).toBe(true);
}

/** The deployment controller's writes (its activities) in a timeline. */
const deploymentWrites = (t: Timeline): TimelineEntry[] => t.entries.filter((e) => e.activity && e.controller === 'deployment');
const eventKey = (e: TimelineEntry) => `${e.workflowId} ${e.runId} ${e.eventId}`;

beforeAll(async () => {
  if (TEST_TEMPORAL !== 'postgres') throw new Error('these tests run on the postgres topology: npm run test:postgres');
  ns = await freshNamespace(testClusterAccess(), 'pg-faults');
  managers.push(await startManagerProcess(taskQueue, ARGS, { controllers: 'replicaset,deployment' }), await startManagerProcess(taskQueue, ARGS, { controllers: 'replicaset,deployment' }));
  connection = await testTemporalConnection();
});

afterAll(async () => {
  process.stderr.write(`postgres faults:\n${convergence.map((c) => `  ${c}`).join('\n')}\n`);
  await Promise.all(managers.map((m) => m.kill()));
  await connection?.close();
  if (ns) {
    await rest.request('DELETE', dPath(), { body: {} }).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});

test('PostgreSQL restarted in the middle of a 200-replica rollout', async () => {
  await rolloutThrough('pg-restart', 'PostgreSQL restarted', async () => {
    const pid = await pidOf('postgres');
    // a fast shutdown, as `systemctl restart postgresql` does: every connection is cut
    process.kill(pid, 'SIGINT');
    await exited(pid);
    await restartStack();
  });
}, 600_000);

test('the Temporal server killed with kill -9 and restarted in the middle of a rollout', async () => {
  await rolloutThrough('temporal-kill', 'Temporal server kill -9', async () => {
    const pid = await pidOf('temporal');
    process.kill(pid, 'SIGKILL');
    await exited(pid);
    await restartStack();
  });
}, 600_000);

test('the Temporal server and a manager replica killed together in the middle of a rollout', async () => {
  await rolloutThrough('both-kill', 'Temporal server and a manager replica kill -9', async () => {
    const pid = await pidOf('temporal');
    const victim = managers.shift()!;
    process.kill(pid, 'SIGKILL');
    await victim.kill('SIGKILL');
    await exited(pid);
    await restartStack();
  });
  // the replica killed is replaced, for what follows
  managers.push(await startManagerProcess(taskQueue, ARGS, { controllers: 'replicaset,deployment' }));
}, 600_000);
