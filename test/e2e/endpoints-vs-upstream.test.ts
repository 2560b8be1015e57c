import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubeObject } from '../../activities/kube/projections';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { listPods, testRest } from '../support/kube';
import { ManagerProcess, metricValue, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * Endpoints and EndpointSlices as upstream kube-controller-manager writes them, compared field by
 * field (names and timestamps aside) on the same objects: upstream and temporal-kcm take turns on
 * one namespace, each starting from no generated objects.
 */
const rest = testRest(testClusterAccess());
const CONTROLLERS = 'endpoint,endpointslice,endpointslicemirroring';
const PODS = 250;
let ns: string;
const upstream = new UpstreamKcm('endpoints');
let ours: ManagerProcess | undefined;
const taskQueue = uniqueName('ep-e2e');

type Obj = KubeObject & Record<string, unknown>;
const list = async (p: string) => (await rest.request<{ items: Obj[] }>('GET', p)).body.items;
const sliceList = () => list(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`);

/** Remove every generated object, so the next controller starts from nothing. */
async function clearGenerated(): Promise<void> {
  for (const s of ['web', 'web-headless']) await rest.request('DELETE', `/api/v1/namespaces/${ns}/endpoints/${s}`).catch(() => undefined);
  await rest.request('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { body: {} });
  await eventually('generated objects gone', async () => (await sliceList()).length === 0, 30_000);
}

const strip = (o: Record<string, string> | undefined, drop: string[]) =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !drop.includes(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';

type Ref = { name?: string; uid?: string; namespace?: string; kind?: string } | undefined;
const ref = (r: Ref) => (r ? { kind: r.kind, namespace: r.namespace, name: r.name } : undefined);

/** What a kubectl user sees, timestamps and generated names aside. */
async function snapshot(): Promise<{ endpoints: unknown; slices: unknown[]; flat: unknown[]; groups: Array<{ slices: number; endpoints: number }> }> {
  const endpoints = (await list(`/api/v1/namespaces/${ns}/endpoints`)).filter((e) => e.metadata?.name !== 'ext')
    .map((e) => ({
      name: e.metadata?.name, labels: strip(e.metadata?.labels, []), annotations: strip(e.metadata?.annotations, [TRIGGER]),
      subsets: ((e.subsets as Array<Record<string, unknown>> | undefined) ?? []).map((s) => ({
        addresses: ((s.addresses as Array<Record<string, unknown>> | undefined) ?? []).map((a) => ({ ...a, targetRef: ref(a.targetRef as Ref) })),
        notReadyAddresses: ((s.notReadyAddresses as Array<Record<string, unknown>> | undefined) ?? []).map((a) => ({ ...a, targetRef: ref(a.targetRef as Ref) })),
        ports: s.ports,
      })),
    })).sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const slices = (await sliceList()).map((s) => ({
    labels: strip(s.metadata?.labels, []),
    annotations: strip(s.metadata?.annotations, [TRIGGER]),
    owners: (s.metadata?.ownerReferences ?? []).map((o) => ({ kind: o.kind, name: o.name, controller: o.controller, blockOwnerDeletion: o.blockOwnerDeletion })),
    addressType: s.addressType,
    ports: s.ports,
    endpoints: ((s.endpoints as Array<Record<string, unknown>> | undefined) ?? [])
      .map((e): Record<string, unknown> & { targetRef?: Ref } => ({ ...e, targetRef: ref(e.targetRef as Ref) }))
      .sort((a, b) => String(a.targetRef?.name ?? (a.addresses as string[])[0]).localeCompare(String(b.targetRef?.name ?? (b.addresses as string[])[0]))),
  }));
  const flat = slices.flatMap((s) => s.endpoints.map((e) => ({ service: s.labels['kubernetes.io/service-name'], managedBy: s.labels['endpointslice.kubernetes.io/managed-by'],
    addressType: s.addressType, ports: s.ports, ...e })))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  // Which pods share a slice, and even how many slices a port set takes on a fresh start, follow
  // the order in which upstream's caches fill (a pod whose node is not cached yet waits for a later
  // sync and lands in a slice of its own). So slices are compared by shape (everything but their
  // endpoints), the endpoints all together, and the packing by its own rule.
  const shapes = [...new Set(slices.map(({ endpoints: _eps, ...rest }) => JSON.stringify(rest)))].sort();
  const perGroup = new Map<string, { slices: number; endpoints: number }>();
  for (const { endpoints: eps, ...rest } of slices) {
    const g = perGroup.get(JSON.stringify(rest)) ?? { slices: 0, endpoints: 0 };
    perGroup.set(JSON.stringify(rest), { slices: g.slices + 1, endpoints: g.endpoints + eps.length });
  }
  return { endpoints, slices: shapes, flat, groups: [...perGroup.values()] };
}

/** Both sides' state, kept next to the stack's logs for whoever reads a failed comparison. */
function keep(label: string, state: unknown): void {
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `endpoints-compare-${label}.json`), JSON.stringify(state, null, 1));
}

type Snapshot = Awaited<ReturnType<typeof snapshot>>;

/**
 * What the controllers' output still lacks of the pods ('' once caught up): each Service with a selector has its
 * Endpoints, with one ready address per ready pod that is not terminating (`web`, whose not-ready
 * pods are listed apart), and slices holding one endpoint per selected pod (terminating ones
 * included). Two equal reads alone are not enough: on a loaded machine a controller can pause
 * longer than the gap between them in the middle of its first writes.
 */
async function lagging(snap: Snapshot): Promise<string> {
  const pods = await listPods(rest, ns, 'app=web');
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const ready = live.filter((p) => (p.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  type Address = { targetRef?: { name?: string } };
  const endpoints = snap.endpoints as Array<{ name: string; subsets: Array<{ addresses: Address[]; notReadyAddresses: Address[] }> }>;
  const web = endpoints.find((e) => e.name === 'web');
  // a pod is in a subset per port set it resolves (http's and metrics'): counted once, by name
  const count = (k: 'addresses' | 'notReadyAddresses') => new Set((web?.subsets ?? []).flatMap((s) => s[k].map((a) => a.targetRef?.name))).size;
  const perService = (name: string) => (snap.flat as Array<{ service?: string }>).filter((e) => e.service === name).length;
  const want = {
    endpoints: 'web,web-headless', webReady: ready.length, webNotReady: live.length - ready.length, webSliced: pods.length, headlessSliced: pods.length,
  };
  const have = {
    endpoints: endpoints.map((e) => e.name).join(','), webReady: count('addresses'), webNotReady: count('notReadyAddresses'),
    webSliced: perService('web'), headlessSliced: perService('web-headless'),
  };
  return JSON.stringify(have) === JSON.stringify(want) ? '' : `want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`;
}

/** The generated objects once the controllers have caught up and nothing changes for 2 s. */
async function settled(): Promise<Snapshot> {
  let behind = 'never settled';
  let prev = JSON.stringify(await snapshot());
  return eventually('endpoints settled', async () => {
    await new Promise((r) => setTimeout(r, 2000));
    const cur = JSON.stringify(await snapshot());
    const same = cur === prev;
    prev = cur;
    if (!same) return undefined;
    const snap = JSON.parse(cur) as Snapshot;
    behind = await lagging(snap);
    return behind === '' ? snap : undefined;
  }, 120_000, 0).catch((e: Error) => {
    throw new Error(`${e.message}; the controllers' output, settled but behind the pods: ${behind}`);
  });
}

function pod(i: number) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `web-${String(i).padStart(3, '0')}`, labels: { app: 'web' },
      // a few pods keep terminating for a long time, so both controllers see them terminating
      ...(i < 3 ? { annotations: { 'kwok.temporal-kcm.dev/termination-delay-ms': '600000' } } : {}) },
    spec: {
      ...(i % 50 === 0 ? { hostname: `h${i}`, subdomain: 'web-headless' } : {}),
      containers: [{ name: 'c', image: 'registry.invalid/web:1', ports: [{ name: 'http', containerPort: i % 2 ? 8080 : 8081 }, { name: 'metrics', containerPort: 9090 }] }],
    },
  };
}

const setReady = (name: string, ready: boolean) => rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
  body: { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } }, contentType: 'application/strategic-merge-patch+json',
});

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'ep');
  const post = (p: string, body: unknown) => rest.request('POST', `/api/v1/namespaces/${ns}/${p}`, { body });
  await post('services', { metadata: { name: 'web', labels: { tier: 'front' } },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 9090 }] } });
  await post('services', { metadata: { name: 'web-headless' },
    spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
  await post('services', { metadata: { name: 'ext' }, spec: { ports: [{ name: 'db', port: 5432 }] } });
  await post('endpoints', { metadata: { name: 'ext', labels: { custom: 'yes' } },
    subsets: [{ addresses: [{ ip: '10.200.0.1' }, { ip: '10.200.0.2' }], notReadyAddresses: [{ ip: '10.200.0.3' }], ports: [{ name: 'db', port: 5432 }] }] });
  for (let i = 0; i < PODS; i += 25) await Promise.all(Array.from({ length: 25 }, (_, j) => post('pods', pod(i + j))));
  await eventually('pods running with IPs', async () => (await listPods(rest, ns)).filter((p) => (p.status as { podIP?: string } | undefined)?.podIP).length === PODS, 120_000);
  // not ready, and terminating, pods are part of what must match
  for (let i = 10; i < 20; i++) await setReady(pod(i).metadata.name, false);
  for (let i = 0; i < 3; i++) await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${pod(i).metadata.name}`);
}, 300_000);

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  if (ns) await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`, { body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
});

test('250 pods, two Services and a selector-less one: the same Endpoints and EndpointSlices as upstream, before and after churn', async () => {
  await upstream.start(CONTROLLERS, ['--kube-api-qps=200', '--kube-api-burst=400']);
  const theirs1 = await settled();
  keep('upstream-1', theirs1);
  await upstream.stop();
  await clearGenerated();

  ours = await startManagerProcess(taskQueue, ['--controllers', CONTROLLERS, '--kube-api-qps', '200', '--kube-api-burst', '400']);
  const ours1 = await settled();
  keep('ours-1', ours1);
  expect(ours1.endpoints).toEqual(theirs1.endpoints);
  expect(ours1.slices).toEqual(theirs1.slices);
  expect(ours1.flat).toEqual(theirs1.flat);
  // names are the API server's (generateName `<service>-`), as upstream's
  for (const sl of await sliceList()) expect((sl.metadata as { generateName?: string }).generateName).toBe(`${sl.metadata?.labels?.['kubernetes.io/service-name']}-`);
  // from scratch, every port set takes as few slices as its endpoints need
  for (const g of ours1.groups) expect(g.slices).toBe(Math.max(1, Math.ceil(g.endpoints / 100)));

  // one readiness change rewrites one slice of each Service that holds the pod
  const before = new Map((await sliceList()).map((s) => [s.metadata!.uid!, s.metadata!.resourceVersion!]));
  await setReady(pod(100).metadata.name, false);
  await eventually('pod 100 not ready in Endpoints', async () => JSON.stringify((await rest.request('GET', `/api/v1/namespaces/${ns}/endpoints/web`)).body)
    .match(new RegExp(`"notReadyAddresses":\\[[^\\]]*${pod(100).metadata.name}`)) !== null, 30_000);
  await new Promise((r) => setTimeout(r, 3000));
  const changed = (await sliceList()).filter((s) => before.get(s.metadata!.uid!) !== s.metadata!.resourceVersion)
    .map((s) => s.metadata?.labels?.['kubernetes.io/service-name']).sort();
  expect(changed).toEqual(['web', 'web-headless']);

  // a managed slice someone deletes is replaced, its endpoints back where they were
  const victim = (await sliceList()).find((sl) => sl.metadata?.labels?.['kubernetes.io/service-name'] === 'web')!;
  const beforeDelete = JSON.stringify((await snapshot()).flat);
  await rest.request('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${victim.metadata!.name}`);
  await eventually('slice replaced', async () => JSON.stringify((await snapshot()).flat) === beforeDelete, 30_000);

  // churn: readiness both ways, labels that stop matching, deletions; then measure the cost
  const metrics0 = await ours.metrics();
  // about 500 readiness changes over the 250 pods, a few at a time: every pod flips, then flips back
  const live = Array.from({ length: PODS - 3 }, (_, i) => pod(i + 3).metadata.name);
  for (const round of [0, 1]) {
    for (let i = 0; i < live.length; i += 5) {
      await Promise.all(live.slice(i, i + 5).map((name, j) => setReady(name, (i + j + round) % 2 === 0)));
    }
  }
  for (let i = 200; i < 205; i++) {
    await rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/${pod(i).metadata.name}`, { body: { metadata: { labels: { app: 'moved' } } }, contentType: 'application/merge-patch+json' });
  }
  for (let i = 240; i < 245; i++) {
    await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${pod(i).metadata.name}`, { body: { gracePeriodSeconds: 0 } });
  }
  const ours2 = await settled();
  keep('ours-2', ours2);
  const metrics1 = await ours.metrics();
  const delta = (name: string, labels: Record<string, string>) => metricValue(metrics1, name, labels) - metricValue(metrics0, name, labels);
  // pod events as the watch delivered them (a patch that changed nothing is no event)
  const podEvents = ['MODIFIED', 'DELETED'].reduce((n, type) => n + delta('kcm_watch_events_total', { resource: 'pods', type }), 0);
  const reconciles = delta('kcm_reconciles_total', { controller: 'endpoint' }) + delta('kcm_reconciles_total', { controller: 'endpointslice' });
  const writes = ['POST', 'PUT', 'DELETE'].reduce((n, verb) => n + delta('kcm_api_requests_total', { verb, resource: 'endpoints' }) + delta('kcm_api_requests_total', { verb, resource: 'endpointslices' }), 0);
  console.log(JSON.stringify({ podEvents, reconciles, writes, reconcilesPerPodEvent: reconciles / podEvents, writesPerPodEvent: writes / podEvents }));
  await ours.kill();
  ours = undefined;
  await clearGenerated();

  await upstream.start(CONTROLLERS, ['--kube-api-qps=200', '--kube-api-burst=400']);
  const theirs2 = await settled();
  keep('upstream-2', theirs2);
  await upstream.stop();
  expect(ours2.endpoints).toEqual(theirs2.endpoints);
  // upstream packed from scratch, ours in place: the same endpoints, in slices of at most 100
  expect(ours2.flat).toEqual(theirs2.flat);
  expect(ours2.slices).toEqual(theirs2.slices);
  for (const g of ours2.groups) expect(g.endpoints).toBeLessThanOrEqual(g.slices * 100);
});

test('a selector-less Service with hand-written Endpoints is mirrored; deleting the Service removes what was generated', async () => {
  await ours?.kill(); // left running by a failed comparison: two managers would race for the same workflows
  ours = await startManagerProcess(taskQueue, ['--controllers', CONTROLLERS]);
  const post = (p: string, body: unknown) => rest.request('POST', `/api/v1/namespaces/${ns}/${p}`, { body });
  await post('services', { metadata: { name: 'ext2' }, spec: { ports: [{ name: 'https', port: 443 }] } });
  await post('endpoints', { metadata: { name: 'ext2' }, subsets: [{ addresses: [{ ip: '10.201.0.1' }], ports: [{ name: 'https', port: 443 }] }] });
  const mirrored = () => list(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=ext2')}`);
  const slices = await eventually('mirrored slice', async () => ((await mirrored()).length ? mirrored() : undefined), 30_000);
  expect(slices).toHaveLength(1);
  expect(slices[0].metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).toBe('endpointslicemirroring-controller.k8s.io');
  expect((slices[0].endpoints as Array<{ addresses: string[] }>).map((e) => e.addresses)).toEqual([['10.201.0.1']]);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/services/ext2`);
  await eventually('mirrored slice removed', async () => (await mirrored()).length === 0, 30_000);
  await ours.kill();
  ours = undefined;
});
