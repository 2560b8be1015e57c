import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { eventually, freshNamespace, testKubeConfig, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { addTestNode, deleteTestNode, kubeconfigPath, kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * Node health, compared with upstream kube-controller-manager v1.35.4 on the same stack: the same
 * kubectl steps against each manager in turn, on a node of the test's own, and what a user sees
 * afterwards (which pods were evicted and when, their conditions, the Events) field by field.
 */
const rest = testRest(testKubeConfig());
let upstream: ChildProcess | undefined;
let ours: ManagerProcess | undefined;
const taskQueue = uniqueName('node-health-e2e');
const namespaces: string[] = [];
const nodes: string[] = [];

async function startUpstream(controllers: string, extra: string[] = []): Promise<void> {
  const bin = (await ensureBinaries(['kube-controller-manager']))['kube-controller-manager'];
  const log = fs.openSync(path.join(TEST_DATA_DIR, 'logs', 'kcm-upstream-node-health.log'), 'a');
  const kc = kubeconfigPath();
  upstream = spawn(bin, [`--kubeconfig=${kc}`, `--authentication-kubeconfig=${kc}`, `--authorization-kubeconfig=${kc}`,
    `--controllers=${controllers}`, '--leader-elect=false', '--secure-port=0', '--use-service-account-credentials', ...extra], { stdio: ['ignore', log, log] });
}

async function stopUpstream(): Promise<void> {
  if (!upstream) return;
  upstream.kill('SIGTERM');
  await new Promise((r) => upstream!.once('exit', r));
  upstream = undefined;
}

type Pod = {
  metadata?: { name?: string; deletionTimestamp?: string };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
};
type Event = { reason: string; message: string; type: string; involvedObject: { name: string; kind: string }; source?: { component?: string } };

/** The pods of the scenario: each tolerates the test taint differently. */
const TOLERATIONS: Record<string, unknown[]> = {
  none: [],
  // deleted when its 10 s run out
  ten: [{ key: 'e2e', operator: 'Equal', value: 'x', effect: 'NoExecute', tolerationSeconds: 10 }],
  // the taint goes before its 30 s run out: the countdown is cancelled
  thirty: [{ key: 'e2e', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
  // a DaemonSet-style toleration of everything
  all: [{ operator: 'Exists' }],
  // tolerates the taint's key but not its value
  wrongvalue: [{ key: 'e2e', operator: 'Equal', value: 'y', effect: 'NoExecute' }],
};

async function createPods(ns: string, node: string): Promise<void> {
  for (const [name, tolerations] of Object.entries(TOLERATIONS)) {
    await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
      // a long termination keeps an evicted pod visible, with its conditions, until the test ends
      metadata: { name, annotations: { 'kwok.temporal-kcm.dev/termination-delay-ms': '600000' } },
      spec: { nodeName: node, tolerations, containers: [{ name: 'c', image: 'registry.invalid/p:1' }] },
    } });
  }
  await eventually('pods running', async () => {
    const pods = (await rest.request<{ items: Array<{ status?: { phase?: string } }> }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
    return pods.length === Object.keys(TOLERATIONS).length && pods.every((p) => p.status?.phase === 'Running');
  }, 60_000);
}

interface Outcome {
  /** per pod: evicted or not, roughly when (seconds after the taint, in 5 s steps), its DisruptionTarget condition */
  pods: Record<string, { evicted: boolean; afterSeconds?: number; disruption?: unknown }>;
  /** per pod, the taint manager's Events, in order */
  events: Record<string, string[]>;
}

/** kubectl taint on a healthy node; the taint is removed again 15 s later; everything is read 35 s after the taint. */
async function taintScenario(ns: string, node: string): Promise<Outcome> {
  await createPods(ns, node);
  const taintedAt = Date.now();
  await kubectl('taint', 'node', node, 'e2e=x:NoExecute');
  const evictedAt: Record<string, number> = {};
  const watchUntil = async (ms: number) => {
    while (Date.now() < taintedAt + ms) {
      const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
      for (const p of pods) if (p.metadata?.deletionTimestamp && evictedAt[p.metadata.name!] === undefined) evictedAt[p.metadata.name!] = Date.now() - taintedAt;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  await watchUntil(15_000);
  await kubectl('taint', 'node', node, 'e2e=x:NoExecute-');
  await watchUntil(35_000);
  const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
    .filter((e) => e.reason === 'TaintManagerEviction');
  const out: Outcome = { pods: {}, events: {} };
  for (const name of Object.keys(TOLERATIONS)) {
    const p = pods.find((x) => x.metadata?.name === name);
    const dt = p?.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    out.pods[name] = {
      evicted: evictedAt[name] !== undefined,
      ...(evictedAt[name] !== undefined ? { afterSeconds: Math.round(evictedAt[name] / 5000) * 5 } : {}),
      ...(dt ? { disruption: { status: dt.status, reason: dt.reason, message: dt.message } } : {}),
    };
    out.events[name] = events.filter((e) => e.involvedObject.name === name).map((e) => `${e.type} ${e.reason} ${e.source?.component}: ${e.message.replace(ns, 'NS')}`);
  }
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `node-health-taint-${ns}.json`), JSON.stringify({ out, evictedAt }, null, 1));
  return out;
}

async function freshNode(): Promise<string> {
  const name = uniqueName('nh');
  nodes.push(name);
  await addTestNode(rest, name, 900 + nodes.length);
  return name;
}

async function freshNs(): Promise<string> {
  const ns = await freshNamespace(testKubeConfig(), 'node-health');
  namespaces.push(ns);
  return ns;
}

afterAll(async () => {
  await stopUpstream();
  await ours?.kill();
  for (const ns of namespaces) {
    const pods = (await rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`).catch(() => ({ body: { items: [] as Pod[] } }))).body.items;
    await Promise.all(pods.map((p) => rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata?.name}`, { body: { gracePeriodSeconds: 0 } }).catch(() => undefined)));
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
  for (const n of nodes) await deleteTestNode(rest, n);
});

test('kubectl taint NoExecute on a healthy node evicts exactly the pods upstream evicts, when upstream does, with its conditions and Events', async () => {
  // upstream's taint eviction controller finds a node's pods through an index that only its node
  // lifecycle controller registers: run alone, it fails on every node (see docs/COMPATIBILITY.md)
  await startUpstream('taint-eviction-controller,node-lifecycle-controller');
  const theirs = await taintScenario(await freshNs(), await freshNode());
  await stopUpstream();

  ours = await startManagerProcess(taskQueue, ['--use-service-account-credentials'], { controllers: 'taint-eviction-controller' });
  const mine = await taintScenario(await freshNs(), await freshNode());
  await ours.kill();
  ours = undefined;

  // what upstream did, spelled out, so a change on either side shows here first
  expect(theirs.pods.none).toMatchObject({ evicted: true, afterSeconds: 0 });
  expect(theirs.pods.ten).toMatchObject({ evicted: true, afterSeconds: 10 });
  expect(theirs.pods.thirty.evicted).toBe(false);
  expect(theirs.pods.all.evicted).toBe(false);
  expect(mine).toEqual(theirs);
}, 240_000);

test('a replica killed with kill -9 in the middle of a toleration: the pod is evicted once, at its deadline', async () => {
  const ns = await freshNs();
  const node = await freshNode();
  await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
    metadata: { name: 'tolerant', annotations: { 'kwok.temporal-kcm.dev/termination-delay-ms': '600000' } },
    spec: { nodeName: node, tolerations: [{ key: 'e2e', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20 }], containers: [{ name: 'c', image: 'registry.invalid/p:1' }] },
  } });
  await eventually('pod running', async () => (await rest.request<{ status?: { phase?: string } }>('GET', `/api/v1/namespaces/${ns}/pods/tolerant`)).body.status?.phase === 'Running');

  ours = await startManagerProcess(taskQueue, ['--use-service-account-credentials'], { controllers: 'taint-eviction-controller' });
  const taintedAt = Date.now();
  await kubectl('taint', 'node', node, 'e2e=x:NoExecute');
  // 8 s into the countdown, which runs on the workflow's durable timer
  await new Promise((r) => setTimeout(r, Math.max(0, taintedAt + 8000 - Date.now())));
  await ours.kill('SIGKILL');
  // down for a while, so that a countdown started over would end late
  await new Promise((r) => setTimeout(r, 4000));
  ours = await startManagerProcess(taskQueue, ['--use-service-account-credentials'], { controllers: 'taint-eviction-controller' });

  const deletedAt = await eventually('pod evicted', async () => {
    const p = (await rest.request<Pod>('GET', `/api/v1/namespaces/${ns}/pods/tolerant`)).body;
    return p.metadata?.deletionTimestamp ? Date.now() : undefined;
  }, 40_000, 100);
  const lateness = (deletedAt - taintedAt) / 1000 - 20;
  expect(Math.abs(lateness)).toBeLessThanOrEqual(2);
  // once: a second deletion would leave a second Event
  await new Promise((r) => setTimeout(r, 3000));
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
    .filter((e) => e.reason === 'TaintManagerEviction' && e.involvedObject.name === 'tolerant');
  expect(events.map((e) => e.message)).toEqual([`Marking for deletion Pod ${ns}/tolerant`]);
}, 180_000);
