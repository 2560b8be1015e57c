import * as fs from 'node:fs';
import * as path from 'node:path';
import { KWOK_MANAGED_LABEL, KWOK_MANAGED_VALUE, nodeManifest } from '../../starter/local/nodes';
import { eventually, freshNamespace, settledRead, testClusterAccess, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { OurReplicas } from '../support/manager';
import { addTestNode, deleteTestNode, kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The DaemonSet controller, compared with upstream kube-controller-manager v1.35.4 on the same
 * stack: the same kubectl steps against each manager in turn, on nodes of the test's own, and what
 * a user sees after each (status, pods per node, ControllerRevisions with their names and
 * numbers, `kubectl rollout history`, Events) field by field.
 */
const rest = testRest(testClusterAccess());
const upstream = new UpstreamKcm('daemonset');
const namespaces: string[] = [];
const nodes: string[] = [];
const CONTROLLERS = 'daemonset-controller';
const MARK = uniqueName('ds-e2e');
const ours = new OurReplicas(CONTROLLERS);

// a failed test must not leave a manager behind for the next one to race
afterEach(() => ours.stopAfter(upstream));

afterAll(async () => {
  await ours.stopAfter(upstream);
  for (const ns of namespaces) await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  for (const n of nodes) await deleteTestNode(rest, n);
});

type Pod = {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string; ownerReferences?: Array<{ kind: string; controller?: boolean }> };
  spec: { nodeName?: string; containers: Array<{ image: string }>; tolerations?: Array<Record<string, unknown>>; affinity?: unknown };
  status?: { phase?: string };
};
type Revision = { metadata: { name: string; labels?: Record<string, string> }; revision: number };
type Event = { reason: string; type: string; involvedObject: { kind: string; name: string }; source?: { component?: string } };

const imageOf = (p: Pod) => p.spec.containers[0].image.replace(/.*:/, '');

/** What a user sees of the DaemonSet `agent` in `ns`: status, pods per node, revisions. */
async function snapshot(ns: string): Promise<{ observed: boolean; [field: string]: unknown }> {
  const ds = (await rest.request<{ metadata: { generation: number }; status: Record<string, number> }>('GET', `/apis/apps/v1/namespaces/${ns}/daemonsets/agent`)).body;
  const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items.filter((p) => !p.metadata.deletionTimestamp);
  const revisions = (await rest.request<{ items: Revision[] }>('GET', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`)).body.items;
  const { observedGeneration, ...status } = ds.status;
  const byNode: Record<string, string[]> = {};
  for (const p of pods) {
    const node = (p.spec.nodeName ?? '?').replace(MARK, 'N');
    (byNode[node] ??= []).push(`${imageOf(p)} ${p.metadata.labels?.['controller-revision-hash'] ?? '-'}`);
  }
  for (const k of Object.keys(byNode)) byNode[k].sort();
  const sample = pods[0];
  return {
    observed: observedGeneration === ds.metadata.generation,
    status,
    pods: Object.fromEntries(Object.entries(byNode).sort(([a], [b]) => a.localeCompare(b))),
    // one pod in full: what upstream adds to the template (tolerations, the pinning affinity, labels)
    samplePod: sample && {
      labels: Object.keys(sample.metadata.labels ?? {}).sort(),
      tolerations: sample.spec.tolerations,
      affinity: JSON.stringify(sample.spec.affinity).replace(sample.spec.nodeName ?? '', 'NODE'),
      owner: sample.metadata.ownerReferences?.map((o) => `${o.kind} ${o.controller}`),
    },
    revisions: revisions.map((r) => `${r.metadata.name} #${r.revision} ${r.metadata.labels?.['controller-revision-hash']}`).sort(),
  };
}

/**
 * The state once it stops changing: two equal snapshots a second apart, both with the status
 * describing the current spec (a manager a second behind a change holds still on the old state).
 */
function settled(ns: string): Promise<unknown> {
  return settledRead('daemon set settled', () => snapshot(ns), 120_000, 1000, (s) => s.observed);
}

const manifest = (ns: string) => JSON.stringify({
  apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: ns },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
    template: { metadata: { labels: { app: 'agent' } }, spec: {
      nodeSelector: { [MARK]: 'yes' },
      // the test's nodes keep their not-ready taint: no node lifecycle controller runs here
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'agent', image: 'registry.invalid/agent:1' }],
    } },
  },
});

async function addNode(i: number): Promise<string> {
  const name = `${MARK}-${i}`;
  nodes.push(name);
  await addTestNode(rest, name, 960 + i, { labels: { [MARK]: 'yes' } });
  return name;
}

/** The kubectl steps, returning the settled state after each. */
async function scenario(ns: string, fourth: string, steps: Array<{ step: string; state: unknown }> = []): Promise<Array<{ step: string; state: unknown }>> {
  const file = path.join(TEST_DATA_DIR, `ds-${ns}.json`);
  fs.writeFileSync(file, manifest(ns));
  const rollout = () => kubectl('-n', ns, 'rollout', 'status', 'ds/agent', '--timeout=120s');
  const step = async (name: string, fn: () => Promise<unknown>) => {
    await fn();
    steps.push({ step: name, state: await settled(ns) });
  };
  await step('create on 3 nodes', async () => {
    await kubectl('apply', '-f', file);
    await rollout();
  });
  await step('a fourth node', async () => {
    await kubectl('label', 'node', fourth, `${MARK}=yes`);
    await rollout();
  });
  const [a, b] = nodes;
  await step('NoSchedule keeps, NoExecute evicts', async () => {
    await kubectl('taint', 'node', a, 'e2e=x:NoSchedule');
    await kubectl('taint', 'node', b, 'e2e=x:NoExecute');
  });
  await step('taints gone', async () => {
    await kubectl('taint', 'node', a, 'e2e=x:NoSchedule-');
    await kubectl('taint', 'node', b, 'e2e=x:NoExecute-');
    await rollout();
  });
  await step('rolling update, maxUnavailable 1', async () => {
    await kubectl('-n', ns, 'set', 'image', 'ds/agent', 'agent=registry.invalid/agent:2');
    await rollout();
  });
  await step('rolling update, maxSurge 1', async () => {
    await kubectl('-n', ns, 'patch', 'ds/agent', '--type=merge', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0,"maxSurge":1}}}}');
    await kubectl('-n', ns, 'set', 'image', 'ds/agent', 'agent=registry.invalid/agent:3');
    await rollout();
  });
  steps.push({ step: 'rollout history', state: (await kubectl('-n', ns, 'rollout', 'history', 'ds/agent')).replace(/\s+$/gm, '') });
  await step('rollout undo', async () => {
    await kubectl('-n', ns, 'rollout', 'undo', 'ds/agent');
    await rollout();
  });
  await step('OnDelete: a new template changes no pod', async () => {
    await kubectl('-n', ns, 'patch', 'ds/agent', '--type=merge', '-p', '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}');
    await kubectl('-n', ns, 'set', 'image', 'ds/agent', 'agent=registry.invalid/agent:4');
  });
  await step('OnDelete: a deleted pod comes back new', async () => {
    const victim = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items.find((p) => p.spec.nodeName === a)!;
    await kubectl('-n', ns, 'delete', 'pod', victim.metadata.name, '--wait=false');
    await eventually('replacement', async () => (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items
      .some((p) => p.spec.nodeName === a && !p.metadata.deletionTimestamp && imageOf(p) === '4'), 60_000);
  });
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
    .filter((e) => e.source?.component === 'daemonset-controller');
  steps.push({ step: 'events', state: [...new Set(events.map((e) => `${e.involvedObject.kind} ${e.type} ${e.reason}`))].sort() });
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `daemonset-${ns}.json`), JSON.stringify(steps, null, 1));
  await kubectl('label', 'node', fourth, `${MARK}-`);
  return steps;
}

test('kubectl apply, a new node, taints, RollingUpdate (maxUnavailable, then maxSurge), rollout history and undo, OnDelete: as upstream after every step', async () => {
  for (const i of [0, 1, 2]) await addNode(i);
  const fourth = await addNode(3);
  // the fourth node joins the DaemonSet's nodes in the second step
  await kubectl('label', 'node', fourth, `${MARK}-`);

  await upstream.start(CONTROLLERS, ['--use-service-account-credentials']);
  const theirs = await scenario(await freshNs(), fourth);
  await upstream.stop();

  await ours.start(uniqueName('ds-e2e'));
  const mine = await scenario(await freshNs(), fourth);
  await ours.stop();

  expect(theirs.map((s) => s.step)).toEqual(mine.map((s) => s.step));
  for (let i = 0; i < theirs.length; i++) expect(mine[i]).toEqual(theirs[i]);
}, 600_000);

async function freshNs(): Promise<string> {
  const ns = await freshNamespace(testClusterAccess(), 'ds');
  namespaces.push(ns);
  return ns;
}

test('two replicas, one killed with kill -9 during a rollout over 100 nodes: exactly one up-to-date pod per node', async () => {
  const many = Array.from({ length: 100 }, (_, i) => `${MARK}-m${String(i).padStart(3, '0')}`);
  nodes.push(...many);
  const bodies = many.map((name, i) => {
    const m = nodeManifest(700 + i);
    return { ...m, metadata: { ...m.metadata, name, labels: { [KWOK_MANAGED_LABEL]: KWOK_MANAGED_VALUE, [`${MARK}-many`]: 'yes', 'kubernetes.io/hostname': name } } };
  });
  for (let i = 0; i < bodies.length; i += 20) await Promise.all(bodies.slice(i, i + 20).map((body) => rest.request('POST', '/api/v1/nodes', { body })));

  const ns = await freshNs();
  const taskQueue = uniqueName('ds-kill');
  const args = ['--use-service-account-credentials', '--kube-api-qps=100', '--kube-api-burst=200'];
  const first = await ours.start(taskQueue, { args });
  await ours.start(taskQueue, { args });
  const m = JSON.parse(manifest(ns));
  m.spec.template.spec.nodeSelector = { [`${MARK}-many`]: 'yes' };
  m.spec.updateStrategy.rollingUpdate = { maxUnavailable: '20%' };
  const file = path.join(TEST_DATA_DIR, `ds-many-${ns}.json`);
  fs.writeFileSync(file, JSON.stringify(m));
  await kubectl('apply', '-f', file);
  await kubectl('-n', ns, 'rollout', 'status', 'ds/agent', '--timeout=180s');

  await kubectl('-n', ns, 'set', 'image', 'ds/agent', 'agent=registry.invalid/agent:2');
  // midway through the rollout
  await eventually('rollout under way', async () => {
    const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
    return pods.filter((p) => imageOf(p) === '2').length >= 30;
  }, 120_000, 200);
  await first.kill('SIGKILL');
  await kubectl('-n', ns, 'rollout', 'status', 'ds/agent', '--timeout=240s');

  const settledPods = await eventually('one pod per node', async () => {
    const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items.filter((p) => !p.metadata.deletionTimestamp);
    return pods.length === 100 ? pods : undefined;
  }, 60_000);
  const perNode = new Map<string, number>();
  for (const p of settledPods) perNode.set(p.spec.nodeName ?? '?', (perNode.get(p.spec.nodeName ?? '?') ?? 0) + 1);
  expect([...perNode.keys()].sort()).toEqual([...many].sort());
  expect([...perNode.values()].every((n) => n === 1)).toBe(true);
  expect(settledPods.every((p) => imageOf(p) === '2')).toBe(true);
  await ours.stop();
  for (const n of many) await deleteTestNode(rest, n);
}, 600_000);
