import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { KubeObject } from '../../activities/kube/projections';
import { ensureBinaries } from '../../starter/local/binaries';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { ManagerProcess, metricValue, startManagerProcess } from '../support/manager';
import { cleanNamespace, eventsFor, listPods, testRest } from '../support/kube';
import { TEST_DATA_DIR } from '../support/stack';

/** Cascading deletion as kubectl users see it, by the garbage collector on the real stack. */
const rest = testRest(testClusterAccess());
let kubectlBin: string;
let manager: ManagerProcess;
let ns: string;

type Obj = KubeObject & { metadata: NonNullable<KubeObject['metadata']> & { finalizers?: string[] } };

function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlBin, ['--kubeconfig', path.join(TEST_DATA_DIR, 'admin.kubeconfig'), '-n', ns, ...args], { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout));
  });
}

const list = async (p: string): Promise<Obj[]> => (await rest.request<{ items: Obj[] }>('GET', p)).body.items;
const rsPath = () => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const exists = async (p: string) => rest.request('GET', p).then(() => true, () => false);

async function deployment(name: string, replicas = 2): Promise<Obj> {
  await kubectl('create', 'deployment', name, `--image=registry.invalid/${name}:1`, `--replicas=${replicas}`);
  await kubectl('rollout', 'status', `deployment/${name}`, '--timeout=90s');
  return (await rest.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`)).body;
}

const managerTaskQueue = uniqueName('gc-e2e');
const managerArgs = ['--controllers', 'replicaset,deployment,garbagecollector', '--kube-api-qps', '200', '--kube-api-burst', '400', '--informer-heartbeat-timeout', '3s'];

beforeAll(async () => {
  kubectlBin = (await ensureBinaries(['kubectl'])).kubectl;
  ns = await freshNamespace(testClusterAccess(), 'gc');
  manager = await startManagerProcess(managerTaskQueue, managerArgs);
});

afterAll(async () => {
  await manager?.kill();
  if (ns) {
    await cleanNamespace(rest, ns);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}/configmaps`, { body: {} }).catch(() => undefined);
  }
});

test('kubectl delete deployment (background) removes its ReplicaSets and pods', async () => {
  await deployment('bg');
  await kubectl('delete', 'deployment', 'bg');
  await eventually('ReplicaSets and pods collected', async () =>
    (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('bg-')).length === 0 && (await listPods(rest, ns, 'app=bg')).length === 0, 60_000);
});

test('--cascade=foreground: dependents go first, the Deployment last, through the foregroundDeletion finalizer', async () => {
  await deployment('fg');
  await kubectl('delete', 'deployment', 'fg', '--cascade=foreground', '--wait=false');
  let sawFinalizer = false;
  let deploymentOutlivedReplicaSets = false;
  await eventually('everything gone', async () => {
    const d = await rest.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/fg`).then((r) => r.body, () => undefined);
    if (d?.metadata.finalizers?.includes('foregroundDeletion') && d.metadata.deletionTimestamp) sawFinalizer = true;
    const rss = (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('fg-'));
    if (d && rss.length === 0) deploymentOutlivedReplicaSets = true;
    return !d && rss.length === 0 && (await listPods(rest, ns, 'app=fg')).length === 0;
  }, 60_000, 100);
  expect(sawFinalizer).toBe(true);
  expect(deploymentOutlivedReplicaSets).toBe(true);
});

test('--cascade=orphan: ReplicaSets and pods stay, without their ownerReferences', async () => {
  const d = await deployment('orph');
  await kubectl('delete', 'deployment', 'orph', '--cascade=orphan');
  await eventually('deployment gone, ReplicaSet orphaned', async () => {
    const gone = !(await exists(`/apis/apps/v1/namespaces/${ns}/deployments/orph`));
    const rss = (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('orph-'));
    return gone && rss.length === 1 && !(rss[0].metadata.ownerReferences ?? []).some((o) => o.uid === d.metadata.uid);
  }, 60_000);
  await new Promise((r) => setTimeout(r, 3000));
  expect((await listPods(rest, ns, 'app=orph')).length).toBe(2);
});

test('--cascade=orphan, 20 times while the ReplicaSets\' status is being written: no owner goes before its ReplicaSet is released, and no ReplicaSet is lost', async () => {
  const names = Array.from({ length: 20 }, (_, i) => `orph-race-${i}`);
  const owners = await Promise.all(names.map((n) => deployment(n, 2)));
  const uidOf = new Map(owners.map((d) => [d.metadata.uid!, d.metadata.name!]));
  const rsBefore = (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('orph-race-'));
  expect(rsBefore).toHaveLength(20);

  // a pod of each goes first, so the replicaset controller writes its ReplicaSet's status while the collector orphans it
  const pods = await listPods(rest, ns);
  const deletes = names.map(async (n) => {
    const pod = pods.find((p) => p.metadata?.labels?.app === n);
    if (pod) await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${pod.metadata!.name}`).catch(() => undefined);
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/${n}`, { body: { propagationPolicy: 'Orphan' } });
  });

  // every 100 ms: the owners still there (read first), then who the ReplicaSets point at (read after).
  // A ReplicaSet that still points at an owner already gone was released too late.
  const violations: string[] = [];
  let gone = false;
  const poll = (async () => {
    while (!gone) {
      const live = new Set((await list(`/apis/apps/v1/namespaces/${ns}/deployments`)).map((d) => d.metadata.uid));
      for (const rs of (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('orph-race-'))) {
        for (const ref of rs.metadata.ownerReferences ?? []) {
          if (uidOf.has(ref.uid) && !live.has(ref.uid)) violations.push(`${rs.metadata.name} still names ${uidOf.get(ref.uid)}, already gone`);
        }
      }
      gone = [...uidOf.keys()].every((uid) => !live.has(uid));
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.all(deletes);
  await Promise.race([poll, new Promise((_, reject) => setTimeout(() => reject(new Error('owners not gone within 90 s')), 90_000))]);
  expect(violations).toEqual([]);

  // and the collector does not come back for them as dangling
  await new Promise((r) => setTimeout(r, 3000));
  const rsAfter = (await list(rsPath())).filter((r) => r.metadata.name?.startsWith('orph-race-'));
  expect(rsAfter.map((r) => r.metadata.uid).sort()).toEqual(rsBefore.map((r) => r.metadata.uid).sort());
  expect(rsAfter.filter((r) => (r.metadata.ownerReferences ?? []).length > 0).map((r) => r.metadata.name)).toEqual([]);
}, 240_000);

test('an ownerReference to a UID that never existed: the dependent is deleted', async () => {
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'dangling',
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }] } } });
  await eventually('dangling dependent deleted', async () => !(await exists(`/api/v1/namespaces/${ns}/configmaps/dangling`)), 60_000);
});

test('a cross-namespace owner reference: Warning OwnerRefInvalidNamespace, the invalid child deleted as upstream does, the owner untouched', async () => {
  const other = await freshNamespace(testClusterAccess(), 'gc-other');
  const owner = (await rest.request<Obj>('POST', `/api/v1/namespaces/${other}/configmaps`, { body: { metadata: { name: 'owner' } } })).body;
  const valid = (await rest.request<Obj>('POST', `/api/v1/namespaces/${other}/configmaps`, { body: { metadata: { name: 'valid-child',
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] } } })).body;
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'cross',
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] } } });
  await eventually('warning event', async () => (await eventsFor(rest, ns, 'cross', 'OwnerRefInvalidNamespace')).length > 0, 60_000);
  // as upstream: the invalid reference counts as dangling, so the child goes; the owner and its valid child stay
  await eventually('invalid child deleted', async () => !(await exists(`/api/v1/namespaces/${ns}/configmaps/cross`)), 60_000);
  await new Promise((r) => setTimeout(r, 2000));
  expect(await exists(`/api/v1/namespaces/${other}/configmaps/owner`)).toBe(true);
  expect((await rest.request<Obj>('GET', `/api/v1/namespaces/${other}/configmaps/valid-child`)).body.metadata.uid).toBe(valid.metadata.uid);
});

test('a CRD created after the manager started: deleting an instance deletes the ConfigMaps it owns', async () => {
  const group = `${uniqueName('gc')}.temporal-kcm.dev`;
  await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: {
    metadata: { name: `widgets.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  } });
  const widget = await eventually('CRD served', async () =>
    (await rest.request<Obj>('POST', `/apis/${group}/v1/namespaces/${ns}/widgets`, { body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' } } })).body, 60_000, 500);
  for (const i of [1, 2]) {
    await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `widget-part-${i}`,
      ownerReferences: [{ apiVersion: `${group}/v1`, kind: 'Widget', name: 'w1', uid: widget.metadata.uid }] } } });
  }
  // and a Widget owned by a ConfigMap, to orphan: a custom resource takes no strategic merge patch
  const holder = (await rest.request<Obj>('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'widget-holder' } } })).body;
  await rest.request('POST', `/apis/${group}/v1/namespaces/${ns}/widgets`, { body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w2',
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'widget-holder', uid: holder.metadata.uid }] } } });
  // wait until the collector has seen the new kind (it rediscovers every 30 s) and watches it before deleting
  await eventually('the collector watches widgets', async () =>
    metricValue(await manager.metrics(), 'kcm_informer_watches', { resource: `widgets.${group}` }) === 1, 45_000, 500);
  // and has listed its instances into the graph
  await new Promise((r) => setTimeout(r, 1000));
  expect(await exists(`/api/v1/namespaces/${ns}/configmaps/widget-part-1`)).toBe(true);
  await rest.request('DELETE', `/apis/${group}/v1/namespaces/${ns}/widgets/w1`);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/widget-holder`, { body: { propagationPolicy: 'Orphan' } });
  await eventually('parts collected', async () =>
    !(await exists(`/api/v1/namespaces/${ns}/configmaps/widget-part-1`)) && !(await exists(`/api/v1/namespaces/${ns}/configmaps/widget-part-2`)), 60_000);
  await eventually('holder gone, its Widget orphaned', async () => !(await exists(`/api/v1/namespaces/${ns}/configmaps/widget-holder`)), 60_000);
  const w2 = (await rest.request<Obj>('GET', `/apis/${group}/v1/namespaces/${ns}/widgets/w2`)).body;
  expect(w2.metadata.ownerReferences ?? []).toEqual([]);
});

test('kill -9 of a replica during a foreground deletion of an owner with 200 dependents: it completes, and nothing that should live is deleted', async () => {
  const second = await startManagerProcess(managerTaskQueue, managerArgs);
  const owner = (await rest.request<Obj>('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'big-owner' } } })).body;
  const keeper = (await rest.request<Obj>('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'keeper' } } })).body;
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'big-owner', uid: owner.metadata.uid, blockOwnerDeletion: true };
  const inFlight: Array<Promise<unknown>> = [];
  for (let i = 0; i < 200; i++) {
    inFlight.push(rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `dep-${i}`, labels: { gc: 'dep' }, ownerReferences: [ref] } } }));
    if (inFlight.length >= 20) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  // must live: a bystander, and a dependent that has a second owner that stays
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'bystander' } } });
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'two-owners', ownerReferences: [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'big-owner', uid: owner.metadata.uid },
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'keeper', uid: keeper.metadata.uid },
  ] } } });
  await new Promise((r) => setTimeout(r, 2000)); // let the graph see them

  await rest.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/big-owner`, { body: { propagationPolicy: 'Foreground' } });
  const deps = async () => (await list(`/api/v1/namespaces/${ns}/configmaps?labelSelector=gc%3Ddep`)).length;
  await eventually('foreground deletion under way', async () => { const n = await deps(); return n < 190 && n > 0; }, 60_000, 50);
  const killedAt = Date.now();
  await manager.kill('SIGKILL');
  manager = second;
  await eventually('owner and all its dependents gone', async () =>
    (await deps()) === 0 && !(await exists(`/api/v1/namespaces/${ns}/configmaps/big-owner`)), 120_000, 200);
  process.stderr.write(`gc failover: foreground deletion of 200 dependents finished ${Date.now() - killedAt} ms after the kill\n`);
  expect(await exists(`/api/v1/namespaces/${ns}/configmaps/bystander`)).toBe(true);
  expect(await exists(`/api/v1/namespaces/${ns}/configmaps/keeper`)).toBe(true);
  const two = (await rest.request<Obj>('GET', `/api/v1/namespaces/${ns}/configmaps/two-owners`)).body;
  expect((two.metadata.ownerReferences ?? []).map((r) => r.name)).toEqual(['keeper']);
});
