import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventually, testClusterAccess, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The ttl controller's node annotation at 1, 101 and 501 nodes and back, compared with upstream
 * kube-controller-manager v1.35.4. The extra nodes are bare Node objects (kwok does not run them):
 * the controller counts nodes, it does not care whether they are Ready.
 */
const rest = testRest(testClusterAccess());
const TTL = 'node.alpha.kubernetes.io/ttl';
const LABEL = 'temporal-kcm.dev/ttl-e2e';
const upstream = new UpstreamKcm('ttl');
let ours: ManagerProcess | undefined;

/** a sweep of 500 nodes at the default 20 writes a second takes 25 s; both managers get the same higher limit */
const QPS = ['--kube-api-qps=100', '--kube-api-burst=200'];

type Node = { metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> } };
const nodes = async () => (await rest.request<{ items: Node[] }>('GET', '/api/v1/nodes')).body.items;
const testNodes = () => nodes().then((all) => all.filter((n) => n.metadata.labels?.[LABEL]));

async function addNodes(count: number, prefix: string): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(names.slice(i, i + 25).map((name) => rest.request('POST', '/api/v1/nodes', { body: { metadata: { name, labels: { [LABEL]: 'true' } } } })));
  }
}

async function removeNodes(count: number): Promise<void> {
  const mine = (await testNodes()).map((n) => n.metadata.name).sort().reverse().slice(0, count);
  for (let i = 0; i < mine.length; i += 25) {
    await Promise.all(mine.slice(i, i + 25).map((name) => rest.request('DELETE', `/api/v1/nodes/${name}`).catch(() => undefined)));
  }
}

/**
 * Every node updated once (a label), as kubelet status updates would: upstream looks at a node's
 * annotation only when the node changes, so its nodes follow a new step on their next update.
 */
async function touchAll(stage: string): Promise<void> {
  const all = await nodes();
  for (let i = 0; i < all.length; i += 25) {
    await Promise.all(all.slice(i, i + 25).map((n) => rest.request('PATCH', `/api/v1/nodes/${n.metadata.name}`, {
      contentType: 'application/merge-patch+json', body: { metadata: { labels: { 'temporal-kcm.dev/ttl-touch': stage } } },
    })));
  }
}

/** The annotation every node settles on: value -> how many nodes carry it. */
async function settled(want: string, total: number): Promise<Record<string, number>> {
  return eventually(`every node at ttl ${want}`, async () => {
    const all = await nodes();
    const counts: Record<string, number> = {};
    for (const n of all) counts[n.metadata.annotations?.[TTL] ?? 'none'] = (counts[n.metadata.annotations?.[TTL] ?? 'none'] ?? 0) + 1;
    return all.length === total && counts[want] === total ? counts : undefined;
  }, 90_000, 500);
}

/**
 * The same steps for either manager. `touch` updates every node after each step, which upstream
 * needs; ours is run without, as it brings every node to a new step by itself. `midSweep` runs
 * once the 501-node step is being written.
 */
async function scenario(prefix: string, o: { touch: boolean; midSweep?: () => Promise<void> }): Promise<Record<string, unknown>> {
  const base = (await nodes()).length;
  const touch = (stage: string) => (o.touch ? touchAll(`${prefix}-${stage}`) : Promise.resolve());
  const out: Record<string, unknown> = {};
  await touch('0');
  out.small = await settled('0', base);
  await addNodes(101 - base, `${prefix}-a`);
  await touch('101');
  out.at101 = await settled('15', 101);
  await addNodes(400, `${prefix}-b`);
  if (o.midSweep) {
    await eventually('the sweep under way', async () => (await nodes()).some((n) => n.metadata.annotations?.[TTL] === '30'), 30_000, 100);
    await o.midSweep();
  }
  await touch('501');
  out.at501 = await settled('30', 501);
  // down to 460: above the 450 the 30 s step is left at, so it stays
  await removeNodes(41);
  await touch('460');
  out.at460 = await settled('30', 460);
  await removeNodes(460 - base);
  await touch('back');
  out.back = await settled('0', base);
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', `ttl-${prefix}.json`), JSON.stringify(out, null, 1));
  return out;
}

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  await rest.request('DELETE', `/api/v1/nodes?labelSelector=${encodeURIComponent(LABEL)}`).catch(() => undefined);
});

test('node.alpha.kubernetes.io/ttl at 1, 101, 501 and 460 nodes and back, as upstream sets it', async () => {
  await upstream.start('ttl-controller', ['--use-service-account-credentials', ...QPS]);
  const theirs = await scenario('up', { touch: true });
  await upstream.stop();

  const taskQueue = uniqueName('ttl-e2e');
  ours = await startManagerProcess(taskQueue, ['--use-service-account-credentials', ...QPS], { controllers: 'ttl-controller' });
  // no node is touched: ours brings every node to a new step by itself, and a replica killed in
  // the middle of that finishes it when it comes back
  const mine = await scenario('ours', { touch: false, midSweep: async () => {
    await ours!.kill('SIGKILL');
    ours = await startManagerProcess(taskQueue, ['--use-service-account-credentials', ...QPS], { controllers: 'ttl-controller' });
  } });
  expect(mine).toEqual(theirs);
}, 600_000);
