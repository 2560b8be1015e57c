import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { repoRoot } from '../../starter/local/paths';
import { eventually, freshNamespace, temporalAddress, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { runCli } from '../support/cli';
import { listPods, mergePatch, testRest } from '../support/kube';
import { ManagerProcess, metricValue, startManagerProcess } from '../support/manager';

/**
 * Operating reconciles through Temporal: `why` tells an object's decisions from its histories,
 * `state` asks a running workflow what it believes, `pause`/`resume` hold one object's writes,
 * a failing object is found by its KcmLastError search attribute, and `replay` checks a real
 * history against the code (and catches a deliberately changed workflow), and SIGUSR2 writes heap
 * snapshots of both threads while the replica goes on.
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('operate-e2e');
let manager: ManagerProcess;
let ns: string;
let connection: Connection;
let client: Client;
const heapDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kcm-heap-'));

const cli = (args: string[]) => runCli([...args, '--temporal-address', temporalAddress()], process.env, 120_000);

interface Rs { status?: { replicas?: number; readyReplicas?: number } }

async function createReplicaSet(name: string, replicas: number): Promise<void> {
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } } },
  } });
}
const scale = (name: string, replicas: number) => mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`, { spec: { replicas } });
const livePods = async (name: string) => (await listPods(rest, ns, `app=${name}`)).filter((p) => !p.metadata.deletionTimestamp).length;
const readyIs = (name: string, n: number) => eventually(`${name} at ${n} ready`, async () => {
  const rs = (await rest.request<Rs>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`)).body;
  return (rs.status?.readyReplicas ?? 0) === n && (await livePods(name)) === n;
}, 60_000);

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'operate');
  manager = await startManagerProcess(taskQueue, ['--controllers', 'replicaset', '--resync-backoff-max', '4s', '--heap-snapshot-dir', heapDir]);
  connection = await testTemporalConnection();
  client = new Client({ connection });
});

afterAll(async () => {
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
  await manager?.kill();
  await connection?.close();
  fs.rmSync(heapDir, { recursive: true, force: true });
});

test('why on a ReplicaSet scaled 3->6->2 shows both decisions, with their reasons, in order', async () => {
  await createReplicaSet('web', 3);
  await readyIs('web', 3);
  await scale('web', 6);
  await readyIs('web', 6);
  await scale('web', 2);
  await readyIs('web', 2);

  const text = await cli(['why', 'rs', `${ns}/web`]);
  expect(text.code).toBe(0);
  const up = text.stdout.indexOf('scale up 3->6');
  const down = text.stdout.indexOf('scale down 6->2');
  expect(up).toBeGreaterThan(-1);
  expect(down).toBeGreaterThan(up);
  expect(text.stdout).toMatch(/createPods.*scale up 3->6/);
  expect(text.stdout).toMatch(/deletePods.*scale down 6->2: 4 chosen/);

  const json = await cli(['why', 'ReplicaSet', `${ns}/web`, '--json']);
  expect(json.code).toBe(0);
  const timeline = JSON.parse(json.stdout) as { entries: Array<{ activity?: { name: string; reason?: string } }> };
  const decisions = timeline.entries.filter((e) => e.activity?.name === 'createPods' || e.activity?.name === 'deletePods')
    .map((e) => `${e.activity!.name}: ${e.activity!.reason}`);
  expect(decisions.findIndex((d) => d.includes('scale up 3->6'))).toBeLessThan(decisions.findIndex((d) => d.includes('scale down 6->2')));

  // a malformed object is a usage error; an object nobody reconciles is a plain error
  expect((await cli(['why', 'rs', 'no-slash'])).code).toBe(2);
  expect((await cli(['why', 'rs', `${ns}/nothing-here`])).code).toBe(1);
}, 180_000);

test('pause holds one object\'s writes while others go on; state shows it; resume catches up to the latest spec', async () => {
  await Promise.all([createReplicaSet('held', 1), createReplicaSet('free', 1)]);
  await Promise.all([readyIs('held', 1), readyIs('free', 1)]);

  const paused = await cli(['pause', 'replicaset', `${ns}/held`, '--reason', 'incident 42']);
  expect(paused.code).toBe(0);
  expect(paused.stdout).toContain(`replicaset/${ns}/held`);
  await eventually('paused in state', async () => {
    const s = await cli(['state', 'rs', `${ns}/held`, '--json']);
    const [w] = JSON.parse(s.stdout) as Array<{ state: { paused?: { reason?: string } } }>;
    return w.state.paused?.reason === 'incident 42';
  }, 20_000);

  await scale('held', 2);
  await scale('free', 3);
  await scale('held', 4); // the last spec is what resume must reach
  await readyIs('free', 3);
  await new Promise((r) => setTimeout(r, 4000));
  expect(await livePods('held')).toBe(1);
  const s = await cli(['state', 'rs', `${ns}/held`]);
  expect(s.stdout).toContain('PAUSED');
  // the Web UI's current details say so too (served by Temporal's built-in metadata query)
  const meta = await client.workflow.getHandle(`replicaset/${ns}/held`).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  expect(meta.currentDetails).toMatch(/Paused.*incident 42/);
  // the stack-trace query is off unless --workflow-stack-traces: its promise hook costs CPU on every workflow
  await expect(client.workflow.getHandle(`replicaset/${ns}/held`).query('__stack_trace')).rejects.toThrow(/stack traces are not enabled/);
  expect(s.stdout).toMatch(/[1-9]\d* events pending/);

  expect((await cli(['resume', 'rs', `${ns}/held`])).code).toBe(0);
  await readyIs('held', 4);
  const after = await cli(['state', 'rs', `${ns}/held`, '--json']);
  const [w] = JSON.parse(after.stdout) as Array<{ state: { paused?: unknown; view?: { desiredReplicas?: number } } }>;
  expect(w.state.paused).toBeUndefined();
  expect(w.state.view?.desiredReplicas).toBe(4);
}, 180_000);

test('a reconcile that keeps failing is found by KcmLastError, highlighted by why, and cleared once it heals', async () => {
  await rest.request('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } } });
  // the API server's quota admission needs the quota's status before it enforces it
  await eventually('quota enforced', async () => {
    const r = await rest.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, { body: { metadata: { name: 'probe' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }).then(() => false, () => true);
    if (!r) await mergePatch(rest, `/api/v1/namespaces/${ns}/resourcequotas/no-pods/status`, { status: { hard: { pods: '0' }, used: { pods: '0' } } }).catch(() => undefined);
    return r;
  }, 20_000);
  await createReplicaSet('blocked', 1);

  const query = `KcmLastError IS NOT NULL AND KcmNamespace='${ns}' AND ExecutionStatus='Running'`;
  const failing = async () => {
    const ids: string[] = [];
    for await (const w of client.workflow.list({ query })) ids.push(w.workflowId);
    return ids;
  };
  await eventually('failing workflow listed', async () => (await failing()).includes(`replicaset/${ns}/blocked`), 60_000, 1000);
  const why = await cli(['why', 'rs', `${ns}/blocked`]);
  expect(why.stdout).toMatch(/^.*!.*(forbidden|exceeded quota).*$/m);

  await rest.request('DELETE', `/api/v1/namespaces/${ns}/resourcequotas/no-pods`);
  await readyIs('blocked', 1);
  await eventually('KcmLastError cleared', async () => !(await failing()).includes(`replicaset/${ns}/blocked`), 30_000, 1000);
}, 180_000);

test('replay: a real history replays against the code; a deliberately changed workflow fails and names the event', async () => {
  const ok = await cli(['replay', `replicaset/${ns}/web`]);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(/replay OK/);

  const changed = path.join(repoRoot, 'dist', 'test', 'support', 'workflows', 'changed-replicaset.js');
  const bad = await cli(['replay', `replicaset/${ns}/web`, '--workflows', changed]);
  expect(bad.code).toBe(1);
  expect(`${bad.stdout}${bad.stderr}`).toMatch(/event\s+#?\d+/i);

  expect((await cli(['replay'])).code).toBe(2);
}, 180_000);

test('SIGUSR2 writes heap snapshots of the main and the workflow thread; the replica keeps reconciling', async () => {
  await createReplicaSet('heap', 1);
  await readyIs('heap', 1);
  process.kill(manager.pid, 'SIGUSR2');
  const files = await eventually('both snapshots written', async () => {
    if (!fs.readFileSync(manager.logFile, 'utf8').includes('heap snapshots written')) return undefined;
    const names = fs.readdirSync(heapDir);
    return names.some((n) => n.endsWith('-main.heapsnapshot')) && names.some((n) => n.endsWith('-workflows-0.heapsnapshot')) ? names : undefined;
  }, 120_000, 500);
  for (const f of files) {
    const snap = JSON.parse(fs.readFileSync(path.join(heapDir, f), 'utf8')) as { snapshot: { node_count: number } };
    expect(snap.snapshot.node_count).toBeGreaterThan(1000);
  }
  // the SDK's default shutdown signals include SIGUSR2: the workers must not have stopped
  expect(manager.child.exitCode).toBeNull();
  await scale('heap', 3);
  await readyIs('heap', 3);
}, 180_000);

test('--max-cached-workflows 2: a replica keeps at most two runs per controller in memory, and every object still converges (runs not kept replay)', async () => {
  // the uncapped replica keeps every open ReplicaSet run of the tests above
  const open = ['web', 'held', 'free', 'blocked', 'heap'];
  const before = metricValue(await manager.metrics(), 'kcm_workflow_cache_runs', { controller: 'replicaset' });
  expect(before).toBeGreaterThanOrEqual(open.length);

  await manager.kill();
  manager = await startManagerProcess(taskQueue, ['--controllers', 'replicaset', '--resync-backoff-max', '4s', '--max-cached-workflows', '2']);
  const fresh = ['cap-0', 'cap-1', 'cap-2'];
  await Promise.all(fresh.map((n) => createReplicaSet(n, 1)));
  await Promise.all(fresh.map((n) => readyIs(n, 1)));
  // eight runs take turns in two cache slots: each reconcile below replays its run
  await Promise.all([...open, ...fresh].map((n) => scale(n, 2)));
  await Promise.all([...open, ...fresh].map((n) => readyIs(n, 2)));
  const cached = metricValue(await manager.metrics(), 'kcm_workflow_cache_runs', { controller: 'replicaset' });
  expect(cached).toBeGreaterThan(0);
  expect(cached).toBeLessThanOrEqual(2);
}, 240_000);
