import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { computeDetachedSignature } from '../../activities/bootstrapsigner/jws';
import { informerWorkflowIdOf } from '../../workflows/informer';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { eventually, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest, getIfExists } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The bootstrap signer compared with upstream kube-controller-manager v1.35.4 on the same stack:
 * the same bootstrap tokens (same IDs, same secrets) and the same edits of kube-public/cluster-info
 * under each manager in turn, and cluster-info's data after every step must be byte-equal (every
 * jws-kubeconfig-<id> key and value, and the keys the signer must leave alone). Ours runs as two
 * replicas; the one holding the watch is killed with kill -9 while the first tokens are added.
 * No token secret, raw or base64, may reach a history of our deployment or either replica's log.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const CM = '/api/v1/namespaces/kube-public/configmaps/cluster-info';
const SECRETS = '/api/v1/namespaces/kube-system/secrets';
const PREFIX = 'jws-kubeconfig-';
const ARGS = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s'];

type ConfigMap = { metadata: Record<string, unknown> & { resourceVersion?: string }; data?: Record<string, string> };
type Data = Record<string, string>;

/** a token id: six of [a-z0-9]; a token secret: sixteen */
const tokenId = () => randomBytes(3).toString('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const kubeconfig = (server: string) =>
  `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: ${b64('not a real CA')}\n    server: ${server}\n  name: ""\ncontexts: null\ncurrent-context: ""\nkind: Config\npreferences: {}\nusers: null\n`;
const K1 = kubeconfig('https://10.0.0.1:6443');
const K2 = kubeconfig('https://cluster.example.com:6443');

interface Token { id: string; secret: string; data: Record<string, string> }
const tokens: Record<'valid' | 'expiring' | 'auth-only' | 'expired', Token> = (() => {
  const mk = (data: Record<string, string>): Token => {
    const id = tokenId();
    const secret = randomBytes(8).toString('hex');
    return { id, secret, data: { 'token-id': id, 'token-secret': secret, ...data } };
  };
  const inAnHour = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    valid: mk({ 'usage-bootstrap-signing': 'true', 'usage-bootstrap-authentication': 'true', description: 'e2e valid' }),
    expiring: mk({ 'usage-bootstrap-signing': 'true', expiration: inAnHour }),
    'auth-only': mk({ 'usage-bootstrap-authentication': 'true' }),
    expired: mk({ 'usage-bootstrap-signing': 'true', expiration: '2020-01-01T00:00:00Z' }),
  };
})();
const secretName = (t: Token) => `bootstrap-token-${t.id}`;

let original: ConfigMap | undefined;
const upstream = new UpstreamKcm('bootstrap-signer');
const managers: ManagerProcess[] = [];

const get = <T>(p: string) => getIfExists<T>(rest, p);

async function createToken(t: Token): Promise<void> {
  await rest.request('POST', SECRETS, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName(t) }, type: 'bootstrap.kubernetes.io/token', stringData: t.data } });
}

async function deleteTokens(): Promise<void> {
  for (const t of Object.values(tokens)) await rest.request('DELETE', `${SECRETS}/${secretName(t)}`).catch(() => undefined);
  await eventually('test tokens gone', async () => {
    for (const t of Object.values(tokens)) if (await get(`${SECRETS}/${secretName(t)}`)) return false;
    return true;
  }, 20_000, 200);
}

/** cluster-info with the given data (created if missing), whatever it held */
async function setClusterInfo(data: Data): Promise<void> {
  const cur = await get<ConfigMap>(CM);
  if (!cur) {
    await rest.request('POST', '/api/v1/namespaces/kube-public/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info' }, data } });
    return;
  }
  await rest.request('PUT', CM, { body: { ...cur, data } });
}

async function patchClusterInfo(data: Record<string, string | null>): Promise<void> {
  await rest.request('PATCH', CM, { contentType: 'application/merge-patch+json', body: { data } });
}

const dataOf = async (): Promise<Data> => (await get<ConfigMap>(CM))?.data ?? {};
const signers = (d: Data) => Object.keys(d).filter((k) => k.startsWith(PREFIX)).map((k) => k.slice(PREFIX.length)).sort();
const ids = (...ts: Token[]) => ts.map((t) => t.id).sort();
const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** What each step left in cluster-info, once the condition held and a second passed without another write. */
type Steps = Record<string, Data>;

async function settled(what: string, ok: (d: Data) => boolean, timeoutMs: number): Promise<Data> {
  await eventually(what, async () => {
    const d = await dataOf();
    if (!ok(d)) throw new Error(`cluster-info has ${signers(d).join(', ') || 'no signatures'}`);
    return true;
  }, timeoutMs, 100);
  await new Promise((r) => setTimeout(r, 1000));
  const d = await dataOf();
  expect([what, ok(d)]).toEqual([what, true]);
  return d;
}

/**
 * The scenario, run once under each manager. `midway` runs after the first two tokens are made
 * (ours: kill -9 of the replica holding the watch).
 */
async function scenario(firstTimeoutMs: number, midway: () => Promise<void>): Promise<Steps> {
  const steps: Steps = {};
  await createToken(tokens.valid);
  await createToken(tokens.expiring);
  await midway();
  await createToken(tokens['auth-only']);
  await createToken(tokens.expired);
  steps['two valid tokens sign; auth-only and expired do not'] =
    await settled('signed by the valid and the expiring token', (d) => same(signers(d), ids(tokens.valid, tokens.expiring)), firstTimeoutMs);

  await rest.request('DELETE', `${SECRETS}/${secretName(tokens.expiring)}`);
  steps['a deleted token\'s signature removed'] = await settled('signed by the valid token only', (d) => same(signers(d), ids(tokens.valid)), 20_000);

  const before = (await dataOf())[PREFIX + tokens.valid.id];
  await patchClusterInfo({ kubeconfig: K2 });
  steps['kubeconfig changed: re-signed'] = await settled('re-signed',
    (d) => d.kubeconfig === K2 && same(signers(d), ids(tokens.valid)) && d[PREFIX + tokens.valid.id] !== before, 20_000);

  await patchClusterInfo({ [PREFIX + tokens.valid.id]: 'tampered' });
  steps['a tampered signature restored'] = await settled('signature restored',
    (d) => same(signers(d), ids(tokens.valid)) && d[PREFIX + tokens.valid.id] !== 'tampered', 20_000);

  await rest.request('PATCH', `${SECRETS}/${secretName(tokens['auth-only'])}`, {
    contentType: 'application/merge-patch+json', body: { stringData: { 'usage-bootstrap-signing': 'true' } },
  });
  steps['a token allowed to sign later signs'] = await settled('signed by the valid and the auth-only token',
    (d) => same(signers(d), ids(tokens.valid, tokens['auth-only'])), 20_000);
  return steps;
}

/** cluster-info as each run starts: the first kubeconfig, a key the signer leaves alone, and a stale signature */
const INITIAL: Data = { kubeconfig: K1, 'e2e-note': 'not the signer\'s', [`${PREFIX}zzzzzz`]: 'left by a token long gone' };

beforeAll(async () => {
  original = await get<ConfigMap>(CM);
});

afterAll(async () => {
  await upstream.stop();
  await Promise.all(managers.map((m) => m.kill()));
  await deleteTokens().catch(() => undefined);
  if (original) await setClusterInfo(original.data ?? {}).catch(() => undefined);
  else await rest.request('DELETE', CM).catch(() => undefined);
});

test('cluster-info is signed byte for byte as upstream signs it, across a kill -9 of the replica holding the watch', async () => {
  const started = Date.now();
  // upstream
  await setClusterInfo(INITIAL);
  await upstream.start('bootstrap-signer-controller', ['--use-service-account-credentials']);
  const theirs = await scenario(30_000, async () => undefined);
  await upstream.stop();
  const upstreamDone = Date.now();

  // ours: the same tokens again, two replicas, the watch's holder killed while tokens are added
  await deleteTokens();
  await setClusterInfo(INITIAL);
  const taskQueue = uniqueName('bootstrap-signer-e2e');
  const [a, b] = await Promise.all([
    startManagerProcess(taskQueue, ARGS, { controllers: 'bootstrapsigner' }),
    startManagerProcess(taskQueue, ARGS, { controllers: 'bootstrapsigner' }),
  ]);
  managers.push(a, b);
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    const holderPid = async () => {
      const id = await informerWorkflowIdOf(client, taskQueue);
      if (!id) return undefined;
      const d = await client.workflow.getHandle(id).describe();
      const pid = Number(/-(\d+)$/.exec(d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '')?.[1]);
      return managers.find((m) => m.pid === pid && m.child.exitCode === null && m.child.signalCode === null);
    };
    const holder = await eventually('the informer activity running', holderPid, 20_000, 100);
    const survivor = holder === a ? b : a;
    const ours = await scenario(30_000, async () => {
      await holder.kill('SIGKILL');
    });
    const oursDone = Date.now();

    // the signer's state query tells who signs and why the others do not
    const state = await client.workflow.getHandle(`bootstrapsigner/${taskQueue}`).query<{ view?: Record<string, unknown> }>('state');
    expect(state.view).toMatchObject({ configMap: 'kube-public/cluster-info', signedBy: ids(tokens.valid, tokens['auth-only']) });
    expect(String(state.view?.skipped)).toContain(`${secretName(tokens.expired)}: expired`);

    // no token secret, raw or base64, in any history of this deployment (payloads decoded) or log
    const needles = Object.values(tokens).flatMap((t) => [t.secret, b64(t.secret)]);
    let signerHistories = 0;
    for await (const wf of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
      const json = historyToJSON(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory());
      const decoded = [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8')).join('\n');
      for (const n of needles) expect([wf.workflowId, json.includes(n) || decoded.includes(n)]).toEqual([wf.workflowId, false]);
      if (wf.workflowId.startsWith('bootstrapsigner/')) {
        signerHistories++;
        expect(decoded).toContain(tokens.valid.id);
      }
    }
    expect(signerHistories).toBeGreaterThanOrEqual(1);
    const logs = [holder.logFile, survivor.logFile].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    expect(logs).toContain('signed cluster-info');
    for (const n of needles) expect(logs.includes(n)).toBe(false);

    fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'bootstrapsigner-vs-upstream.json'), JSON.stringify({ theirs, ours }, null, 1));
    process.stderr.write(`bootstrap signer: upstream scenario ${upstreamDone - started} ms, ours ${oursDone - upstreamDone} ms\n`);

    // byte-equal to upstream at every step
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    for (const step of Object.keys(theirs)) expect([step, ours[step]]).toEqual([step, theirs[step]]);
    // and what both wrote is the detached JWS of the kubeconfig under each signing token
    const last = theirs['a token allowed to sign later signs'];
    expect(last).toEqual({
      kubeconfig: K2, 'e2e-note': 'not the signer\'s',
      [PREFIX + tokens.valid.id]: computeDetachedSignature(K2, tokens.valid.id, Buffer.from(tokens.valid.secret)),
      [PREFIX + tokens['auth-only'].id]: computeDetachedSignature(K2, tokens['auth-only'].id, Buffer.from(tokens['auth-only'].secret)),
    });
  } finally {
    await connection.close();
  }
}, 120_000);
