import { Client } from '@temporalio/client';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError } from '../../activities/kube/rest';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The ServiceCIDR controller compared with upstream kube-controller-manager v1.35.4 on the same
 * stack. The same steps run under each manager in turn, each in CIDRs of its own:
 *  - the API server's default ServiceCIDR `kubernetes` (put back as the API server leaves it: no
 *    finalizer, its own Ready message) and three new ones, `a` and `b` (IPv4) and `ds` (dual-stack),
 *    get the finalizer and Ready=True;
 *  - a Service takes an explicit ClusterIP in `a` and another in `b`; `kubectl delete servicecidr`
 *    of all three: `a` and `b` stay, Terminating with Ready=False, while `ds`, which holds no
 *    address, goes after the grace period;
 *  - `a`'s Service is deleted (its IPAddress goes), and `wide`, a ServiceCIDR containing `b`, is
 *    created: both `a` and `b` then go, `b` while its Service still holds its address.
 * After each step, what a user sees of each ServiceCIDR (existence, finalizers, each condition's
 * type, status, reason and message) and the Events about them must be the same under both. Ours is
 * killed with kill -9 once `a` and `b` are blocked and `ds` waits out its grace period.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const CONTROLLERS = 'service-cidr-controller';
const CIDRS = '/apis/networking.k8s.io/v1/servicecidrs';
const IPS = '/apis/networking.k8s.io/v1/ipaddresses';
const FINALIZER = 'networking.k8s.io/service-cidr-finalizer';
const ARGS = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s'];

type Condition = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string };
type ServiceCidr = { metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string }; spec: { cidrs: string[] }; status?: { conditions?: Condition[] } };
// count: a repeat is counted up on the first Event (client-go's recorder), not written again
type Event = { reason: string; message: string; type: string; count?: number; involvedObject: { kind: string; name: string } };

const upstream = new UpstreamKcm('service-cidr');
let ours: ManagerProcess | undefined;
const made: string[] = [];
const namespaces: string[] = [];
let kubernetesBefore: ServiceCidr | undefined;

async function get(name: string): Promise<ServiceCidr | undefined> {
  try {
    return (await rest.request<ServiceCidr>('GET', `${CIDRS}/${name}`)).body;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

async function createCidr(name: string, cidrs: string[]): Promise<void> {
  await rest.request('POST', CIDRS, { body: { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } } });
  made.push(name);
}

/** The default ServiceCIDR as the API server leaves it before any controller manager: no finalizer, the API server's own Ready message. */
async function resetKubernetes(): Promise<void> {
  const k = await get('kubernetes');
  if (!k) throw new Error('the API server made no default ServiceCIDR');
  kubernetesBefore ??= k;
  const i = (k.metadata.finalizers ?? []).indexOf(FINALIZER);
  if (i >= 0) {
    await rest.request('PATCH', `${CIDRS}/kubernetes`, { contentType: 'application/json-patch+json', body: [
      { op: 'test', path: `/metadata/finalizers/${i}`, value: FINALIZER }, { op: 'remove', path: `/metadata/finalizers/${i}` },
    ] });
  }
  await rest.request('PATCH', `${CIDRS}/kubernetes/status`, { contentType: 'application/merge-patch+json', body: { status: { conditions: [
    { type: 'Ready', status: 'True', reason: '', message: 'Kubernetes default Service CIDR is ready', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
  ] } } });
}

const ready = (c: ServiceCidr | undefined, message = 'Kubernetes Service CIDR is ready') =>
  !!c && (c.metadata.finalizers ?? []).includes(FINALIZER) && (c.status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True' && x.message === message);
const terminating = (c: ServiceCidr | undefined) => !!c && (c.status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'False');

/** What a user sees of the ServiceCIDRs of one run, by role; the Events about any of them. */
async function snapshot(names: Record<string, string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [role, name] of Object.entries(names)) {
    const c = await get(name);
    out[role] = c
      ? {
          terminating: !!c.metadata.deletionTimestamp,
          finalizers: c.metadata.finalizers ?? [],
          conditions: (c.status?.conditions ?? []).map((x) => ({ type: x.type, status: x.status, reason: x.reason ?? '', message: x.message ?? '' })),
        }
      : 'gone';
  }
  const byName = new Map(Object.entries(names).map(([role, name]) => [name, role]));
  const events = (await rest.request<{ items: Event[] }>('GET', '/api/v1/namespaces/default/events')).body.items
    .filter((e) => e.involvedObject.kind === 'ServiceCIDR' && byName.has(e.involvedObject.name))
    .map((e) => `${byName.get(e.involvedObject.name)} ${e.type} ${e.reason}: ${e.message} x${e.count ?? 1}`);
  out.events = events.sort();
  return out;
}

async function service(ns: string, name: string, clusterIP: string): Promise<void> {
  // the API server's allocator takes a new ServiceCIDR once its informer has it: retried until then
  await eventually(`Service ${name} with ClusterIP ${clusterIP}`, async () => {
    await rest.request('POST', `/api/v1/namespaces/${ns}/services`, { body: {
      apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { clusterIP, ports: [{ port: 80 }] },
    } }).catch((e: unknown) => {
      if (!(e instanceof ApiError && e.status === 409)) throw e;
    });
    await rest.request('GET', `${IPS}/${clusterIP}`);
    return true;
  }, 15_000, 250);
}

interface Run {
  /** the snapshot after each step */
  steps: Record<string, Record<string, unknown>>;
  /** ms from the kubectl delete until `ds` (no addresses) was gone */
  dsGoneAfterMs: number;
}

/**
 * The steps, under whichever manager `start` starts; `midway` runs once `a` and `b` are blocked
 * (ours: kill -9 and a new replica). `octet` keeps each run's CIDRs apart.
 */
async function scenario(prefix: string, octet: number, start: () => Promise<void>, midway: () => Promise<void>): Promise<Run> {
  const names = { kubernetes: 'kubernetes', a: `${prefix}-a`, b: `${prefix}-b`, ds: `${prefix}-ds`, wide: `${prefix}-wide` };
  const ns = await freshNamespace(kc, `svccidr-${prefix}`);
  namespaces.push(ns);
  await resetKubernetes();
  await createCidr(names.a, [`10.${octet}.0.0/24`]);
  await createCidr(names.b, [`10.${octet}.2.0/24`]);
  await createCidr(names.ds, [`10.${octet}.4.0/24`, `fd00:${octet}::/112`]);
  const steps: Run['steps'] = {};

  await start();
  await eventually('finalizers and Ready=True', async () => {
    for (const n of [names.a, names.b, names.ds, 'kubernetes']) if (!ready(await get(n))) return false;
    return true;
  }, 20_000, 100);
  steps.ready = await snapshot(names);

  await service(ns, 'in-a', `10.${octet}.0.10`);
  await service(ns, 'in-b', `10.${octet}.2.10`);
  const deletedAt = Date.now();
  await kubectl('delete', 'servicecidr', names.a, names.b, names.ds, '--wait=false');
  await eventually('a and b blocked', async () => terminating(await get(names.a)) && terminating(await get(names.b)), 15_000, 100);
  steps.blocked = await snapshot(names);

  await midway();
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/services/in-a`);
  await createCidr(names.wide, [`10.${octet}.0.0/16`]);
  const dsGoneAt = await eventually('ds gone', async () => ((await get(names.ds)) ? false : Date.now()), 30_000, 100);
  await eventually('a and b gone', async () => !(await get(names.a)) && !(await get(names.b)) && ready(await get(names.wide)), 30_000, 100);
  // b went while its Service still holds its address, which wide now contains
  await rest.request('GET', `${IPS}/10.${octet}.2.10`);
  steps.released = await snapshot(names);
  return { steps, dsGoneAfterMs: dsGoneAt - deletedAt };
}

/**
 * Workflow IDs are not prefixed by task queue: a test that ran every controller (`*`) on a queue of
 * its own may have left the default ServiceCIDR's run open on a queue nobody polls any more, and
 * this test's events would reach that run. Ended here, as an operator would end it.
 */
async function endStaleDefaultRuns(): Promise<void> {
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    for await (const wf of client.workflow.list({ query: "WorkflowId = 'servicecidr/kubernetes' AND ExecutionStatus = 'Running'" })) {
      await client.workflow.getHandle(wf.workflowId, wf.runId).terminate('left open by an earlier test on a queue nobody polls').catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  // no namespace controller runs here: the Services go first, so their addresses are released
  for (const ns of namespaces) {
    for (const svc of ['in-a', 'in-b']) await rest.request('DELETE', `/api/v1/namespaces/${ns}/services/${svc}`).catch(() => undefined);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
  // no manager runs now: what is left is let go by hand
  for (const n of made) {
    await rest.request('PATCH', `${CIDRS}/${n}`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } }).catch(() => undefined);
    await rest.request('DELETE', `${CIDRS}/${n}`).catch(() => undefined);
  }
  // the default ServiceCIDR as a cluster's manager leaves it (the other tests' upstream managers do not run this controller)
  if (kubernetesBefore) await resetKubernetes().catch(() => undefined);
});

test('ServiceCIDRs get the finalizer and Ready, and are held while an address would be orphaned, as upstream holds them', async () => {
  // each run's CIDRs are its own (10.<octet>.0.0/16), and a kept stack's earlier runs never collide
  const octet = 100 + Math.floor(Math.random() * 75) * 2;
  const theirs = await scenario(uniqueName('up'), octet, async () => {
    await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  }, async () => undefined);
  await upstream.stop();

  const taskQueue = uniqueName('service-cidr-e2e');
  let killedAt = 0;
  const mine = await scenario(uniqueName('ours'), octet + 1, async () => {
    await endStaleDefaultRuns();
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  }, async () => {
    // ds waits out its grace period on a durable timer: the replica holding it and the watch dies
    await ours!.kill('SIGKILL');
    killedAt = Date.now();
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  });

  // the run of the default ServiceCIDR says what it did
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    const state = await client.workflow.getHandle('servicecidr/kubernetes').query<{ view?: Record<string, unknown> }>('state');
    expect(state.view).toMatchObject({ serviceCIDR: 'kubernetes', finalizer: true, ready: 'True' });
  } finally {
    await connection.close();
  }

  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'servicecidr-vs-upstream.json'), JSON.stringify({ theirs, ours: mine, killedAt }, null, 1));
  const ready = { terminating: false, finalizers: [FINALIZER], conditions: [{ type: 'Ready', status: 'True', reason: '', message: 'Kubernetes Service CIDR is ready' }] };
  const blocked = { terminating: true, finalizers: [FINALIZER], conditions: [{ type: 'Ready', status: 'False', reason: 'Terminating',
    message: 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR' }] };
  expect(theirs.steps).toEqual({
    ready: { kubernetes: ready, a: ready, b: ready, ds: ready, wide: 'gone', events: [] },
    // ds holds no address: it keeps Ready=True through its grace period
    blocked: { kubernetes: ready, a: blocked, b: blocked, ds: { ...ready, terminating: true }, wide: 'gone', events: [] },
    released: { kubernetes: ready, a: 'gone', b: 'gone', ds: 'gone', wide: ready, events: [] },
  });
  expect(mine.steps).toEqual(theirs.steps);
  // the grace period after the deletion, not sooner, under both
  expect(theirs.dsGoneAfterMs).toBeGreaterThanOrEqual(8_000);
  expect(mine.dsGoneAfterMs).toBeGreaterThanOrEqual(8_000);
  expect(mine.dsGoneAfterMs).toBeLessThan(25_000);
}, 150_000);
