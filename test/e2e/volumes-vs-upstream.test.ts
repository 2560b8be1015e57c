import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { OurReplicas } from '../support/manager';
import { UpstreamKcm } from '../support/upstream';

/**
 * The persistent volume binder, compared with upstream kube-controller-manager v1.35.4 on the same
 * stack: the same steps against each manager in turn, and what a user sees (claims' and volumes'
 * phases, annotations, binding fields and Events) field by field, with the protection, ephemeral
 * volume and garbage collector controllers running beside it on both sides. The test steps play
 * the part no controller plays here: an external provisioner making a volume.
 */
const rest = testRest(testClusterAccess());
const upstream = new UpstreamKcm('volumes');
const namespaces: string[] = [];
const classes: string[] = [];
const volumes: string[] = [];
const CONTROLLERS = ['persistentvolume-binder-controller', 'persistentvolume-expander-controller', 'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller', 'ephemeral-volume-controller', 'garbage-collector-controller'].join(',');
/** the kwok node local volumes are pinned to */
const LOCAL_NODE = 'kwok-node-1';
/** fast resyncs keep the Pending claims' second look (and Events) inside the test's time */
const SYNC = '--pvclaimbinder-sync-period=3s';
const ours = new OurReplicas(CONTROLLERS, ['--use-service-account-credentials', SYNC]);

afterEach(() => ours.stopAfter(upstream));

afterAll(async () => {
  // no namespace controller runs here: claims left behind would keep every later binder busy
  for (const ns of namespaces) {
    const claims = (await rest.request<{ items: Pvc[] }>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`).catch(() => undefined))?.body.items ?? [];
    for (const c of claims) {
      await rest.request('PATCH', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${c.metadata.name}`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
      await rest.request('DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${c.metadata.name}`).catch(() => undefined);
    }
    await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
  for (const v of volumes) {
    await rest.request('PATCH', `/api/v1/persistentvolumes/${v}`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
    await rest.request('DELETE', `/api/v1/persistentvolumes/${v}`).catch(() => undefined);
  }
  for (const c of classes) await rest.request('DELETE', `/apis/storage.k8s.io/v1/storageclasses/${c}`).catch(() => undefined);
});

type Meta = { name: string; namespace?: string; uid: string; annotations?: Record<string, string>; labels?: Record<string, string>; finalizers?: string[]; deletionTimestamp?: string };
type ClaimRef = { kind?: string; apiVersion?: string; namespace?: string; name?: string; uid?: string; resourceVersion?: string };
type Pv = { metadata: Meta; spec: Record<string, unknown> & { claimRef?: ClaimRef }; status?: { phase?: string; message?: string; lastPhaseTransitionTime?: string } };
type Pvc = { metadata: Meta; spec: Record<string, unknown> & { volumeName?: string }; status?: Record<string, unknown> };
type Event = { reason: string; message: string; type: string; involvedObject: { name: string; kind: string }; source?: { component?: string } };

/** A run's names: every cluster-scoped object carries the run's tag, replaced by T when compared. */
class Run {
  constructor(readonly tag: string, readonly ns: string) {}
  name(n: string): string {
    return `${this.tag}-${n}`;
  }
  strip(s: string): string {
    return s.replaceAll(this.ns, 'NS').replaceAll(this.tag, 'T');
  }
}

async function newRun(prefix: string): Promise<Run> {
  const ns = await freshNamespace(testClusterAccess(), prefix);
  namespaces.push(ns);
  return new Run(uniqueName(prefix), ns);
}

async function createClass(run: Run, n: string, provisioner: string, mode: 'Immediate' | 'WaitForFirstConsumer', extra: Record<string, unknown> = {}): Promise<string> {
  const name = run.name(n);
  classes.push(name);
  await rest.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, volumeBindingMode: mode, ...extra } });
  return name;
}

interface PvSpec {
  size: string;
  cls: string;
  policy?: 'Retain' | 'Delete' | 'Recycle';
  hostPath?: string;
  local?: string;
  /** a GCE PD source: an in-tree plugin migrated to CSI */
  gcePd?: boolean;
  modes?: string[];
  claimRef?: ClaimRef;
  annotations?: Record<string, string>;
}

async function createPv(run: Run, n: string, s: PvSpec): Promise<string> {
  const name = run.name(n);
  volumes.push(name);
  const source = s.gcePd ? { gcePersistentDisk: { pdName: `disk-${n}` } } : s.local
    ? { local: { path: '/mnt/disks/e2e' }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [s.local] }] }] } } }
    : { hostPath: { path: s.hostPath ?? `/tmp/tkcm-e2e-${run.tag}/${n}` } };
  await rest.request('POST', '/api/v1/persistentvolumes', { body: { apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name, ...(s.annotations ? { annotations: s.annotations } : {}) },
    spec: { capacity: { storage: s.size }, accessModes: s.modes ?? ['ReadWriteOnce'], persistentVolumeReclaimPolicy: s.policy ?? 'Retain',
      storageClassName: s.cls, ...(s.claimRef ? { claimRef: s.claimRef } : {}), ...source } } });
  return name;
}

async function createPvc(run: Run, name: string, size: string, cls: string | undefined, extra: Record<string, unknown> = {}): Promise<Pvc> {
  return (await rest.request<Pvc>('POST', `/api/v1/namespaces/${run.ns}/persistentvolumeclaims`, { body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...(cls !== undefined ? { storageClassName: cls } : {}), ...extra } } })).body;
}

const getPv = async (name: string) => (await rest.request<Pv>('GET', `/api/v1/persistentvolumes/${name}`).catch(() => undefined))?.body;
const getPvc = async (ns: string, name: string) => (await rest.request<Pvc>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`).catch(() => undefined))?.body;

/** What `kubectl get pv -o yaml` shows, names and identities aside. */
function pvShown(run: Run, v: Pv | undefined): unknown {
  if (!v) return 'gone';
  const { claimRef, ...spec } = v.spec;
  return JSON.parse(run.strip(JSON.stringify({
    annotations: v.metadata.annotations ?? {}, finalizers: v.metadata.finalizers ?? [], deleting: !!v.metadata.deletionTimestamp,
    spec, claimRef: claimRef ? { kind: claimRef.kind, apiVersion: claimRef.apiVersion, namespace: claimRef.namespace, name: claimRef.name, uid: !!claimRef.uid, resourceVersion: !!claimRef.resourceVersion } : null,
    // the API server stamps the time of each phase change
    status: { ...v.status, lastPhaseTransitionTime: !!v.status?.lastPhaseTransitionTime },
  })));
}

function pvcShown(run: Run, c: Pvc | undefined): unknown {
  if (!c) return 'gone';
  return JSON.parse(run.strip(JSON.stringify({ annotations: c.metadata.annotations ?? {}, finalizers: c.metadata.finalizers ?? [], spec: c.spec, status: c.status ?? {} })));
}

/** The binder's Events once they stop changing (recorders write them asynchronously): two equal reads a second apart. */
async function settledEvents(run: Run): Promise<string[]> {
  let prev = JSON.stringify(await binderEvents(run));
  return eventually('events settled', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const cur = await binderEvents(run);
    const same = JSON.stringify(cur) === prev;
    prev = JSON.stringify(cur);
    return same ? cur : undefined;
  }, 30_000, 0);
}

/** The binder's Events in the run's namespace and on its volumes: kind, name, type, reason and message. */
async function binderEvents(run: Run): Promise<string[]> {
  const all: Event[] = [];
  for (const ns of [run.ns, 'default']) all.push(...(await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items);
  return [...new Set(all.filter((e) => e.source?.component === 'persistentvolume-controller' || e.source?.component === 'volume_expand')
    .filter((e) => e.involvedObject.kind === 'PersistentVolumeClaim' ? true : e.involvedObject.name.startsWith(run.tag))
    .map((e) => run.strip(`${e.involvedObject.kind}/${e.involvedObject.name} ${e.type} ${e.reason}: ${e.message}`).replace(/kwok-node-\d+/g, 'NODE')))].sort();
}

async function deleteClaim(ns: string, name: string): Promise<void> {
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`);
}

/** Claims made before the binder has seen their volumes race it (upstream's too): wait until it calls them Available. */
async function volumesAvailable(names: string[]): Promise<void> {
  await eventually('volumes available', async () => {
    for (const n of names) if ((await getPv(n))?.status?.phase !== 'Available') return undefined;
    return true;
  }, 60_000, 200);
}

const phaseOf = async (ns: string, name: string) => (await getPvc(ns, name))?.status?.phase as string | undefined;

/**
 * An Immediate class of statically made volumes, one with a provisioner, and the reclaim
 * policies. Returns what a user sees after each step.
 */
async function immediateScenario(run: Run): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const manual = await createClass(run, 'manual', 'kubernetes.io/no-provisioner', 'Immediate');
  const del = await createClass(run, 'del', 'kubernetes.io/no-provisioner', 'Immediate');
  const ext = await createClass(run, 'ext', 'example.com/e2e-provisioner', 'Immediate');
  await createPv(run, 'a', { size: '1Gi', cls: manual });
  await createPv(run, 'b', { size: '2Gi', cls: manual });
  await createPv(run, 'c', { size: '5Gi', cls: manual });
  await createPv(run, 'rwx', { size: '1500Mi', cls: manual, modes: ['ReadWriteOnce', 'ReadWriteMany'] });
  await createPv(run, 'e', { size: '1Gi', cls: del, policy: 'Delete', local: LOCAL_NODE });
  await createPv(run, 'f', { size: '2Gi', cls: del, policy: 'Delete' });
  await createPv(run, 'g', { size: '3Gi', cls: del, policy: 'Delete', hostPath: '/srv/tkcm-e2e' });
  await createPv(run, 'r', { size: '4Gi', cls: del, policy: 'Recycle' });
  const grow = await createClass(run, 'grow', 'kubernetes.io/no-provisioner', 'Immediate', { allowVolumeExpansion: true });
  await createPv(run, 'grow-h', { size: '1Gi', cls: grow, modes: ['ReadWriteMany'] });
  await createPv(run, 'grow-g', { size: '1Gi', cls: grow, gcePd: true });
  await volumesAvailable(['a', 'b', 'c', 'rwx', 'e', 'f', 'g', 'r', 'grow-h', 'grow-g'].map((n) => run.name(n)));

  await createPvc(run, 'small', '1500Mi', manual);
  await createPvc(run, 'named', '2Gi', manual, { volumeName: run.name('a') });
  await createPvc(run, 'noclass', '1Gi', '');
  await createPvc(run, 'nomatch', '100Gi', manual);
  await createPvc(run, 'ext', '1Gi', ext);
  for (const [n, size] of [['temp-e', '1Gi'], ['temp-f', '2Gi'], ['temp-g', '3Gi'], ['temp-r', '4Gi']]) await createPvc(run, n, size, del);
  await createPvc(run, 'grow-h', '1Gi', grow, { accessModes: ['ReadWriteMany'] });
  await createPvc(run, 'grow-g', '1Gi', grow);

  await eventually('claims bound', async () => {
    for (const n of ['small', 'temp-e', 'temp-f', 'temp-g', 'temp-r', 'grow-h', 'grow-g']) if ((await phaseOf(run.ns, n)) !== 'Bound') return undefined;
    return true;
  }, 60_000, 300);
  // asking for more: an external controller is waited for; a volume migrated to CSI gets its resizer named
  for (const n of ['grow-h', 'grow-g']) {
    await rest.request('PATCH', `/api/v1/namespaces/${run.ns}/persistentvolumeclaims/${n}`, { body: { spec: { resources: { requests: { storage: '2Gi' } } } }, contentType: 'application/merge-patch+json' });
  }
  await eventually('expansion events', async () => (await binderEvents(run)).filter((e) => e.includes('ExternalExpanding')).length >= 2, 30_000, 300);
  await eventually('resizer named', async () => (await getPvc(run.ns, 'grow-g'))?.metadata.annotations?.['volume.kubernetes.io/storage-resizer'], 30_000, 300);
  out.grown = { h: pvcShown(run, await getPvc(run.ns, 'grow-h')), g: pvcShown(run, await getPvc(run.ns, 'grow-g')) };
  // a second sync of the Pending claims repeats nothing new, but must have happened
  await new Promise((r) => setTimeout(r, 4000));
  out.bound = { small: pvcShown(run, await getPvc(run.ns, 'small')), b: pvShown(run, await getPv(run.name('b'))) };
  out.pending = Object.fromEntries(await Promise.all(['named', 'noclass', 'nomatch'].map(async (n) => [n, pvcShown(run, await getPvc(run.ns, n))] as const)));
  out.untouched = Object.fromEntries(await Promise.all(['a', 'c', 'rwx'].map(async (n) => [n, pvShown(run, await getPv(run.name(n)))] as const)));

  // an external provisioner's work: the annotation is there, then a volume for the claim appears
  const extClaim = await eventually('provisioner annotation', async () => {
    const c = await getPvc(run.ns, 'ext');
    return c?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] ? c : undefined;
  }, 30_000, 300);
  out.extWaiting = pvcShown(run, extClaim);
  await createPv(run, 'ext', { size: '1Gi', cls: ext, policy: 'Delete', claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: run.ns, name: 'ext', uid: extClaim.metadata.uid },
    annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/e2e-provisioner' } });
  await eventually('provisioned claim bound', async () => (await phaseOf(run.ns, 'ext')) === 'Bound', 30_000, 300);
  await eventually('provisioned volume bound', async () => (await getPv(run.name('ext')))?.status?.phase === 'Bound', 30_000, 300);
  out.ext = { claim: pvcShown(run, await getPvc(run.ns, 'ext')), volume: pvShown(run, await getPv(run.name('ext'))) };

  // reclaim: Retain keeps a Released volume; Delete without a deleter fails; the host-path deleter
  // deletes under /tmp only; Recycle runs a recycler pod (whose success the test step reports, as
  // a kubelet would) and makes the volume Available again
  for (const n of ['small', 'temp-e', 'temp-f', 'temp-g', 'temp-r', 'ext']) await deleteClaim(run.ns, n);
  const recycler = `recycler-for-${run.name('r')}`;
  const recyclerPod = await eventually('recycler pod', async () => (await rest.request<RecyclerPod>('GET', `/api/v1/namespaces/default/pods/${recycler}`).catch(() => undefined))?.body, 60_000, 300);
  // (the stack labels pods with their node's zone: which node it landed on is the scheduler's choice)
  out.recyclerPod = run.strip(JSON.stringify({ spec: { ...recyclerPod.spec, nodeName: undefined }, metadata: { ownerReferences: recyclerPod.metadata.ownerReferences } }))
    // the service account's token volume is named by the API server at random
    .replace(/kube-api-access-[a-z0-9]+/g, 'kube-api-access-X');
  // a real recycler runs for a while: its Scheduled Event is there before it ends, and is passed on to the volume
  await eventually('recycler scheduled', async () => (await rest.request<{ items: unknown[] }>('GET',
    `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${recycler},reason=Scheduled`)}`)).body.items.length > 0, 30_000, 300);
  await new Promise((r) => setTimeout(r, 1000));
  await rest.request('PATCH', `/api/v1/namespaces/default/pods/${recycler}/status`, { contentType: 'application/merge-patch+json',
    body: { status: { phase: 'Succeeded', containerStatuses: [{ name: 'pv-recycler', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] } } });
  await eventually('recycled', async () => (await getPv(run.name('r')))?.status?.phase === 'Available', 60_000, 300);
  await eventually('recycler pod gone', async () => !(await rest.request('GET', `/api/v1/namespaces/default/pods/${recycler}`).catch(() => undefined)), 60_000, 300);
  await eventually('volumes reclaimed', async () => {
    const b = await getPv(run.name('b'));
    const e = await getPv(run.name('e'));
    const f = await getPv(run.name('f'));
    const g = await getPv(run.name('g'));
    // the provisioned volume (Delete, left to its external provisioner) is in the snapshot below too: its claim went with the others
    const provisioned = await getPv(run.name('ext'));
    return b?.status?.phase === 'Released' && e?.status?.phase === 'Failed' && !f && g?.status?.phase === 'Failed' && provisioned?.status?.phase === 'Released';
  }, 60_000, 300);
  await new Promise((r) => setTimeout(r, 2000));
  out.reclaimed = Object.fromEntries(await Promise.all(['b', 'e', 'f', 'g', 'r', 'ext'].map(async (n) => [n, pvShown(run, await getPv(run.name(n)))] as const)));
  out.events = await settledEvents(run);
  return out;
}

type Pod = { metadata: { name: string }; spec: { nodeName?: string }; status?: { phase?: string } };
type RecyclerPod = { metadata: { labels?: Record<string, string>; ownerReferences?: unknown[] }; spec: Record<string, unknown> & { nodeName?: string } };

/** WaitForFirstConsumer with a local volume: the claim waits, a pod comes, the scheduler picks the volume's node, binding completes, the pod runs. */
async function delayedScenario(run: Run): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const local = await createClass(run, 'local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer');
  // made now, long before its claim: a claim made right after its class can reach a binder before
  // the class does, and upstream's then reports ProvisioningFailed ("not found") once, by chance
  const late = await createClass(run, 'late', 'example.com/e2e-provisioner', 'WaitForFirstConsumer');
  await createPv(run, 'local', { size: '1Gi', cls: local, local: LOCAL_NODE });
  await volumesAvailable([run.name('local')]);
  await createPvc(run, 'data', '1Gi', local);
  await eventually('first-consumer event', async () => (await binderEvents(run)).some((e) => e.includes('WaitForFirstConsumer')), 30_000, 300);
  out.waiting = pvcShown(run, await getPvc(run.ns, 'data'));
  await rest.request('POST', `/api/v1/namespaces/${run.ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app' },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] } } });
  const pod = await eventually('pod running', async () => {
    const p = (await rest.request<Pod>('GET', `/api/v1/namespaces/${run.ns}/pods/app`)).body;
    return p.status?.phase === 'Running' ? p : undefined;
  }, 60_000, 300);
  out.podNode = pod.spec.nodeName;
  out.claim = pvcShown(run, await getPvc(run.ns, 'data'));
  out.volume = pvShown(run, await getPv(run.name('local')));

  // a provisioner's class waiting for the first consumer: the scheduler picks a node, the claim
  // goes to the provisioner with that node, and the provisioner's volume (made here) completes it
  await createPvc(run, 'late', '1Gi', late);
  await rest.request('POST', `/api/v1/namespaces/${run.ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'late' },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'late' } }] } } });
  const asked = await eventually('provisioning asked for', async () => {
    const c = await getPvc(run.ns, 'late');
    return c?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] ? c : undefined;
  }, 60_000, 300);
  const node = asked.metadata.annotations!['volume.kubernetes.io/selected-node'];
  // which node the scheduler picks among equals is its own affair
  const anyNode = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll(`"${node}"`, '"NODE"'));
  out.lateAsked = anyNode(pvcShown(run, asked));
  await createPv(run, 'late', { size: '1Gi', cls: late, policy: 'Delete', local: node,
    claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: run.ns, name: 'late', uid: asked.metadata.uid },
    annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/e2e-provisioner' } });
  const latePod = await eventually('provisioned pod running', async () => {
    const p = (await rest.request<Pod>('GET', `/api/v1/namespaces/${run.ns}/pods/late`)).body;
    return p.status?.phase === 'Running' ? p : undefined;
  }, 60_000, 300);
  out.lateOnSelectedNode = latePod.spec.nodeName === node;
  out.late = anyNode({ claim: pvcShown(run, await getPvc(run.ns, 'late')), volume: pvShown(run, await getPv(run.name('late'))) });

  // a generic ephemeral volume: its claim is made for the pod, bound on the pod's node, and goes with the pod
  await createPv(run, 'scratch', { size: '1Gi', cls: local, local: LOCAL_NODE });
  await volumesAvailable([run.name('scratch')]);
  await rest.request('POST', `/api/v1/namespaces/${run.ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'eph' },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata: { labels: { kind: 'scratch' } },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: local, resources: { requests: { storage: '1Gi' } } } } } }] } } });
  const eph = await eventually('ephemeral pod running', async () => {
    const p = (await rest.request<Pod>('GET', `/api/v1/namespaces/${run.ns}/pods/eph`)).body;
    return p.status?.phase === 'Running' ? p : undefined;
  }, 60_000, 300);
  out.ephemeralNode = eph.spec.nodeName;
  const claim = await getPvc(run.ns, 'eph-scratch');
  out.ephemeralClaim = { ...(pvcShown(run, claim) as object), owners: (claim?.metadata as { ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> })
    .ownerReferences?.map((o) => `${o.kind}/${o.name} controller=${o.controller}`) };
  out.ephemeralVolume = pvShown(run, await getPv(run.name('scratch')));
  await rest.request('DELETE', `/api/v1/namespaces/${run.ns}/pods/eph?gracePeriodSeconds=0`);
  await eventually('ephemeral claim collected', async () => !(await getPvc(run.ns, 'eph-scratch')), 60_000, 300);
  await eventually('its volume released', async () => (await getPv(run.name('scratch')))?.status?.phase === 'Released', 30_000, 300);
  out.ephemeralAfter = pvShown(run, await getPv(run.name('scratch')));
  // Whether the binder first looks at a claim before its pod exists, before the scheduler has
  // picked a node, or after, is a race on both sides (upstream's informer usually wins it, our
  // signal round trip usually loses it): the waiting Events of the claims made next to their pods
  // say which, the claims' fields do not.
  out.events = (await settledEvents(run)).filter((e) => !/^PersistentVolumeClaim\/(eph-scratch|late) Normal (WaitForPodScheduled|WaitForFirstConsumer|ExternalProvisioning)/.test(e));
  return out;
}

/**
 * 50 claims for 50 volumes of the sizes they ask, plus a 51st racing claim 50 for the largest: who
 * binds what. Once 8 are bound, those 8 ask for 1Gi more (the expander's work) and `midway` runs.
 */
async function crowdScenario(run: Run, midway?: () => Promise<void>): Promise<{ pairs: string[]; raced: string[]; volumesBound: number; expanding: string[] }> {
  const crowd = await createClass(run, 'crowd', 'kubernetes.io/no-provisioner', 'Immediate', { allowVolumeExpansion: true });
  await Promise.all(Array.from({ length: 50 }, (_, i) => createPv(run, `v${i + 1}`, { size: `${i + 1}Gi`, cls: crowd })));
  await volumesAvailable(Array.from({ length: 50 }, (_, i) => run.name(`v${i + 1}`)));
  await Promise.all([...Array.from({ length: 50 }, (_, i) => createPvc(run, `c${i + 1}`, `${i + 1}Gi`, crowd)), createPvc(run, 'rival', '50Gi', crowd)]);
  const claims = async () => (await rest.request<{ items: Pvc[] }>('GET', `/api/v1/namespaces/${run.ns}/persistentvolumeclaims`)).body.items;
  const early = await eventually('binding under way', async () => {
    const bound = (await claims()).filter((c) => c.status?.phase === 'Bound' && c.metadata.name !== 'rival');
    return bound.length >= 8 ? bound.slice(0, 8) : undefined;
  }, 60_000, 100);
  await Promise.all(early.map((c) => rest.request('PATCH', `/api/v1/namespaces/${run.ns}/persistentvolumeclaims/${c.metadata.name}`, {
    body: { spec: { resources: { requests: { storage: `${Number(c.metadata.name.slice(1)) + 1}Gi` } } } }, contentType: 'application/merge-patch+json' })));
  if (midway) await midway();
  const all = await eventually('50 claims bound', async () => {
    const cs = await claims();
    return cs.filter((c) => c.status?.phase === 'Bound').length === 50 ? cs : undefined;
  }, 120_000, 500);
  const pvs = (await rest.request<{ items: Pv[] }>('GET', '/api/v1/persistentvolumes')).body.items.filter((v) => v.metadata.name.startsWith(`${run.tag}-v`));
  // every bound volume names exactly the claim that names it
  for (const v of pvs.filter((x) => x.spec.claimRef)) {
    const c = all.find((x) => x.metadata.name === v.spec.claimRef!.name);
    expect(c?.metadata.uid).toBe(v.spec.claimRef!.uid);
    expect(c?.spec.volumeName).toBe(v.metadata.name);
  }
  const byVolume = new Map<string, string[]>();
  for (const c of all) if (c.spec.volumeName) byVolume.set(c.spec.volumeName, [...(byVolume.get(c.spec.volumeName) ?? []), c.metadata.name]);
  expect([...byVolume.values()].every((cs) => cs.length === 1)).toBe(true);
  const racers = all.filter((c) => c.metadata.name === 'c50' || c.metadata.name === 'rival').map((c) => `${c.status?.phase}${c.spec.volumeName ? ` ${run.strip(c.spec.volumeName)}` : ''}`).sort();
  const pairs = all.filter((c) => c.metadata.name !== 'c50' && c.metadata.name !== 'rival').map((c) => `${c.metadata.name}=${run.strip(c.spec.volumeName ?? '')}`).sort();
  // each grown claim gets its ExternalExpanding Event once
  const grown = early.map((c) => c.metadata.name).sort();
  const expanding = await eventually('expansion events', async () => {
    const evs = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${run.ns}/events`)).body.items.filter((e) => e.reason === 'ExternalExpanding');
    return evs.length >= grown.length ? evs : undefined;
  }, 60_000, 500);
  return {
    pairs,
    raced: racers,
    volumesBound: pvs.filter((v) => v.status?.phase === 'Bound').length,
    expanding: [...new Set(expanding.map((e) => `${grown.includes(e.involvedObject.name) ? 'grown' : e.involvedObject.name} x${(e as { count?: number }).count ?? 1}`))],
  };
}

test('an Immediate class binds the smallest fit, names what does not fit, hands off to a provisioner, waits for resizers and reclaims as upstream does', async () => {
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials', SYNC]);
  const theirs = await immediateScenario(await newRun('pv-up'));
  await upstream.stop();
  await ours.start(uniqueName('tq-pv'));
  const mine = await immediateScenario(await newRun('pv-ours'));
  await ours.stop();
  expect(mine).toEqual(theirs);
  // the smallest fit, and the reasons upstream gives
  expect((theirs.bound as { small: { spec: { volumeName: string } } }).small.spec.volumeName).toBe('T-b');
  expect(theirs.events).toEqual(expect.arrayContaining([
    expect.stringContaining('Warning VolumeMismatch: Cannot bind to requested volume "T-a": requested PV is too small'),
    expect.stringContaining('Normal FailedBinding: no persistent volumes available for this claim and no storage class is set'),
    expect.stringContaining('Warning ProvisioningFailed: no volume plugin matched name: kubernetes.io/no-provisioner'),
    expect.stringContaining('Normal ExternalProvisioning'),
    expect.stringContaining('PersistentVolume/T-e Warning VolumeFailedDelete'),
    'PersistentVolumeClaim/grow-h Normal ExternalExpanding: waiting for an external controller to expand this PVC',
    'PersistentVolumeClaim/grow-g Normal ExternalExpanding: CSI migration enabled for kubernetes.io/gce-pd; waiting for external resizer to expand the pvc',
    'PersistentVolume/T-r Normal VolumeRecycled: Volume recycled',
    'PersistentVolume/T-r Normal RecyclerPod: Recycler pod: Successfully assigned default/recycler-for-T-r to NODE',
  ]));
}, 300_000);

test('WaitForFirstConsumer: the claim waits for its pod, which lands on the local volume\'s node and runs; a pod\'s ephemeral claim is made, bound and collected with it, as upstream', async () => {
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials', SYNC]);
  const theirs = await delayedScenario(await newRun('pv-wffc-up'));
  await upstream.stop();
  await ours.start(uniqueName('tq-pv'));
  const mine = await delayedScenario(await newRun('pv-wffc-ours'));
  await ours.stop();
  expect(theirs.podNode).toBe(LOCAL_NODE);
  expect(theirs.ephemeralNode).toBe(LOCAL_NODE);
  expect(theirs.lateOnSelectedNode).toBe(true);
  expect(mine).toEqual(theirs);
}, 240_000);

test('50 claims and 50 volumes pair one to one as upstream pairs them; a rival claim never shares a volume, and grown claims are reported once, even across a kill -9', async () => {
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials', SYNC]);
  const theirs = await crowdScenario(await newRun('pv-crowd-up'));
  await upstream.stop();
  const tq = uniqueName('tq-pv');
  // a killed replica's watch moves to the other after 3 s without heartbeats, not the default 15 s: the same takeover, sooner
  const args = ['--use-service-account-credentials', SYNC, '--informer-heartbeat-timeout', '3s'];
  const first = await ours.start(tq, { args });
  await ours.start(tq, { args });
  const mine = await crowdScenario(await newRun('pv-crowd-ours'), async () => first.kill('SIGKILL'));
  await ours.stop();
  expect(theirs.pairs).toHaveLength(49);
  expect(theirs.pairs.every((p) => p.split('=')[0].slice(1) === p.split('=')[1].slice(3))).toBe(true);
  expect(mine.pairs).toEqual(theirs.pairs);
  // one of the two racers has the 50Gi volume, the other waits, on both sides
  expect(theirs.raced).toEqual(['Bound T-v50', 'Pending']);
  expect(mine.raced).toEqual(theirs.raced);
  expect(mine.volumesBound).toBe(50);
  // the 8 grown claims each have one ExternalExpanding Event, as upstream's, though a replica died with the expansions under way
  expect(theirs.expanding).toEqual(['grown x1']);
  expect(mine.expanding).toEqual(theirs.expanding);
}, 420_000);
