import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import * as fs from 'node:fs';
import { Client } from '@temporalio/client';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { pkiPaths } from '../../starter/local/pki';
import { eventually, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, clusterIdentityArgs, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * The token controller fills service-account-token Secrets with a token the API server accepts,
 * removes them with their ServiceAccount, and never lets the token into a history or a log.
 */
const rest = testRest(testClusterAccess());
const rootCa = fs.readFileSync(pkiPaths(TEST_DATA_DIR).caCert, 'utf8');
const taskQueue = uniqueName('token-e2e');
let manager: ManagerProcess;
let ns: string;

interface Secret { metadata: { uid: string; annotations?: Record<string, string> }; data?: Record<string, string> }
const secretPath = (name: string) => `/api/v1/namespaces/${ns}/secrets/${name}`;
const get = <T>(p: string) => rest.request<T>('GET', p).then((r) => r.body, () => undefined);
const decode = (b64?: string) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

beforeAll(async () => {
  manager = await startManagerProcess(taskQueue, ['--controllers', 'serviceaccount,serviceaccount-token', ...clusterIdentityArgs()]);
  ns = uniqueName('t-token');
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
});

afterAll(async () => {
  await manager?.kill();
  await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
});

test('a token Secret is filled, authenticates as its ServiceAccount, goes with it, and its token is in no history or log', async () => {
  await rest.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'robot' } } });
  const sa = (await get<{ metadata: { uid: string } }>(`/api/v1/namespaces/${ns}/serviceaccounts/robot`))!;
  await rest.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: {
    metadata: { name: 'robot-token', annotations: { 'kubernetes.io/service-account.name': 'robot' } },
    type: 'kubernetes.io/service-account-token',
  } });

  const filled = await eventually('token filled', async () => {
    const s = await get<Secret>(secretPath('robot-token'));
    return s?.data?.token ? s : undefined;
  }, 20_000);
  expect(decode(filled.data?.['ca.crt'])).toBe(rootCa);
  expect(decode(filled.data?.namespace)).toBe(ns);
  expect(filled.metadata.annotations?.['kubernetes.io/service-account.uid']).toBe(sa.metadata.uid);
  const token = decode(filled.data?.token);

  // the API server takes it: a self-review with the token names the ServiceAccount
  const asRobot = rest.withAuth({ token: async () => token, invalidate: () => undefined }, new TokenBucket(10, 10));
  const review = await asRobot.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  expect(review.body.status.userInfo.username).toBe(`system:serviceaccount:${ns}:robot`);

  // an emptied token is filled again
  const cur = (await get<Secret & Record<string, unknown>>(secretPath('robot-token')))!;
  await rest.request('PUT', secretPath('robot-token'), { body: { ...cur, data: { ...cur.data, token: '' } } });
  await eventually('token refilled', async () => !!(await get<Secret>(secretPath('robot-token')))?.data?.token, 20_000);
  const secondToken = decode((await get<Secret>(secretPath('robot-token')))?.data?.token);

  // the Secret goes with its ServiceAccount
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/robot`);
  await eventually('token Secret deleted', async () => (await get(secretPath('robot-token'))) === undefined, 20_000);

  // no token, raw or encoded, in any workflow history on this task queue or in the manager's log
  const needles = [token, secondToken].flatMap((t) => [t, Buffer.from(t).toString('base64'), t.split('.')[2]]);
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    let histories = 0;
    for await (const wf of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
      const text = JSON.stringify(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory());
      for (const n of needles) expect(text.includes(n)).toBe(false);
      histories++;
    }
    expect(histories).toBeGreaterThanOrEqual(3); // the informer, the Secret's workflow, the namespace's
  } finally {
    await connection.close();
  }
  const log = fs.readFileSync(manager.logFile, 'utf8');
  expect(log).toContain('robot-token');
  for (const n of needles) expect(log.includes(n)).toBe(false);
});
