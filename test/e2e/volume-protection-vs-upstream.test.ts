import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError } from '../../activities/kube/rest';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { OurReplicas } from '../support/manager';
import { kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The PVC, PV and VolumeAttributesClass protection controllers and the ephemeral volume
 * controller, compared with upstream kube-controller-manager v1.35.4 on the same stack: the same
 * kubectl steps against each manager in turn, and what a user sees (finalizers, objects that stay
 * or go, the claims made for ephemeral volumes, Events) field by field. Ours runs as two replicas,
 * and the first is killed with kill -9 while pods with ephemeral volumes are being worked on.
 */
const rest = testRest(testClusterAccess());
const upstream = new UpstreamKcm('volume-protection');
const namespaces: string[] = [];
const clusterObjects: string[] = [];
const CONTROLLERS = 'persistentvolumeclaim-protection-controller,persistentvolume-protection-controller,volumeattributesclass-protection-controller,ephemeral-volume-controller';
const ours = new OurReplicas(CONTROLLERS);
/** a stack node (kwok runs its pods); pods name it, so neither the scheduler nor a binder is needed */
const NODE = 'kwok-node-0';
/** how long a protected object is watched to stay */
const HOLD_MS = 3000;
const BURST = 20;

afterEach(() => ours.stopAfter(upstream));

afterAll(async () => {
  await ours.stopAfter(upstream);
  for (const p of clusterObjects) await rest.request('DELETE', p).catch(() => undefined);
  // the claims go too, finalizers and all: no controller runs any more to release them, and a
  // later file's garbage collector would otherwise work through every one whose pod is gone
  // before it reached its own objects
  for (const ns of namespaces) {
    const claims = (await rest.request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`).catch(() => undefined))?.body.items ?? [];
    for (const c of claims) {
      const at = `/api/v1/namespaces/${ns}/persistentvolumeclaims/${c.metadata.name}`;
      await rest.request('PATCH', at, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
      await rest.request('DELETE', at).catch(() => undefined);
    }
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
});

type Meta = {
  name: string; uid: string; deletionTimestamp?: string; finalizers?: string[]; labels?: Record<string, string>; annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
};
type Obj = { metadata: Meta; spec?: Record<string, unknown>; status?: { phase?: string } };
type Event = { type: string; reason: string; message: string; involvedObject: { kind: string; name: string }; source?: { component?: string } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function read(p: string): Promise<Obj | undefined> {
  try {
    return (await rest.request<Obj>('GET', p)).body;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

const create = async (p: string, body: object) => (await rest.request<Obj>('POST', p, { body })).body;

/** What `kubectl get -o yaml` shows of an object's life: there or not, being deleted, its finalizers. */
async function lifeOf(p: string): Promise<unknown> {
  const o = await read(p);
  return o ? { exists: true, terminating: !!o.metadata.deletionTimestamp, finalizers: o.metadata.finalizers ?? [] } : { exists: false };
}

const gone = (what: string, p: string) => eventually(`${what} gone`, async () => (await read(p)) === undefined, 60_000);

/** Removes every finalizer, as a user with `kubectl patch --type=json` would: the controller puts its own back. */
async function stripFinalizers(p: string): Promise<unknown> {
  await rest.request('PATCH', p, { contentType: 'application/json-patch+json', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
  return eventually(`${p} finalizer back`, async () => {
    const f = (await read(p))?.metadata.finalizers;
    return f?.length ? f : undefined;
  }, 60_000);
}

const claimSpec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
const pvcPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/persistentvolumeclaims${name ? `/${name}` : ''}`;
const podPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;
const pvPath = (name = '') => `/api/v1/persistentvolumes${name ? `/${name}` : ''}`;
const vacPath = (name = '') => `/apis/storage.k8s.io/v1/volumeattributesclasses${name ? `/${name}` : ''}`;

function podBody(name: string, volumes: object[], spec: object = { nodeName: NODE }) {
  return { metadata: { name }, spec: { ...spec, containers: [{ name: 'c', image: 'registry.invalid/app:1' }], volumes } };
}
const ephemeralVolume = (name: string) => ({ name, ephemeral: { volumeClaimTemplate: {
  metadata: { labels: { app: 'scratch', vol: name }, annotations: { 'example.com/purpose': 'e2e' } },
  spec: { ...claimSpec, volumeMode: 'Filesystem' },
} } });

/** The claim made for an ephemeral volume, as `kubectl get pvc -o yaml` shows it, with the owner's UID checked against the pod's. */
async function ephemeralClaim(ns: string, pod: string, volume: string): Promise<unknown> {
  const owner = (await read(podPath(ns, pod)))!;
  const c = await eventually(`claim ${pod}-${volume}`, () => read(pvcPath(ns, `${pod}-${volume}`)), 60_000);
  return {
    labels: c.metadata.labels, annotations: c.metadata.annotations, finalizers: c.metadata.finalizers,
    ownerReferences: (c.metadata.ownerReferences ?? []).map(({ uid, ...r }) => ({ ...r, ownerIsThePod: uid === owner.metadata.uid })),
    spec: { accessModes: c.spec?.accessModes, resources: c.spec?.resources, volumeMode: c.spec?.volumeMode },
  };
}

/** The ephemeral volume controller's Events in the namespace, each once, the namespace's name blanked out. */
async function ephemeralEvents(ns: string): Promise<string[]> {
  const items = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items;
  return [...new Set(items.filter((e) => e.source?.component === 'ephemeral_volume')
    .map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.type} ${e.reason} [${e.source?.component}]: ${e.message.replaceAll(ns, 'NS')}`))].sort();
}

/**
 * Every step once, against whichever manager runs. `midBurst` runs while the pods of the burst are
 * being created and their claims made. Returns what a user sees after each step.
 */
async function scenario(ns: string, midBurst?: () => Promise<void>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const pv = (n: string) => `${ns}-${n}`;
  clusterObjects.push(pvPath(pv('bare')), pvPath(pv('bound')), vacPath(pv('bare')), vacPath(pv('gold')));

  // A user strips the finalizers the admission plugin added: each controller puts its own back.
  // This is also how we know the manager is up and its caches are synced.
  await create(pvcPath(ns), { metadata: { name: 'bare' }, spec: claimSpec });
  await create(pvPath(), { metadata: { name: pv('bare') }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/bare' } } });
  await create(vacPath(), { metadata: { name: pv('bare') }, driverName: 'e2e.example.com', parameters: { iops: '100' } });
  out.finalizersPutBack = {
    pvc: await stripFinalizers(pvcPath(ns, 'bare')),
    pv: await stripFinalizers(pvPath(pv('bare'))),
    vac: await stripFinalizers(vacPath(pv('bare'))),
  };

  // A claim used by a running pod, one named only by a pod that is never scheduled, a Bound
  // volume, and a class a claim asks for: all deleted at once.
  await create(pvcPath(ns), { metadata: { name: 'data' }, spec: claimSpec });
  await create(pvcPath(ns), { metadata: { name: 'idle' }, spec: claimSpec });
  await create(podPath(ns), podBody('user', [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }]));
  await create(podPath(ns), podBody('unscheduled', [{ name: 'd', persistentVolumeClaim: { claimName: 'idle' } }], { nodeSelector: { 'e2e.example.com/nowhere': 'true' } }));
  await create(pvPath(), { metadata: { name: pv('bound') }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/bound' } } });
  await rest.request('PATCH', `${pvPath(pv('bound'))}/status`, { contentType: 'application/merge-patch+json', body: { status: { phase: 'Bound' } } });
  await create(vacPath(), { metadata: { name: pv('gold') }, driverName: 'e2e.example.com', parameters: { iops: '500' } });
  await create(pvcPath(ns), { metadata: { name: 'fast' }, spec: { ...claimSpec, volumeAttributesClassName: pv('gold') } });
  await eventually('pod user running', async () => (await read(podPath(ns, 'user')))?.status?.phase === 'Running', 60_000);
  await kubectl('-n', ns, 'delete', 'pvc', 'data', 'idle', '--wait=false');
  await kubectl('delete', 'pv', pv('bound'), '--wait=false');
  await kubectl('delete', 'volumeattributesclass', pv('gold'), '--wait=false');
  await sleep(HOLD_MS);
  out.deletedWhileInUse = {
    pvcUsedByRunningPod: await lifeOf(pvcPath(ns, 'data')),
    pvcNamedByUnscheduledPod: await lifeOf(pvcPath(ns, 'idle')),
    boundPv: await lifeOf(pvPath(pv('bound'))),
    vacOfAClaim: await lifeOf(vacPath(pv('gold'))),
  };

  // What was holding each goes: the pod, the volume's binding, the claim.
  await kubectl('-n', ns, 'delete', 'pod', 'user', '--wait=false');
  await rest.request('PATCH', `${pvPath(pv('bound'))}/status`, { contentType: 'application/merge-patch+json', body: { status: { phase: 'Released' } } });
  await kubectl('-n', ns, 'delete', 'pvc', 'fast', '--wait=false');
  await Promise.all([gone('claim data', pvcPath(ns, 'data')), gone('volume', pvPath(pv('bound'))), gone('claim fast', pvcPath(ns, 'fast')), gone('class', vacPath(pv('gold')))]);
  out.afterTheUserWent = 'claim, volume and class gone';

  // A pod with a generic ephemeral volume gets its claim; a claim already there under the name,
  // not the pod's, is an error on the pod.
  await create(podPath(ns), podBody('eph', [ephemeralVolume('scratch')]));
  out.ephemeralClaim = await ephemeralClaim(ns, 'eph', 'scratch');
  await create(pvcPath(ns), { metadata: { name: 'clash-v' }, spec: claimSpec });
  // both managers' claim caches have it before the pod comes
  await sleep(1500);
  await create(podPath(ns), podBody('clash', [ephemeralVolume('v')]));
  out.events = await eventually('FailedBinding on the pod', async () => {
    const ev = await ephemeralEvents(ns);
    return ev.length ? ev : undefined;
  }, 60_000);
  out.foreignClaimUntouched = ((await read(pvcPath(ns, 'clash-v')))?.metadata.ownerReferences ?? []).length === 0;

  // A burst of pods with ephemeral volumes: each gets exactly one claim, its own.
  for (let i = 0; i < BURST; i++) {
    await create(podPath(ns), podBody(`burst-${i}`, [ephemeralVolume('data')]));
    if (i === 11 && midBurst) {
      // claims are being made for the first pods while the rest are still coming
      await eventually('the first burst claims', async () =>
        (await rest.request<{ items: Obj[] }>('GET', pvcPath(ns))).body.items.filter((c) => c.metadata.name.startsWith('burst-')).length >= 3, 30_000, 100);
      await midBurst();
    }
  }
  out.burst = await eventually('every burst pod has its claim', async () => {
    const pods = (await rest.request<{ items: Obj[] }>('GET', podPath(ns))).body.items.filter((p) => p.metadata.name.startsWith('burst-'));
    const claims = (await rest.request<{ items: Obj[] }>('GET', pvcPath(ns))).body.items.filter((c) => c.metadata.name.startsWith('burst-'));
    if (claims.length < BURST) return undefined;
    const owners = new Map(pods.map((p) => [p.metadata.uid, p.metadata.name]));
    return {
      claims: claims.length,
      eachPodsOwn: claims.every((c) => {
        const ref = c.metadata.ownerReferences?.find((r) => r.controller);
        return ref && owners.get(ref.uid) === ref.name && c.metadata.name === `${ref.name}-data`;
      }),
      podsWithAClaim: new Set(claims.map((c) => c.metadata.ownerReferences?.[0]?.uid)).size,
    };
  }, 90_000);
  // no failure was reported on any of them: a retried create after the kill met its own claim
  out.eventsAfterBurst = await ephemeralEvents(ns);
  return out;
}

test('PVC, PV and VolumeAttributesClass protection and ephemeral volume claims, as upstream; a replica killed mid-burst', async () => {
  const t0 = Date.now();
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  const upstreamNs = await freshNamespace(testClusterAccess(), 'volprot');
  namespaces.push(upstreamNs);
  const theirs = await scenario(upstreamNs);
  await upstream.stop();

  const taskQueue = uniqueName('volprot-e2e');
  const first = await ours.start(taskQueue);
  await ours.start(taskQueue);
  const ourNs = await freshNamespace(testClusterAccess(), 'volprot');
  namespaces.push(ourNs);
  const mine = await scenario(ourNs, async () => {
    await first.kill('SIGKILL');
  });
  await ours.stop();
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'volume-protection-vs-upstream.json'), JSON.stringify({ theirs, mine, seconds: (Date.now() - t0) / 1000 }, null, 1));

  // what upstream did, spelled out, so a change on either side shows here first
  expect(theirs.finalizersPutBack).toEqual({ pvc: ['kubernetes.io/pvc-protection'], pv: ['kubernetes.io/pv-protection'], vac: ['kubernetes.io/vac-protection'] });
  expect(theirs.deletedWhileInUse).toEqual({
    pvcUsedByRunningPod: { exists: true, terminating: true, finalizers: ['kubernetes.io/pvc-protection'] },
    pvcNamedByUnscheduledPod: { exists: false },
    boundPv: { exists: true, terminating: true, finalizers: ['kubernetes.io/pv-protection'] },
    vacOfAClaim: { exists: true, terminating: true, finalizers: ['kubernetes.io/vac-protection'] },
  });
  expect(theirs.events).toEqual([
    'Pod/clash Warning FailedBinding [ephemeral_volume]: ephemeral volume v: PVC NS/clash-v was not created for pod NS/clash (pod is not owner)',
  ]);
  expect(theirs.burst).toEqual({ claims: BURST, eachPodsOwn: true, podsWithAClaim: BURST });
  expect(mine).toEqual(theirs);
}, 300_000);
