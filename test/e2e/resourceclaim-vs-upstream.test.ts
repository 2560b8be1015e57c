import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { readState } from '../../starter/local/stack';
import { DRA_DEVICE_CLASS, ensureDra } from '../../starter/local/dra';
import { eventually, freshNamespace, testAdminTarget, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest, getIfExists } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The resource claim controller compared with upstream kube-controller-manager v1.35.4 on the same
 * stack (whose DeviceClass and ResourceSlices let kube-scheduler allocate). Under each manager, in
 * a namespace of its own, with the garbage collector beside it (it deletes the claims of deleted
 * pods, upstream's controller leaves those to it):
 *  - `solo` and `doomed` use a ResourceClaimTemplate, `user` a ResourceClaim the test made: the
 *    generated claims appear, the scheduler allocates and reserves them, kwok runs the pods;
 *  - a burst of pods with templates; ours is killed with kill -9 right after the first of their
 *    claims appears, and a new replica takes over: every pod ends with exactly one claim;
 *  - `user` completes: `shared` loses its reservation, allocation and finalizer, and stays;
 *  - `solo` completes: its generated claim is released and deleted;
 *  - `doomed` is deleted: its claim's reservation goes and the claim with it.
 * After each step, the pods' status.resourceClaimStatuses and the claims (name pattern,
 * annotations, labels, owners, spec, reservedFor, allocation, finalizers) must equal upstream's.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const CONTROLLERS = 'resourceclaim-controller,garbage-collector-controller';
const ARGS = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s'];
const BURST = 6;
const OUTCOME = 'kwok.temporal-kcm.dev/outcome';

type Meta = { name: string; generateName?: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
  finalizers?: string[]; deletionTimestamp?: string };
type Claim = { metadata: Meta; spec: unknown; status?: { allocation?: unknown; reservedFor?: Array<{ resource: string; name: string; uid: string }> } };
type Pod = { metadata: Meta; spec: { nodeName?: string }; status?: { phase?: string; resourceClaimStatuses?: Array<{ name: string; resourceClaimName?: string }> } };
type Event = { reason: string; message: string; type: string; involvedObject: { kind: string; name: string } };

const upstream = new UpstreamKcm('resourceclaim');
let ours: ManagerProcess | undefined;
const namespaces: string[] = [];

const DEVICES = { requests: [{ name: 'gpu', exactly: { deviceClassName: DRA_DEVICE_CLASS } }] };

const getOr = <T>(p: string) => getIfExists<T>(rest, p);

const claimsPath = (ns: string) => `/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaims`;
const podPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;

async function pod(ns: string, name: string, entries: Array<Record<string, string>>): Promise<void> {
  await rest.request('POST', podPath(ns), { body: {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { [OUTCOME]: 'run' } },
    spec: {
      terminationGracePeriodSeconds: 0,
      resourceClaims: entries,
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { claims: entries.map((e) => ({ name: e.name })) } }],
    },
  } });
}

async function claims(ns: string): Promise<Claim[]> {
  return (await rest.request<{ items: Claim[] }>('GET', claimsPath(ns))).body.items;
}

async function finish(ns: string, name: string): Promise<void> {
  await rest.request('PATCH', podPath(ns, name), { contentType: 'application/merge-patch+json', body: { metadata: { labels: { [OUTCOME]: 'succeed' } } } });
}

/** A claim as a user compares it: the generated name's random part and UIDs left out, owners by name. */
function claimShape(c: Claim | undefined, podUids: Map<string, string>) {
  if (!c) return 'gone';
  const gen = c.metadata.generateName;
  return {
    name: gen && c.metadata.name.startsWith(gen) && c.metadata.name.length === gen.length + 5 ? `${gen}*****` : c.metadata.name,
    labels: c.metadata.labels ?? {},
    annotations: c.metadata.annotations ?? {},
    ownerReferences: (c.metadata.ownerReferences ?? []).map((o) => ({ ...o, uid: podUids.get(o.uid) === o.name ? 'the pod' : o.uid })),
    finalizers: c.metadata.finalizers ?? [],
    deleting: !!c.metadata.deletionTimestamp,
    spec: c.spec,
    reservedFor: (c.status?.reservedFor ?? []).map((r) => `${r.resource}/${r.name}${podUids.get(r.uid) === r.name ? '' : ' (stale uid)'}`),
    allocated: !!c.status?.allocation,
  };
}

/** What a user sees: each pod's phase and recorded claims, each claim by the pod entry it serves, Warning Events. */
async function snapshot(ns: string, podNames: string[]): Promise<Record<string, unknown>> {
  const podUids = new Map<string, string>();
  const out: Record<string, unknown> = {};
  const all = await claims(ns);
  for (const name of podNames) {
    const p = await getOr<Pod>(podPath(ns, name));
    if (p) podUids.set(p.metadata.uid, name);
    out[`pod ${name}`] = p ? {
      phase: p.status?.phase,
      resourceClaimStatuses: (p.status?.resourceClaimStatuses ?? []).map((s) => ({ name: s.name, generated: (s.resourceClaimName ?? '').replace(/[a-z0-9]{5}$/, '*****') }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    } : 'gone';
  }
  for (const c of all) {
    const owner = c.metadata.ownerReferences?.[0]?.name;
    const key = owner ? `claim of ${owner}/${c.metadata.annotations?.['resource.kubernetes.io/pod-claim-name'] ?? '?'}` : `claim ${c.metadata.name}`;
    out[key] = claimShape(c, podUids);
  }
  out.events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
    .filter((e) => e.type === 'Warning' && e.reason === 'FailedResourceClaimCreation').map((e) => `${e.involvedObject.name}: ${e.message}`).sort();
  return out;
}

const running = async (ns: string, name: string) => {
  const p = await getOr<Pod>(podPath(ns, name));
  return p?.status?.phase === 'Running' && !!p.spec.nodeName;
};

interface Run {
  steps: Record<string, Record<string, unknown>>;
  /** claims owned by each burst pod, and whether its status names that one */
  burst: Record<string, { claims: number; recorded: boolean }>;
  /** ms from the pods' creation until every burst pod ran */
  burstMs: number;
}

async function scenario(prefix: string, start: () => Promise<void>, midway: () => Promise<void>): Promise<Run> {
  const ns = await freshNamespace(kc, `dra-${prefix}`);
  namespaces.push(ns);
  await rest.request('POST', `/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaimtemplates`, { body: {
    apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaimTemplate', metadata: { name: 'gpu' },
    spec: { metadata: { labels: { app: 'dra-e2e' }, annotations: { 'example.com/note': 'from the template' } }, spec: { devices: DEVICES } },
  } });
  await rest.request('POST', claimsPath(ns), { body: { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', metadata: { name: 'shared' }, spec: { devices: DEVICES } } });
  const steps: Run['steps'] = {};
  const names = ['solo', 'doomed', 'user'];

  await start();
  await pod(ns, 'solo', [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }]);
  await pod(ns, 'doomed', [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }]);
  await pod(ns, 'user', [{ name: 'shared', resourceClaimName: 'shared' }]);
  await eventually('the pods running', async () => (await running(ns, 'solo')) && (await running(ns, 'doomed')) && (await running(ns, 'user')), 30_000, 200);
  steps.running = await snapshot(ns, names);

  const t0 = Date.now();
  const burst = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
  await Promise.all(burst.map((b) => pod(ns, b, [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }])));
  await eventually('a first burst claim', async () => (await claims(ns)).some((c) => c.metadata.ownerReferences?.[0]?.name.startsWith('burst-')), 15_000, 20);
  await midway();
  await eventually('every burst pod running', async () => {
    for (const b of burst) if (!(await running(ns, b))) return false;
    return true;
  }, 40_000, 200);
  const burstMs = Date.now() - t0;
  const all = await claims(ns);
  const result: Run['burst'] = {};
  for (const b of burst) {
    const p = (await getOr<Pod>(podPath(ns, b)))!;
    const owned = all.filter((c) => c.metadata.ownerReferences?.some((o) => o.uid === p.metadata.uid));
    const recorded = p.status?.resourceClaimStatuses?.[0]?.resourceClaimName;
    result[b] = { claims: owned.length, recorded: owned.length === 1 && recorded === owned[0].metadata.name };
  }
  for (const b of burst) await rest.request('DELETE', podPath(ns, b));
  // their claims are released, then deleted by the garbage collector
  await eventually('the burst claims gone', async () => !(await claims(ns)).some((c) => c.metadata.ownerReferences?.[0]?.name.startsWith('burst-')), 30_000, 200);

  await finish(ns, 'user');
  await eventually('shared released', async () => {
    const c = await getOr<Claim>(`${claimsPath(ns)}/shared`);
    return !!c && !c.status?.reservedFor?.length && !c.status?.allocation && !(c.metadata.finalizers ?? []).length;
  }, 20_000, 200);
  steps.userDone = await snapshot(ns, names);

  const soloClaim = (await getOr<Pod>(podPath(ns, 'solo')))?.status?.resourceClaimStatuses?.[0]?.resourceClaimName ?? '';
  await finish(ns, 'solo');
  await eventually('solo\'s claim deleted', async () => !(await getOr<Claim>(`${claimsPath(ns)}/${soloClaim}`)), 20_000, 200);
  steps.soloDone = await snapshot(ns, names);

  const doomedClaim = (await getOr<Pod>(podPath(ns, 'doomed')))?.status?.resourceClaimStatuses?.[0]?.resourceClaimName ?? '';
  await rest.request('DELETE', podPath(ns, 'doomed'));
  await eventually('doomed\'s claim gone', async () => !(await getOr<Claim>(`${claimsPath(ns)}/${doomedClaim}`)), 30_000, 200);
  steps.doomedDeleted = await snapshot(ns, names);
  return { steps, burst: result, burstMs };
}

beforeAll(async () => {
  // a stack kept from before the local stack published them gets them here
  await ensureDra(testAdminTarget(), readState(TEST_DATA_DIR)?.nodes ?? 3);
});

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  for (const ns of namespaces) {
    for (const c of await claims(ns).catch(() => [])) {
      await rest.request('PATCH', `${claimsPath(ns)}/${c.metadata.name}`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } }).catch(() => undefined);
    }
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
});

test('claims generated from templates, reservations released and generated claims deleted as upstream does; one claim per pod across a kill -9', async () => {
  const theirs = await scenario(uniqueName('up'), async () => {
    await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  }, async () => undefined);
  await upstream.stop();

  const taskQueue = uniqueName('resourceclaim-e2e');
  let killedAt = 0;
  let ns = '';
  const mine = await scenario(uniqueName('ours'), async () => {
    ns = namespaces[namespaces.length - 1];
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  }, async () => {
    await ours!.kill('SIGKILL');
    killedAt = Date.now();
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  });

  // the runs that did the work: solo's claims generated, shared released
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    for (const id of [`resourceclaim/${ns}/pods/solo`, `resourceclaim/${ns}/resourceclaims/shared`]) {
      expect((await client.workflow.getHandle(id).describe()).status.name).toBe('COMPLETED');
    }
  } finally {
    await connection.close();
  }

  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'resourceclaim-vs-upstream.json'), JSON.stringify({ theirs, ours: mine, killedAt }, null, 1));
  const one = Object.fromEntries(Array.from({ length: BURST }, (_, i) => [`burst-${i}`, { claims: 1, recorded: true }]));
  expect(theirs.burst).toEqual(one);
  expect(mine.burst).toEqual(one);

  const generated = (pod: string, reserved: string[], allocated: boolean) => ({
    name: `${pod}-gpu-*****`,
    labels: { app: 'dra-e2e' },
    annotations: { 'example.com/note': 'from the template', 'resource.kubernetes.io/pod-claim-name': 'gpu' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid: 'the pod', controller: true }],
    finalizers: allocated ? ['resource.kubernetes.io/delete-protection'] : [],
    deleting: false,
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRA_DEVICE_CLASS, allocationMode: 'ExactCount', count: 1 } }] } },
    reservedFor: reserved,
    allocated,
  });
  expect(theirs.steps.running).toMatchObject({
    'pod solo': { phase: 'Running', resourceClaimStatuses: [{ name: 'gpu', generated: 'solo-gpu-*****' }] },
    'pod user': { phase: 'Running', resourceClaimStatuses: [] },
    'claim of solo/gpu': generated('solo', ['pods/solo'], true),
    'claim of doomed/gpu': generated('doomed', ['pods/doomed'], true),
    'claim shared': { reservedFor: ['pods/user'], allocated: true },
    events: [],
  });
  expect(theirs.steps.userDone).toMatchObject({ 'claim shared': { reservedFor: [], allocated: false, finalizers: [] } });
  expect(theirs.steps.soloDone).toMatchObject({ 'pod solo': { phase: 'Succeeded' } });
  expect(theirs.steps.soloDone['claim of solo/gpu']).toBeUndefined();
  expect(theirs.steps.doomedDeleted).toMatchObject({ 'pod doomed': 'gone', 'claim shared': { reservedFor: [] } });
  expect(theirs.steps.doomedDeleted['claim of doomed/gpu']).toBeUndefined();
  expect(mine.steps).toEqual(theirs.steps);
  expect(mine.burstMs).toBeLessThan(40_000);
}, 180_000);
