import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection, WorkflowExecutionInfo } from '@temporalio/client';
import { LoadedTemporalTls, loadTemporalTls } from '../../starter/run-options';
import { repoRoot } from '../../starter/local/paths';
import { loadVersions } from '../../starter/local/versions';
import { pkiPaths } from '../../starter/local/pki';
import { probe } from '../../starter/local/http-probe';
import { StackState, adminKubeConfig, connectionEnv, down, stackTemporal, status, temporalUiUrl, up } from '../../starter/local/stack';
import { eventually, freshNamespace } from '../support/cluster';
import { runCli } from '../support/cli';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { boundedWorkflowId } from '../../workflows/runtime/workflow-ids';
import { type Timeline, buildTimeline } from '../../starter/why/timeline';
import { uiGet, uiListWorkflows, uiObjectRuns, uiWorkflowEvents } from '../support/web-ui';

/**
 * The production topology of the local stack (`local up --temporal postgres`): temporal-server on
 * PostgreSQL behind a frontend that requires client certificates. This file brings up a stack of
 * its own in its own data dir (the shared test stack runs the dev server), shows that nothing
 * reaches Temporal without the stack's client certificate, and that a manager given the TLS flags
 * reconciles a Deployment with its workflows stored in that server, which the stack's Web UI server
 * (a client of that frontend, over mTLS) shows. It stops and removes its stack.
 */
const DATA_DIR = path.join(repoRoot, '.local', 'e2e-temporal-postgres');

let state: StackState;
let kc: k8s.KubeConfig;
let manager: ManagerProcess | undefined;
/** the Deployment the manager reconciled, and its ReplicaSet's name, for the Web UI's test */
let deployed: { ns: string; replicaSet: string } | undefined;

beforeAll(async () => {
  // a stack left by an interrupted run is stopped and thrown away: this file checks a cold start
  await down(DATA_DIR, { purge: true, log: () => undefined });
  const t0 = Date.now();
  state = await up({ dataDir: DATA_DIR, nodes: 1, temporal: 'postgres', log: (l) => process.stderr.write(`[postgres stack] ${l}\n`) });
  process.stderr.write(`[postgres stack] up (cold) in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
  kc = adminKubeConfig(DATA_DIR);
}, 240_000);

afterAll(async () => {
  await manager?.kill();
  // only this file's processes: down stops what this data dir's pid files name
  await down(DATA_DIR, { purge: process.env.TEMPORAL_KCM_KEEP_STACK !== '1', log: () => undefined });
}, 60_000);

/** Whether a client with these TLS settings gets an answer from the frontend. */
async function reaches(tls: LoadedTemporalTls | undefined): Promise<boolean> {
  try {
    const c = await Connection.connect({ address: stackTemporal(state).address, tls, connectTimeout: 3000 });
    try {
      await c.workflowService.getSystemInfo({});
      return true;
    } finally {
      await c.close();
    }
  } catch {
    return false;
  }
}

describe('local stack --temporal postgres', () => {
  test('it runs PostgreSQL and temporal-server, and records the topology', async () => {
    expect(state.temporal).toBe('postgres');
    const { parts } = await status(DATA_DIR);
    expect(parts.map((p) => [p.name, p.healthy])).toEqual(expect.arrayContaining([['postgres', true], ['temporal', true]]));
    expect(fs.readFileSync(`/proc/${parts.find((p) => p.name === 'temporal')!.pid}/cmdline`, 'utf8').split('\0')[0]).toMatch(/temporal-server$/);
  });

  test('the frontend refuses plain gRPC, TLS without a client cert, and a client cert of another CA', async () => {
    const tls = stackTemporal(state).tls!;
    const ca = fs.readFileSync(tls.caPath!);
    const admin = pkiPaths(DATA_DIR).client('admin');
    expect(await reaches(undefined)).toBe(false);
    expect(await reaches({ serverRootCACertificate: ca, serverNameOverride: tls.serverName })).toBe(false);
    // the kube-apiserver's admin cert: signed by the cluster CA, which the frontend does not trust
    expect(await reaches({
      serverRootCACertificate: ca, serverNameOverride: tls.serverName,
      clientCertPair: { crt: fs.readFileSync(admin.cert), key: fs.readFileSync(admin.key) },
    })).toBe(false);
    expect(await reaches(loadTemporalTls(tls))).toBe(true);
  });

  test('a manager with the TLS flags reconciles a Deployment; its histories are in that server, found by search attribute', async () => {
    // every controller, as `start` runs it: the informer of that set keeps its workflow ID within the 255 characters the SQL store holds
    const pki = pkiPaths(DATA_DIR);
    manager = await startManagerProcess('pg-topology', ['--use-service-account-credentials', '--service-account-private-key-file', pki.serviceAccountKey, '--root-ca-file', pki.caCert],
      { controllers: '*', dataDir: DATA_DIR });
    const ns = await freshNamespace(kc, 'pg-topology');
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.invalid/web:1' }], terminationGracePeriodSeconds: 1 } },
        },
      },
    });
    const rs = await eventually('the ReplicaSet with 2 ready pods, and the Deployment available', async () => {
      const d = await apps.readNamespacedDeployment({ namespace: ns, name: 'web' });
      const sets = await apps.listNamespacedReplicaSet({ namespace: ns });
      const owned = sets.items.find((r) => r.metadata?.ownerReferences?.some((o) => o.uid === d.metadata?.uid));
      return owned?.status?.readyReplicas === 2 && d.status?.availableReplicas === 2 ? owned : undefined;
    }, 90_000);

    deployed = { ns, replicaSet: rs.metadata!.name! };
    const temporal = stackTemporal(state);
    const connection = await Connection.connect({ address: temporal.address, tls: loadTemporalTls(temporal.tls!) });
    try {
      const client = new Client({ connection, namespace: temporal.namespace });
      const list = async (query: string) => {
        const out: WorkflowExecutionInfo[] = [];
        for await (const w of client.workflow.list({ query })) out.push(w);
        return out;
      };
      const found = await eventually('the Deployment and ReplicaSet workflows in the visibility store', async () => {
        const d = await list(`KcmNamespace='${ns}' AND KcmKind='Deployment' AND KcmName='web'`);
        const r = await list(`KcmNamespace='${ns}' AND KcmKind='ReplicaSet' AND KcmName='${rs.metadata!.name}'`);
        // one workflow each (a settled run may have continued as new: its runs share the ID)
        const one = (runs: WorkflowExecutionInfo[]) => runs.length > 0 && new Set(runs.map((w) => w.workflowId)).size === 1;
        return one(d) && one(r) ? { d: d[0], r: r[0] } : undefined;
      }, 30_000);
      expect(found.d.workflowId).toBe(`deployment/${ns}/web`);
      expect(found.r.workflowId).toBe(`replicaset/${ns}/${rs.metadata!.name}`);
      const history = await client.workflow.getHandle(found.r.workflowId).fetchHistory();
      // started, signalled by the informer, and at least one workflow task that created the pods
      expect(history.events!.length).toBeGreaterThan(3);
      expect(history.events!.some((e) => e.workflowTaskCompletedEventAttributes)).toBe(true);
    } finally {
      await connection.close();
    }
  }, 150_000);

  test('the Web UI server serves the UI and its API, reaching the mTLS frontend, and shows the ReplicaSet\'s reconciles', async () => {
    if (!deployed) throw new Error('needs the Deployment of the test before');
    const { ns, replicaSet } = deployed;
    const ui = temporalUiUrl(state);
    const part = (await status(DATA_DIR)).parts.find((p) => p.name === 'temporal-ui');
    expect(part?.healthy).toBe(true);
    expect(fs.readFileSync(`/proc/${part!.pid}/cmdline`, 'utf8').split('\0')[0]).toMatch(/temporal-ui-server$/);
    expect((await connectionEnv(DATA_DIR)).TEMPORAL_UI_URL).toBe(ui);
    // the page a browser opens, with the UI's assets embedded in the binary
    const page = await probe(`${ui}/namespaces/default/workflows`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('/_app/');
    // the settings the UI reads first (the UI server writes these keys capitalised)
    expect(await uiGet(ui, '/api/v1/settings')).toMatchObject({ DefaultNamespace: 'default', Version: loadVersions().temporalUiServer.replace(/^v/, '') });

    // the list the UI shows for a search-attribute query, and the history page of the row
    const listed = await eventually('the ReplicaSet\'s workflow in the UI\'s list', async () => {
      const rows = await uiListWorkflows(ui, `KcmNamespace='${ns}' AND KcmKind='ReplicaSet' AND KcmName='${replicaSet}'`);
      return rows.length ? rows : undefined;
    }, 30_000);
    const workflowId = `replicaset/${ns}/${replicaSet}`;
    expect(listed.map((w) => w.execution.workflowId)).toEqual(listed.map(() => workflowId));
    const events = await uiWorkflowEvents(ui, workflowId, listed[listed.length - 1].execution.runId);
    expect(events[0].eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');

    // read as `why` reads histories: the reconcile that made the two pods, with its reason
    const timeline = buildTimeline(await uiObjectRuns(ui, { kind: 'ReplicaSet', namespace: ns, name: replicaSet }));
    const creates = timeline.entries.filter((e) => e.controller === 'replicaset' && e.activity?.name === 'createPods');
    expect(creates.length).toBeGreaterThanOrEqual(1);
    expect(creates.every((e) => e.activity!.outcome.status === 'ok')).toBe(true);
    expect(creates.map((e) => e.activity!.reason).join('\n')).toMatch(/scale up 0->2/);
  }, 60_000);

  test('an object whose workflow ID would pass 255 characters gets a cut one, ending in a hash; its pods are made and why finds it', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    // the longest namespace (63) and a 200-character name: `replicaset/<ns>/<name>` is 275 characters
    const ns = `pg-long-${Date.now().toString(36)}-`.padEnd(63, 'n');
    const name = 'r'.repeat(200);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    const labels = { app: 'long' };
    await apps.createNamespacedReplicaSet({
      namespace: ns,
      body: { metadata: { name }, spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.invalid/long:1' }] } } } },
    });
    await eventually('the long-named ReplicaSet with 2 ready pods', async () => (await apps.readNamespacedReplicaSet({ namespace: ns, name })).status?.readyReplicas === 2, 60_000);

    const temporal = stackTemporal(state);
    const connection = await Connection.connect({ address: temporal.address, tls: loadTemporalTls(temporal.tls!) });
    let id = '';
    try {
      const client = new Client({ connection, namespace: temporal.namespace });
      id = await eventually('its workflow in the visibility store', async () => {
        for await (const w of client.workflow.list({ query: `KcmNamespace='${ns}' AND KcmKind='ReplicaSet'` })) return w.workflowId;
        return undefined;
      }, 30_000);
      expect(id).toHaveLength(255);
      expect(id).toBe(boundedWorkflowId(`replicaset/${ns}/${name}`));
      expect(id).toMatch(new RegExp(`^replicaset/${ns}/r+~[0-9a-f]{16}$`));
    } finally {
      await connection.close();
    }
    const why = await runCli(['why', 'replicaset', `${ns}/${name}`, '--json'], { ...process.env, ...(await connectionEnv(DATA_DIR)) });
    expect(why.code).toBe(0);
    const timeline = JSON.parse(why.stdout) as Timeline;
    expect(timeline.entries.some((e) => e.workflowId === id && e.controller === 'replicaset' && e.activity !== undefined)).toBe(true);
  }, 120_000);
});
