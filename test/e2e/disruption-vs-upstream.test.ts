import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { ApiError } from '../../activities/kube/rest';
import { OurReplicas } from '../support/manager';
import { addTestNode, deleteTestNode, kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';
import { testRest } from '../support/kube';
import { UpstreamKcm } from '../support/upstream';

/**
 * The disruption controller, compared with upstream kube-controller-manager v1.35.4 on the same
 * stack: the same steps against each manager in turn, and what a user sees (PDB status and
 * conditions, eviction answers, `kubectl drain`, Events) field by field.
 */
const rest = testRest(testClusterAccess());
const upstream = new UpstreamKcm('disruption');
const namespaces: string[] = [];
const nodes: string[] = [];
const CONTROLLERS = 'deployment-controller,replicaset-controller,disruption-controller';
const ours = new OurReplicas(CONTROLLERS);
const WIDGETS = 'widgets.pdb-e2e.temporal-kcm.dev';

async function freshNs(): Promise<string> {
  const ns = await freshNamespace(testClusterAccess(), 'pdb');
  namespaces.push(ns);
  return ns;
}

// a failed test must not leave a manager behind for the next one to race
afterEach(() => ours.stopAfter(upstream));

afterAll(async () => {
  await ours.stopAfter(upstream);
  for (const ns of namespaces) await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  for (const n of nodes) await deleteTestNode(rest, n);
  await rest.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${WIDGETS}`).catch(() => undefined);
});

type Condition = { type: string; status: string; reason?: string; message?: string; observedGeneration?: number };
type Pdb = { metadata: { generation?: number }; status?: {
  currentHealthy?: number; desiredHealthy?: number; expectedPods?: number; disruptionsAllowed?: number; observedGeneration?: number;
  disruptedPods?: Record<string, string>; conditions?: Condition[];
} };
type Pod = { metadata: { name: string; deletionTimestamp?: string }; spec?: { nodeName?: string }; status?: { phase?: string; conditions?: Condition[] } };
type Event = { reason: string; message: string; type: string; involvedObject: { name: string; kind: string }; source?: { component?: string } };

/** What `kubectl get pdb -o yaml` shows of a budget's status, times aside. */
async function pdbStatus(ns: string, name: string): Promise<unknown> {
  const b = (await rest.request<Pdb>('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`)).body;
  const s = b.status ?? {};
  return {
    observed: s.observedGeneration === b.metadata.generation,
    currentHealthy: s.currentHealthy, desiredHealthy: s.desiredHealthy, expectedPods: s.expectedPods, disruptionsAllowed: s.disruptionsAllowed,
    disruptedPods: Object.keys(s.disruptedPods ?? {}).length,
    conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, observedGeneration: c.observedGeneration })),
  };
}

/** The statuses once they stop changing: two equal reads 1.5 s apart, each with its DisruptionAllowed condition. */
async function settled(ns: string, names: string[]): Promise<Record<string, unknown>> {
  const read = async () => Object.fromEntries(await Promise.all(names.map(async (n) => [n, await pdbStatus(ns, n)] as const)));
  let prev = JSON.stringify(await read());
  return eventually('budgets settled', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    const cur = await read();
    const same = JSON.stringify(cur) === prev;
    prev = JSON.stringify(cur);
    return same && Object.values(cur).every((s) => (s as { conditions: Condition[] }).conditions.length > 0) ? cur : undefined;
  }, 90_000, 0);
}

/** The manager's Events in the namespace: on which object, of which type and reason, saying what. */
async function managerEvents(ns: string): Promise<string[]> {
  const items = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items;
  return [...new Set(items.filter((e) => e.source?.component === 'controllermanager')
    // which of several budgets upstream names is arbitrary (a map's order)
    .map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.type} ${e.reason}: ${e.message.replaceAll(ns, 'NS').replace(/Chose "[^"]*"/, 'Chose "?"')}`))].sort();
}

async function evict(ns: string, pod: string): Promise<number> {
  try {
    await rest.request('POST', `/api/v1/namespaces/${ns}/pods/${pod}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } } });
    return 201;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
}

const livePods = async (ns: string, selector: string) =>
  (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items.filter((p) => !p.metadata.deletionTimestamp);

const readyCount = (pods: Pod[]) => pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;

/**
 * A Deployment of 5 on node `from` (preferred; `to` takes what cannot stay), a budget of
 * minAvailable 4; two evictions in a row; then `kubectl drain` of `from`. `midDrain` runs once the
 * drain is under way. Returns the budget's status after each step and the eviction answers.
 */
async function budgetScenario(ns: string, from: string, to: string, midDrain?: () => Promise<void>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {
    metadata: { name: 'web' },
    spec: { replicas: 5, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: {
      affinity: { nodeAffinity: {
        // terms are ORed; a node-name field selector takes one value
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [from, to].map((n) => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] })) },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchFields: [{ key: 'metadata.name', operator: 'In', values: [from] }] } }],
      } },
      // test nodes keep their not-ready taint: no node lifecycle controller runs here
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'c', image: 'registry.invalid/web:1' }],
    } } },
  } });
  await eventually('5 pods ready', async () => readyCount(await livePods(ns, 'app=web')) === 5, 60_000);
  await kubectl('-n', ns, 'create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=4');
  out.created = await settled(ns, ['web']);

  // One eviction is within the budget; the next, before a replacement is Ready, is not. Both
  // nodes are cordoned meanwhile: kwok makes a scheduled replacement Ready within milliseconds,
  // and a controller that counted it before the second eviction would rightly allow that one too.
  const [first, second] = (await livePods(ns, 'app=web')).map((p) => p.metadata.name);
  for (const n of [from, to]) await kubectl('cordon', n);
  out.evictions = [await evict(ns, first), await evict(ns, second)];
  for (const n of [from, to]) await kubectl('uncordon', n);
  await eventually('replacement ready', async () => readyCount(await livePods(ns, 'app=web')) === 5, 60_000);
  out.recovered = await settled(ns, ['web']);

  const onNode = (await livePods(ns, 'app=web')).filter((p) => p.spec?.nodeName === from).length;
  out.podsOnDrainedNode = onNode > 0;
  let draining = true;
  const drain = kubectl('drain', from, '--ignore-daemonsets', '--delete-emptydir-data', `--pod-selector=app=web`, '--timeout=150s')
    .finally(() => { draining = false; });
  // the budget holds all along: never fewer than minAvailable Ready pods that are not being deleted
  let fewestReady = 5;
  const watchReady = (async () => {
    while (draining) {
      fewestReady = Math.min(fewestReady, readyCount(await livePods(ns, 'app=web')));
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  if (midDrain) await midDrain();
  const drained = await drain;
  await watchReady;
  out.budgetHeldDuringDrain = fewestReady >= 4;
  out.drainCompleted = /node\/\S+ drained/.test(drained);
  await eventually('all replicas ready elsewhere', async () => {
    const pods = await livePods(ns, 'app=web');
    return readyCount(pods) === 5 && pods.every((p) => p.spec?.nodeName === to);
  }, 60_000);
  out.drained = await settled(ns, ['web']);
  await kubectl('uncordon', from);
  out.events = await managerEvents(ns);
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `disruption-budget-${ns}.json`), JSON.stringify({ out, onNode, fewestReady, drained }, null, 1));
  return out;
}

test('a budget of minAvailable 4 over 5 replicas: status, an eviction within it, a refused one, and kubectl drain, as upstream', async () => {
  const [a, b] = [uniqueName('pdb-a'), uniqueName('pdb-b')];
  nodes.push(a, b);
  await addTestNode(rest, a, 950);
  await addTestNode(rest, b, 951);

  await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  const theirs = await budgetScenario(await freshNs(), a, b);
  await upstream.stop();

  // ours as two replicas; the first started is killed with kill -9 in the middle of the drain
  const taskQueue = uniqueName('pdb-e2e');
  // a killed replica's watch moves to the other after 3 s without heartbeats, not the default 15 s: the same takeover, sooner
  const args = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s'];
  const first = await ours.start(taskQueue, { args });
  await ours.start(taskQueue, { args });
  const mine = await budgetScenario(await freshNs(), a, b, async () => {
    await new Promise((r) => setTimeout(r, 3000));
    await first.kill('SIGKILL');
  });
  await ours.stop();

  // what upstream did, spelled out, so a change on either side shows here first
  expect(theirs.created).toEqual({ web: {
    observed: true, currentHealthy: 5, desiredHealthy: 4, expectedPods: 5, disruptionsAllowed: 1, disruptedPods: 0,
    conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 1 }],
  } });
  expect(theirs.evictions).toEqual([201, 429]);
  expect(theirs.drainCompleted).toBe(true);
  expect(theirs.budgetHeldDuringDrain).toBe(true);
  expect(mine).toEqual(theirs);
}, 420_000);

async function setUpWidgets(): Promise<void> {
  await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: {
    metadata: { name: WIDGETS },
    spec: { group: 'pdb-e2e.temporal-kcm.dev', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
          status: { type: 'object', properties: { replicas: { type: 'integer' } } },
        } } },
        subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } }] },
  } }).catch((e: unknown) => {
    if (!(e instanceof ApiError && e.status === 409)) throw e;
  });
  await eventually('widgets served', async () => {
    const r = await rest.request<{ resources: Array<{ name: string }> }>('GET', '/apis/pdb-e2e.temporal-kcm.dev/v1').catch(() => undefined);
    return r?.body.resources.some((x) => x.name === 'widgets/scale');
  }, 30_000);
}

/** A pod owned (as controller) by `owner`, Running and Ready by kwok. */
async function ownedPod(ns: string, name: string, labels: Record<string, string>, owner?: { apiVersion: string; kind: string; name: string; uid: string }): Promise<void> {
  await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
    metadata: { name, labels, ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}) },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/p:1' }] },
  } });
}

/**
 * Budgets over every kind of target and every way a budget can fail: a StatefulSet, a custom
 * resource with a scale subresource, a DaemonSet (no scale: the sync fails safe), pods with no
 * controller, two budgets over the same pods; unready pods evicted by each unhealthyPodEvictionPolicy;
 * and a pod whose DisruptionTarget mark goes stale.
 */
async function targetsScenario(ns: string): Promise<Record<string, unknown>> {
  const create = async (path: string, body: object) => (await rest.request<{ metadata: { uid: string } }>('POST', path, { body })).body.metadata.uid;
  const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/p:1' }] } });
  const sts = await create(`/apis/apps/v1/namespaces/${ns}/statefulsets`, { metadata: { name: 'db' }, spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template('db') } });
  const ds = await create(`/apis/apps/v1/namespaces/${ns}/daemonsets`, { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent') } });
  const widget = await create(`/apis/pdb-e2e.temporal-kcm.dev/v1/namespaces/${ns}/widgets`, { apiVersion: 'pdb-e2e.temporal-kcm.dev/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 4 } });
  for (const i of [0, 1]) await ownedPod(ns, `db-${i}`, { app: 'db' }, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: sts });
  await ownedPod(ns, 'agent-x', { app: 'agent' }, { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds });
  for (const i of [0, 1, 2]) await ownedPod(ns, `w-${i}`, { app: 'w' }, { apiVersion: 'pdb-e2e.temporal-kcm.dev/v1', kind: 'Widget', name: 'w', uid: widget });
  await ownedPod(ns, 'naked', { app: 'naked' });
  await ownedPod(ns, 'marked', { app: 'marked' });
  for (const policy of ['strict', 'lenient']) for (const i of [0, 1, 2]) await ownedPod(ns, `${policy}-${i}`, { app: policy });
  await eventually('pods ready', async () => readyCount(await livePods(ns, 'app')) === 14, 60_000);

  // a mark the eviction API would leave if the deletion after it had failed, almost two minutes ago
  await rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/marked/status`, { contentType: 'application/strategic-merge-patch+json', body: { status: { conditions: [{
    type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: new Date(Date.now() - 112_000).toISOString(),
  }] } } });

  const budget = (name: string, selector: Record<string, string>, spec: object) =>
    create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, { metadata: { name }, spec: { selector: { matchLabels: selector }, ...spec } });
  await budget('db', { app: 'db' }, { maxUnavailable: 1 });
  await budget('agent', { app: 'agent' }, { maxUnavailable: 1 });
  await budget('w', { app: 'w' }, { minAvailable: '50%' });
  await budget('naked', { app: 'naked' }, { maxUnavailable: 1 });
  await budget('empty', { app: 'nothing' }, { minAvailable: 1 });
  // two budgets over the same pods
  await budget('both-1', { app: 'db' }, { minAvailable: 1 });

  // unhealthyPodEvictionPolicy: two of three pods turn unready under a budget of minAvailable 2
  await budget('strict', { app: 'strict' }, { minAvailable: 2 });
  await budget('lenient', { app: 'lenient' }, { minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  for (const policy of ['strict', 'lenient']) {
    for (const i of [0, 1]) {
      await rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/${policy}-${i}/status`, { contentType: 'application/strategic-merge-patch+json',
        body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'E2E' }] } } });
    }
  }
  const statuses = await settled(ns, ['db', 'agent', 'w', 'naked', 'empty', 'both-1', 'strict', 'lenient']);
  // the eviction API decides by the status: an unready pod goes only while the budget is healthy, or always
  const unhealthyEvictions = { strict: await evict(ns, 'strict-0'), lenient: await evict(ns, 'lenient-0') };
  // a pod two budgets select: its next event draws the warning
  await rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/db-0`, { contentType: 'application/merge-patch+json', body: { metadata: { annotations: { touched: 'yes' } } } });
  await eventually('shared pod warned', async () => (await managerEvents(ns)).some((e) => e.includes('MultiplePodDisruptionBudgets')), 30_000, 250);
  const marked = await eventually('stale mark reset', async () => {
    const c = (await rest.request<Pod>('GET', `/api/v1/namespaces/${ns}/pods/marked`)).body.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
    return c?.status === 'False' ? { status: c.status, reason: c.reason ?? '', message: c.message ?? '' } : undefined;
  }, 60_000, 250);
  const out = { statuses, unhealthyEvictions, marked, events: await managerEvents(ns) };
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `disruption-targets-${ns}.json`), JSON.stringify(out, null, 1));
  return out;
}

test('budgets over a StatefulSet, a scaled custom resource, a DaemonSet, unmanaged pods and shared pods; unhealthyPodEvictionPolicy; a stale DisruptionTarget mark: as upstream', async () => {
  await setUpWidgets();
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  const theirs = await targetsScenario(await freshNs());
  await upstream.stop();

  await ours.start(uniqueName('pdb-e2e'));
  const mine = await targetsScenario(await freshNs());
  await ours.stop();

  const t = theirs as { statuses: Record<string, { expectedPods: number; conditions: Condition[] }>; marked: unknown };
  expect(t.statuses.db.expectedPods).toBe(3);
  expect(t.statuses.w.expectedPods).toBe(4);
  expect(t.statuses.agent.conditions[0]).toMatchObject({ reason: 'SyncFailed', message: 'daemonsets.apps does not implement the scale subresource' });
  expect(t.marked).toEqual({ status: 'False', reason: '', message: '' });
  expect((theirs as { unhealthyEvictions: unknown }).unhealthyEvictions).toEqual({ strict: 429, lenient: 201 });
  expect(mine).toEqual(theirs);
}, 300_000);
