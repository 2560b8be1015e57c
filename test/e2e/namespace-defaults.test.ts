import * as fs from 'node:fs';
import { eventually, testClusterAccess, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, clusterIdentityArgs, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { pkiPaths } from '../../starter/local/pki';

/**
 * What every namespace gets from the serviceaccount and root-ca-cert-publisher controllers, and
 * what clusterrole-aggregation keeps in aggregated ClusterRoles, on the real stack.
 */
const rest = testRest(testClusterAccess());
const rootCa = fs.readFileSync(pkiPaths(TEST_DATA_DIR).caCert, 'utf8');
let manager: ManagerProcess;
const created: string[] = [];

interface ConfigMap {
  metadata: { resourceVersion: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  data?: Record<string, string>;
}

const get = <T>(p: string) => rest.request<T>('GET', p).then((r) => r.body, () => undefined);
const saPath = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;

async function bareNamespace(): Promise<string> {
  const name = uniqueName('t-nsdef');
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } });
  created.push(name);
  return name;
}

beforeAll(async () => {
  manager = await startManagerProcess(uniqueName('nsdef-e2e'), [
    '--controllers', 'serviceaccount,root-ca-cert-publisher,clusterrole-aggregation', ...clusterIdentityArgs(),
  ]);
});

afterAll(async () => {
  await manager?.kill();
  for (const ns of created) await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
});

test('a new namespace gets its default ServiceAccount and kube-root-ca.crt within seconds', async () => {
  const ns = await bareNamespace();
  const t0 = Date.now();
  await eventually('default ServiceAccount', () => get(saPath(ns)), 15_000);
  const cm = await eventually('kube-root-ca.crt', () => get<ConfigMap>(cmPath(ns)), 15_000);
  const took = Date.now() - t0;
  expect(cm.data).toEqual({ 'ca.crt': rootCa });
  expect(cm.metadata.annotations?.['kubernetes.io/description']).toBeTruthy();
  console.log(`namespace defaults in ${took} ms`);
});

test('deleting the default ServiceAccount or the ConfigMap brings it back; an edited bundle is restored', async () => {
  const ns = await bareNamespace();
  const sa = await eventually('default ServiceAccount', () => get<{ metadata: { uid: string } }>(saPath(ns)), 15_000);
  await eventually('kube-root-ca.crt', () => get<ConfigMap>(cmPath(ns)), 15_000);

  await rest.request('DELETE', saPath(ns));
  const again = await eventually('default ServiceAccount recreated', async () => {
    const s = await get<{ metadata: { uid: string } }>(saPath(ns));
    return s && s.metadata.uid !== sa.metadata.uid ? s : undefined;
  }, 15_000);
  expect(again.metadata.uid).not.toBe(sa.metadata.uid);

  await rest.request('DELETE', cmPath(ns));
  await eventually('kube-root-ca.crt recreated', async () => (await get<ConfigMap>(cmPath(ns)))?.data?.['ca.crt'] === rootCa, 15_000);

  // an edit that changes the bundle and adds a key: the controller puts back exactly the CA,
  // keeping what is not its business (labels)
  const cur = (await get<ConfigMap>(cmPath(ns)))!;
  await rest.request('PUT', cmPath(ns), { body: { ...cur, metadata: { ...cur.metadata, labels: { mine: 'yes' } }, data: { 'ca.crt': 'tampered', extra: 'x' } } });
  const fixed = await eventually('kube-root-ca.crt restored', async () => {
    const c = await get<ConfigMap>(cmPath(ns));
    return c?.data?.['ca.crt'] === rootCa ? c : undefined;
  }, 15_000);
  expect(fixed.data).toEqual({ 'ca.crt': rootCa });
  expect(fixed.metadata.labels).toEqual({ mine: 'yes' });
});

test('a terminating namespace gets nothing new', async () => {
  const ns = await bareNamespace();
  await eventually('default ServiceAccount', () => get(saPath(ns)), 15_000);
  // a finalizer of our own keeps the namespace Terminating while we look
  const nsObj = (await get<Record<string, unknown> & { spec?: { finalizers?: string[] } }>(`/api/v1/namespaces/${ns}`))!;
  await rest.request('PUT', `/api/v1/namespaces/${ns}/finalize`, { body: { ...nsObj, spec: { finalizers: ['kubernetes', 'temporal-kcm.dev/test-hold'] } } });
  await rest.request('DELETE', `/api/v1/namespaces/${ns}`);
  await rest.request('DELETE', saPath(ns)).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 3000));
  expect(await get(saPath(ns))).toBeUndefined();
  const term = (await get<Record<string, unknown>>(`/api/v1/namespaces/${ns}`))!;
  await rest.request('PUT', `/api/v1/namespaces/${ns}/finalize`, { body: { ...term, spec: { finalizers: [] } } });
});

interface Rule { verbs: string[]; apiGroups?: string[]; resources?: string[] }
interface ClusterRole { metadata: { labels?: Record<string, string>; resourceVersion: string; managedFields?: Array<{ manager: string }> }; rules?: Rule[] }
const rolePath = (name: string) => `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`;

test("aggregated ClusterRoles follow their sources' rules and labels; admin/edit/view are filled", async () => {
  const tag = uniqueName('agg');
  const label = `temporal-kcm.dev/aggregate-to-${tag}`;
  const names = { agg: `${tag}-agg`, a: `${tag}-a`, b: `${tag}-b` };
  const ruleA: Rule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const ruleB: Rule = { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] };
  const post = (body: unknown) => rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body });
  try {
    await post({ metadata: { name: names.agg }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] } });
    await post({ metadata: { name: names.a, labels: { [label]: 'true' } }, rules: [ruleA] });
    await post({ metadata: { name: names.b, labels: { [label]: 'true' } }, rules: [ruleB, ruleA] });
    const rulesOf = async () => (await get<ClusterRole>(rolePath(names.agg)))?.rules ?? [];
    const verbsOf = (rs: Rule[]) => rs.map((r) => `${r.verbs.join()}:${r.resources?.join()}`);

    // name order (a, then b), each rule once
    await eventually('union of a and b', async () => JSON.stringify(verbsOf(await rulesOf())) === JSON.stringify(['get:pods', 'list:deployments']), 15_000);
    const agg = (await get<ClusterRole>(rolePath(names.agg)))!;
    expect(agg.metadata.managedFields?.map((f) => f.manager)).toContain('clusterrole-aggregation-controller');

    // a source losing its label drops out
    const a = (await get<ClusterRole>(rolePath(names.a)))!;
    await rest.request('PUT', rolePath(names.a), { body: { ...a, metadata: { ...a.metadata, labels: {} } } });
    await eventually('b only', async () => JSON.stringify(verbsOf(await rulesOf())) === JSON.stringify(['list:deployments', 'get:pods']), 15_000);

    // a source gaining a rule adds it
    const b = (await get<ClusterRole>(rolePath(names.b)))!;
    await rest.request('PUT', rolePath(names.b), { body: { ...b, rules: [...(b.rules ?? []), { verbs: ['watch'], apiGroups: [''], resources: ['secrets'] }] } });
    await eventually('new rule', async () => verbsOf(await rulesOf()).includes('watch:secrets'), 15_000);
  } finally {
    for (const n of Object.values(names)) await rest.request('DELETE', rolePath(n)).catch(() => undefined);
  }
  for (const builtin of ['admin', 'edit', 'view']) {
    await eventually(`${builtin} filled`, async () => ((await get<ClusterRole>(rolePath(builtin)))?.rules ?? []).length > 0, 15_000);
  }
});
