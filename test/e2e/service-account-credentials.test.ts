import { AuditLog } from '../support/audit';
import { eventually, testClusterAccess, uniqueName } from '../support/cluster';
import { eventsFor, listPods, testRest } from '../support/kube';
import { ManagerProcess, clusterIdentityArgs, startManagerProcess } from '../support/manager';

/**
 * --use-service-account-credentials: every controller calls the API as its own ServiceAccount in
 * kube-system, so upstream's system:controller:* roles bound what each may do. The API server's
 * audit log says who made each write.
 */
const rest = testRest(testClusterAccess());
let manager: ManagerProcess;
let ns: string;

const auditLog = new AuditLog();
const audit = () => auditLog.events();

/** The users that made successful writes matching the filter. */
function writers(f: { verb: string; resource: string; subresource?: string; namespace?: string }): Set<string> {
  return new Set(audit().filter((e) => e.verb === f.verb && e.objectRef?.resource === f.resource && e.objectRef?.subresource === f.subresource
    && (f.namespace === undefined || e.objectRef?.namespace === f.namespace) && (e.responseStatus?.code ?? 0) < 300).map((e) => e.user.username));
}

const sa = (name: string) => `system:serviceaccount:kube-system:${name}`;

beforeAll(async () => {
  auditLog.mark();
  manager = await startManagerProcess(uniqueName('sacred-e2e'), [
    '--controllers', 'replicaset,deployment,garbagecollector,serviceaccount,root-ca-cert-publisher,resourcequota,clusterrole-aggregation,namespace',
    '--use-service-account-credentials', ...clusterIdentityArgs(),
  ]);
  ns = uniqueName('t-sacred');
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
});

afterAll(async () => {
  await manager?.kill();
  await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  await rest.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${ns}-agg`).catch(() => undefined);
});

test('each controller writes as its own ServiceAccount', async () => {
  await eventually('default ServiceAccount', () => rest.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(() => true), 20_000);
  await eventually('kube-root-ca.crt', () => rest.request('GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`).then(() => true), 20_000);

  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/web:1' }] } } },
  } });
  await eventually('2 available replicas', async () =>
    (await rest.request<{ status?: { availableReplicas?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body.status?.availableReplicas === 2, 60_000);
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
  await eventually('pods collected', async () => (await listPods(rest, ns)).length === 0, 60_000);
  await rest.request('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { metadata: { name: 'q' }, spec: { hard: { pods: '10' } } } });
  await rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: {
    metadata: { name: `${ns}-agg` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] } } });
  await eventually('quota status', async () => !!(await rest.request<{ status?: { used?: unknown } }>('GET', `/api/v1/namespaces/${ns}/resourcequotas/q`)).body.status?.used, 20_000);

  const expected: Array<[Parameters<typeof writers>[0], string]> = [
    [{ verb: 'create', resource: 'serviceaccounts', namespace: ns }, sa('service-account-controller')],
    [{ verb: 'create', resource: 'configmaps', namespace: ns }, sa('root-ca-cert-publisher')],
    [{ verb: 'create', resource: 'replicasets', namespace: ns }, sa('deployment-controller')],
    [{ verb: 'update', resource: 'deployments', subresource: 'status', namespace: ns }, sa('deployment-controller')],
    [{ verb: 'create', resource: 'pods', namespace: ns }, sa('replicaset-controller')],
    [{ verb: 'update', resource: 'replicasets', subresource: 'status', namespace: ns }, sa('replicaset-controller')],
    [{ verb: 'delete', resource: 'replicasets', namespace: ns }, sa('generic-garbage-collector')],
    [{ verb: 'update', resource: 'resourcequotas', subresource: 'status', namespace: ns }, sa('resourcequota-controller')],
  ];
  const aggregated = () => audit().filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'clusterroles' && e.objectRef.name === `${ns}-agg`);
  // the aggregation's patch is waited for too: it can land in the audit log after everything else
  await eventually('audit log written', async () => expected.every(([f]) => writers(f).size > 0) && aggregated().length > 0, 15_000);
  for (const [f, who] of expected) expect({ ...f, writers: [...writers(f)] }).toEqual({ ...f, writers: [who] });
  expect(new Set(aggregated().map((e) => e.user.username))).toEqual(new Set([sa('clusterrole-aggregation-controller')]));
});

test('the namespace controller empties and finalizes a namespace as its own ServiceAccount', async () => {
  const other = uniqueName('t-sacred-del');
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name: other } } });
  await eventually('kube-root-ca.crt', () => rest.request('GET', `/api/v1/namespaces/${other}/configmaps/kube-root-ca.crt`).then(() => true), 20_000);
  await rest.request('DELETE', `/api/v1/namespaces/${other}`);
  await eventually('namespace gone', () => rest.request('GET', `/api/v1/namespaces/${other}`).then(() => false, () => true), 60_000);
  for (const f of [{ verb: 'deletecollection', resource: 'configmaps', namespace: other }, { verb: 'update', resource: 'namespaces', subresource: 'finalize' }]) {
    const who = new Set(audit().filter((e) => e.verb === f.verb && e.objectRef?.resource === f.resource && e.objectRef?.subresource === f.subresource
      && (f.namespace ? e.objectRef?.namespace === f.namespace : e.objectRef?.name === other)).map((e) => e.user.username));
    expect({ ...f, who: [...who] }).toEqual({ ...f, who: [sa('namespace-controller')] });
  }
});

interface Rule { verbs: string[]; apiGroups?: string[]; resources?: string[] }
interface Role { metadata: { resourceVersion?: string }; rules: Rule[] }

test('a write outside the role is refused by RBAC, and works again once the role allows it', async () => {
  // take `create pods` out of the controller's role: it can still read, so it tries, and is refused
  const rolePath = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:replicaset-controller';
  const original = (await rest.request<Role>('GET', rolePath)).body;
  const narrowed = original.rules.map((r) => (r.resources?.includes('pods') ? { ...r, verbs: r.verbs.filter((v) => v !== 'create') } : r));
  await rest.request('PUT', rolePath, { body: { ...original, rules: narrowed } });
  try {
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'narrowed' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'narrowed' } }, template: { metadata: { labels: { app: 'narrowed' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/n:1' }] } } },
    } });
    const refused = await eventually('pod create refused', async () => audit().find((e) => e.verb === 'create' && e.objectRef?.resource === 'pods'
      && e.objectRef.namespace === ns && e.user.username === sa('replicaset-controller') && e.responseStatus?.code === 403), 30_000);
    expect(refused.responseStatus?.code).toBe(403);
    // upstream's FailedCreate Warning, carrying the API server's refusal
    const warning = await eventually('FailedCreate event', async () => (await eventsFor(rest, ns, 'narrowed', 'FailedCreate'))[0], 30_000);
    expect(warning.message).toContain('forbidden');
    expect(warning.message).toContain(sa('replicaset-controller'));
    expect(await listPods(rest, ns, 'app=narrowed')).toHaveLength(0);
  } finally {
    const cur = (await rest.request<Role>('GET', rolePath)).body;
    await rest.request('PUT', rolePath, { body: { ...original, metadata: { ...original.metadata, resourceVersion: cur.metadata.resourceVersion } } });
  }
  // the backed-off retry succeeds once RBAC allows it again
  await eventually('pods created once the role allows it', async () => (await listPods(rest, ns, 'app=narrowed')).length === 2, 90_000);
});
