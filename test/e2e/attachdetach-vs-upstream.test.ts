import { Client, Connection } from '@temporalio/client';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ATTACH_ERROR_ANNOTATION, startCsiAttacher } from '../support/csi-attacher';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The attach/detach controller, compared with upstream kube-controller-manager v1.35.4 on the same
 * stack: the same steps against each manager in turn, and what a user sees (which
 * VolumeAttachments exist, named how, for which volume and node; what each node's
 * status.volumesAttached lists; the Events on the pods) after every step. A test step plays the
 * CSI driver's external attacher (test/support/csi-attacher.ts); the stack's nodes carry the
 * controller-managed attach annotation a kubelet sets. The binder runs beside it on both sides to
 * bind the pre-bound claims.
 */
const rest = testRest(testClusterAccess());
const CONTROLLERS = 'persistentvolume-binder-controller,persistentvolume-attach-detach-controller';
const SYNC = '--attach-detach-reconcile-sync-period=5s';
const DRIVER = 'e2e.csi.temporal-kcm.dev';
/** a driver whose CSIDriver object says its volumes need no attach */
const NO_ATTACH_DRIVER = 'noattach.e2e.csi.temporal-kcm.dev';
const NODES = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'];
const EBS_DRIVER = 'ebs.csi.aws.com';

const upstream = new UpstreamKcm('attachdetach');
const ours: ManagerProcess[] = [];
const namespaces: string[] = [];
const volumes: string[] = [];
let attacher: { stop(): Promise<void> } | undefined;
let connection: Connection | undefined;

/** The run's volume workflows still running: each ends once its volume is where it is wanted. */
async function runningWorkflows(run: Run): Promise<string[]> {
  connection ??= await testTemporalConnection();
  const ids: string[] = [];
  for await (const w of new Client({ connection }).workflow.list({ query: `WorkflowType = 'attachDetachWorkflow' AND ExecutionStatus = 'Running'` })) {
    if (run.owns(w.workflowId)) ids.push(w.workflowId);
  }
  return ids;
}

async function stopOurs(): Promise<void> {
  for (const m of ours.splice(0)) await m.kill();
}

beforeAll(async () => {
  await rest.request('POST', '/apis/storage.k8s.io/v1/csidrivers', { body: {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: NO_ATTACH_DRIVER }, spec: { attachRequired: false },
  } }).catch(() => undefined);
  attacher = startCsiAttacher(rest);
});

afterEach(async () => {
  await upstream.stop();
  await stopOurs();
});

afterAll(async () => {
  await attacher?.stop();
  await connection?.close();
  for (const ns of namespaces) {
    await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`).catch(() => undefined);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims`).catch(() => undefined);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
  for (const v of volumes) await rest.request('DELETE', `/api/v1/persistentvolumes/${v}`).catch(() => undefined);
  for (const va of await runAttachments(() => true)) await rest.request('DELETE', `/apis/storage.k8s.io/v1/volumeattachments/${va.metadata.name}`).catch(() => undefined);
  await rest.request('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${NO_ATTACH_DRIVER}`).catch(() => undefined);
});

interface VolumeAttachment {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached?: boolean; attachError?: { message?: string } };
}
type Event = { reason: string; message: string; type: string; count?: number; involvedObject: { name: string; kind: string }; source?: { component?: string } };
type Node = { metadata: { name: string }; status?: { volumesAttached?: Array<{ name: string; devicePath: string }> } };

/** One manager's run: its namespace, and a tag in every cluster-scoped name, replaced when compared. */
class Run {
  /** the AWS volume ID of this run's migrated in-tree volume */
  readonly ebsVolume: string;
  constructor(readonly tag: string, readonly ns: string) {
    this.ebsVolume = `vol-${createHash('sha256').update(tag).digest('hex').slice(0, 17)}`;
  }
  name(n: string): string {
    return `${this.tag}-${n}`;
  }
  strip(s: string): string {
    return s.replaceAll(this.ns, 'NS').replaceAll(this.tag, 'T').replaceAll(this.ebsVolume, 'VOL');
  }
  owns(s: string): boolean {
    return s.includes(this.tag) || s.includes(this.ebsVolume);
  }
}

async function newRun(prefix: string): Promise<Run> {
  const ns = await freshNamespace(testClusterAccess(), prefix);
  namespaces.push(ns);
  return new Run(uniqueName(prefix), ns);
}

type Source = { csi: { driver: string; volumeHandle: string } } | { awsElasticBlockStore: { volumeID: string } };

/** A volume pre-bound to its claim, and the claim, which the binder binds. */
async function createVolume(run: Run, n: string, source: Source, modes: string[], annotations: Record<string, string> = {}): Promise<void> {
  const pv = run.name(n);
  volumes.push(pv);
  await rest.request('POST', '/api/v1/persistentvolumes', { body: {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv, annotations },
    spec: { capacity: { storage: '1Gi' }, accessModes: modes, persistentVolumeReclaimPolicy: 'Retain', storageClassName: '', claimRef: { namespace: run.ns, name: n }, ...source },
  } });
  await rest.request('POST', `/api/v1/namespaces/${run.ns}/persistentvolumeclaims`, { body: {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: n },
    spec: { accessModes: modes, storageClassName: '', volumeName: pv, resources: { requests: { storage: '1Gi' } } },
  } });
}

async function createPod(run: Run, name: string, claim: string, node: string): Promise<void> {
  await rest.request('POST', `/api/v1/namespaces/${run.ns}/pods`, { body: {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.invalid/app:1' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
  } });
}

async function deletePod(run: Run, name: string): Promise<void> {
  await rest.request('DELETE', `/api/v1/namespaces/${run.ns}/pods/${name}?gracePeriodSeconds=0`);
}

async function runAttachments(owned: (pv: string) => boolean): Promise<VolumeAttachment[]> {
  const all = (await rest.request<{ items: VolumeAttachment[] }>('GET', '/apis/storage.k8s.io/v1/volumeattachments')).body.items;
  return all.filter((va) => owned(va.spec.source.persistentVolumeName ?? ''));
}

/** What a user sees of the run: its VolumeAttachments, the nodes' reports, and the Events on its pods. */
async function snapshot(run: Run) {
  const pvs = new Map<string, string>();
  for (const v of volumes.filter((x) => x.startsWith(run.tag))) {
    const pv = (await rest.request<{ spec: { csi?: { driver: string; volumeHandle: string }; awsElasticBlockStore?: { volumeID: string } } }>('GET', `/api/v1/persistentvolumes/${v}`)).body;
    pvs.set(v, pv.spec.csi ? pv.spec.csi.volumeHandle : run.ebsVolume);
  }
  const attachments = (await runAttachments((pv) => pv.startsWith(run.tag))).map((va) => {
    const handle = pvs.get(va.spec.source.persistentVolumeName ?? '') ?? '';
    const expected = `csi-${createHash('sha256').update(`${handle}${va.spec.attacher}${va.spec.nodeName}`).digest('hex')}`;
    return `${run.strip(va.spec.source.persistentVolumeName ?? '')}@${va.spec.nodeName} by ${va.spec.attacher}: ${va.metadata.name === expected ? 'named csi-<sha256>' : `misnamed ${va.metadata.name}`}`
      + `${va.status?.attached ? ', attached' : ''}${va.status?.attachError ? ', attach error' : ''}${va.metadata.deletionTimestamp ? ', deleting' : ''}`;
  }).sort();
  const nodes = (await rest.request<{ items: Node[] }>('GET', '/api/v1/nodes')).body.items;
  const reported: Record<string, string[]> = {};
  for (const n of nodes) {
    const mine = (n.status?.volumesAttached ?? []).filter((v) => run.owns(v.name)).map((v) => `${run.strip(v.name)} devicePath=${JSON.stringify(v.devicePath)}`).sort();
    if (mine.length) reported[n.metadata.name] = mine;
  }
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${run.ns}/events`)).body.items
    .filter((e) => e.involvedObject.kind === 'Pod' && e.source?.component === 'attachdetach-controller')
    .map((e) => `${e.involvedObject.name}: ${e.type} ${e.reason} ${run.strip(e.message)}`);
  return { attachments, reported, events: [...new Set(events)].sort() };
}

type Snapshot = Awaited<ReturnType<typeof snapshot>>;

async function until(run: Run, what: string, ok: (s: Snapshot) => boolean): Promise<Snapshot> {
  let last: Snapshot | undefined;
  try {
    return await eventually(what, async () => {
      last = await snapshot(run);
      return ok(last) ? last : undefined;
    }, 60_000, 300);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}

const attached = (s: Snapshot, volume: string, node: string) => s.attachments.some((a) => a.startsWith(`T-${volume}@${node} `) && a.endsWith(', attached'));
const reports = (s: Snapshot, node: string, count: number) => (s.reported[node] ?? []).length === count;
const eventOn = (s: Snapshot, pod: string, reason: string) => s.events.some((e) => e.startsWith(`${pod}: `) && e.includes(` ${reason} `));

/**
 * The steps: attach (one node, two nodes for a shared volume, an attacher's refusal, a driver with
 * no attach, an in-tree EBS volume migrated to CSI), a second node for a single-node volume (the
 * Multi-Attach error), the first pod gone (detach, then attach where it is wanted now), an
 * attachment deleted behind the controller's back (the periodic sync attaches it again), every pod
 * gone (everything detached).
 */
async function scenario(run: Run): Promise<Record<string, Snapshot>> {
  const [n0, n1] = NODES;
  await createVolume(run, 'single', { csi: { driver: DRIVER, volumeHandle: run.name('single') } }, ['ReadWriteOnce']);
  await createVolume(run, 'shared', { csi: { driver: DRIVER, volumeHandle: run.name('shared') } }, ['ReadWriteMany']);
  await createVolume(run, 'refused', { csi: { driver: DRIVER, volumeHandle: run.name('refused') } }, ['ReadWriteOnce'], { [ATTACH_ERROR_ANNOTATION]: 'rpc error: code = ResourceExhausted desc = no free slot' });
  await createVolume(run, 'noattach', { csi: { driver: NO_ATTACH_DRIVER, volumeHandle: run.name('noattach') } }, ['ReadWriteOnce']);
  await createVolume(run, 'ebs', { awsElasticBlockStore: { volumeID: `aws://us-east-1a/${run.ebsVolume}` } }, ['ReadWriteOnce']);
  await createPod(run, 'single-1', 'single', n0);
  await createPod(run, 'shared-1', 'shared', n0);
  await createPod(run, 'shared-2', 'shared', n1);
  await createPod(run, 'refused-1', 'refused', n1);
  await createPod(run, 'noattach-1', 'noattach', n0);
  await createPod(run, 'ebs-1', 'ebs', n1);
  const out: Record<string, Snapshot> = {};
  out.attached = await until(run, 'volumes attached and reported', (s) => attached(s, 'single', n0) && attached(s, 'shared', n0) && attached(s, 'shared', n1)
    && attached(s, 'ebs', n1) && reports(s, n0, 2) && reports(s, n1, 2) && eventOn(s, 'refused-1', 'FailedAttachVolume')
    && ['single-1', 'shared-1', 'shared-2', 'ebs-1'].every((p) => eventOn(s, p, 'SuccessfulAttachVolume')));

  await createPod(run, 'single-2', 'single', n1);
  out.multiAttach = await until(run, 'the Multi-Attach error', (s) => eventOn(s, 'single-2', 'FailedAttachVolume'));

  await deletePod(run, 'single-1');
  out.moved = await until(run, 'the single-node volume moved', (s) => attached(s, 'single', n1) && !s.attachments.some((a) => a.startsWith(`T-single@${n0} `))
    && reports(s, n0, 1) && reports(s, n1, 3) && eventOn(s, 'single-2', 'SuccessfulAttachVolume'));

  const [shared0] = await runAttachments((pv) => pv === run.name('shared')).then((vas) => vas.filter((va) => va.spec.nodeName === n0));
  await rest.request('DELETE', `/apis/storage.k8s.io/v1/volumeattachments/${shared0.metadata.name}`);
  await eventually('the attachment re-created by the periodic sync', async () => {
    const now = await runAttachments((pv) => pv === run.name('shared'));
    return now.some((va) => va.spec.nodeName === n0 && va.metadata.uid !== shared0.metadata.uid && va.status?.attached);
  }, 30_000, 300);
  out.resynced = await until(run, 'reported again after the sync', (s) => reports(s, n0, 1) && reports(s, n1, 3));

  for (const p of ['single-2', 'shared-1', 'shared-2', 'refused-1', 'noattach-1', 'ebs-1']) await deletePod(run, p);
  out.detached = await until(run, 'everything detached', (s) => s.attachments.length === 0 && Object.keys(s.reported).length === 0);
  return out;
}

test('attach, Multi-Attach, detach and re-attach, the periodic sync and a migrated EBS volume: VolumeAttachments, node reports and Events as upstream', async () => {
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials', SYNC]);
  const theirs = await scenario(await newRun('ad-up'));
  await upstream.stop();

  ours.push(await startManagerProcess(uniqueName('ad-e2e'), ['--use-service-account-credentials', SYNC], { controllers: CONTROLLERS }));
  const run = await newRun('ad-ours');
  const mine = await scenario(run);
  // every volume's run ended with its detach: none waits on a deadline it no longer needs
  await eventually('every volume workflow finished', async () => (await runningWorkflows(run)).length === 0, 15_000, 500);
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'attachdetach.json'), JSON.stringify({ theirs, mine }, null, 1));

  expect(theirs.attached.attachments.every((a) => a.includes('named csi-<sha256>'))).toBe(true);
  expect(theirs.attached.attachments.some((a) => a.startsWith('T-ebs@') && a.includes(`by ${EBS_DRIVER}`))).toBe(true);
  expect(theirs.attached.attachments.some((a) => a.startsWith('T-noattach@'))).toBe(false);
  expect(mine).toEqual(theirs);
}, 300_000);

test('two replicas, one killed with kill -9 while twelve volumes attach: each gets exactly one attachment, reported once, and all detach', async () => {
  const taskQueue = uniqueName('ad-kill');
  // a killed replica's watch moves to the other after 3 s without heartbeats, not the default 15 s: the same takeover, sooner
  const args = ['--use-service-account-credentials', SYNC, '--informer-heartbeat-timeout', '3s'];
  const first = await startManagerProcess(taskQueue, args, { controllers: CONTROLLERS });
  ours.push(first);
  ours.push(await startManagerProcess(taskQueue, args, { controllers: CONTROLLERS }));
  const run = await newRun('ad-kill');
  const count = 12;
  for (let i = 0; i < count; i++) {
    await createVolume(run, `v${i}`, { csi: { driver: DRIVER, volumeHandle: run.name(`v${i}`) } }, ['ReadWriteOnce']);
    await createPod(run, `p${i}`, `v${i}`, NODES[i % NODES.length]);
    if (i === 3) {
      // the first replica most likely holds the watch and some of the first attaches
      await first.kill('SIGKILL');
      ours.splice(ours.indexOf(first), 1);
    }
  }
  const s = await until(run, 'every volume attached and reported', (x) => x.attachments.filter((a) => a.endsWith(', attached')).length === count
    && NODES.every((n) => reports(x, n, count / NODES.length)));
  expect(s.attachments).toHaveLength(count);
  for (let i = 0; i < count; i++) expect(s.attachments).toContain(`T-v${i}@${NODES[i % NODES.length]} by ${DRIVER}: named csi-<sha256>, attached`);
  for (const n of NODES) expect(new Set(s.reported[n]).size).toBe(count / NODES.length);
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${run.ns}/events`)).body.items.filter((e) => e.reason === 'SuccessfulAttachVolume');
  expect(events.map((e) => `${e.involvedObject.name} x${e.count ?? 1}`).sort()).toEqual(Array.from({ length: count }, (_, i) => `p${i} x1`).sort());

  for (let i = 0; i < count; i++) await deletePod(run, `p${i}`);
  await until(run, 'everything detached', (x) => x.attachments.length === 0 && Object.keys(x.reported).length === 0);
  await eventually('every volume workflow finished', async () => (await runningWorkflows(run)).length === 0, 15_000, 500);
}, 180_000);
