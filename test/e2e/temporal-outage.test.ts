import { staleAttemptWrites } from '../../chaos/checks';
import { scaleToFence } from '../support/fencing';
import { PortAllocator } from '../../starter/local/ports';
import { probeSecurePort } from '../../starter/local/http-probe';
import { eventually, freshNamespace, temporalAddress, testClusterAccess, uniqueName } from '../support/cluster';
import { cleanNamespace, listPods, mergePatch, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TcpProxy } from '../../bench/lib/tcp-proxy';

/**
 * Temporal away, at the start and in the middle of a run. A replica started while Temporal cannot
 * be reached waits for it (it used to exit 1 after the client's 10 s connect deadline) and says
 * why on /readyz; it starts its controllers once Temporal is there. Temporal going away later
 * turns /readyz to 503 with the reason while the process stays up, and its coming back brings the
 * controllers back with what changed meanwhile. The relay in front of the stack's Temporal is what
 * the test takes away: the manager's client and workers both reach Temporal only through it.
 */
const rest = testRest(testClusterAccess());
const ports = new PortAllocator();
let ns: string;
const managers: ManagerProcess[] = [];
const proxies: TcpProxy[] = [];

async function relay(): Promise<TcpProxy> {
  const [host, port] = temporalAddress().split(':');
  const p = new TcpProxy(await ports.take('temporal relay'), { host, port: Number(port) });
  proxies.push(p);
  return p;
}

const readyz = (m: ManagerProcess) => probeSecurePort(m.port, '/readyz');
const activePods = async () => (await listPods(rest, ns, 'app=outage')).filter((p) => !p.metadata.deletionTimestamp);

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'outage');
});

afterAll(async () => {
  for (const m of managers) await m.kill();
  for (const p of proxies) await p.cut();
  if (ns) {
    for (const rs of ['outage', 'cut']) await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/${rs}`).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});

test('a replica started without Temporal waits for it, not ready and saying why; a stop then ends it cleanly', async () => {
  const away = await relay();
  const m = await startManagerProcess(uniqueName('outage-stop'), [], { temporalAddress: away.address, untilReady: false });
  managers.push(m);
  // past the client's 10 s connect deadline, after which the old start exited 1
  await new Promise((r) => setTimeout(r, 12_000));
  expect(m.child.exitCode).toBeNull();
  const r = await readyz(m);
  expect(r.status).toBe(503);
  expect(r.body).toContain(`waiting for Temporal at ${away.address}: `);
  expect((await probeSecurePort(m.port, '/healthz')).status).toBe(200);
  await m.kill('SIGTERM');
  expect(m.child.exitCode).toBe(0);
}, 60_000);

test('Temporal reached late, then lost and back: /readyz follows it, and the controllers catch up with what changed meanwhile', async () => {
  const temporal = await relay();
  const m = await startManagerProcess(uniqueName('outage'), [], { temporalAddress: temporal.address, untilReady: false, controllers: 'replicaset' });
  managers.push(m);
  expect((await readyz(m)).status).toBe(503);

  await temporal.open();
  await eventually('ready once Temporal is there', async () => (await readyz(m)).status === 200, 60_000, 500);
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
    metadata: { name: 'outage' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'outage' } },
      template: { metadata: { labels: { app: 'outage' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/c:1' }], terminationGracePeriodSeconds: 0 } } },
  } });
  await eventually('2 pods', async () => (await activePods()).length === 2, 30_000, 500);

  await temporal.cut();
  const lost = await eventually('not ready with Temporal gone', async () => {
    const r = await readyz(m);
    return r.status === 503 ? r.body : undefined;
  }, 45_000, 500);
  expect(lost).toContain(`Temporal at ${temporal.address} has not answered for `);
  // the process stays up, and a change made meanwhile waits for Temporal
  await mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/replicasets/outage`, { spec: { replicas: 3 } });
  expect(m.child.exitCode).toBeNull();

  await temporal.open();
  await eventually('ready again', async () => (await readyz(m)).status === 200, 60_000, 500);
  await eventually('the change made during the outage reconciled: 3 pods', async () => (await activePods()).length === 3, 60_000, 500);
  await m.kill('SIGTERM');
  expect(m.child.exitCode).toBe(0);
}, 240_000);

test('a replica cut from Temporal but not from the API server mid-work: its writes stop within its lease, none after the other replica took over', async () => {
  const queue = uniqueName('cut');
  const temporal = await relay();
  await temporal.open();
  // slow to write (10 a second), so its batch is far from done when it is cut off
  const cutOff = await startManagerProcess(queue, ['--kube-api-qps', '10', '--kube-api-burst', '10'], { temporalAddress: temporal.address, controllers: 'replicaset' });
  managers.push(cutOff);
  const scale = await scaleToFence(rest, ns, 'cut', 150);
  // inside the slow-start batch of 32 (pods 31 to 62, 3.2 s at this rate)
  await eventually('the batch of 32 under way', async () => (await scale.owned()) >= 33, 60_000, 50);
  await temporal.cut();
  const cutAt = Date.now();
  // the replica that takes over: its worker gets the workflow task once the cut one's times out
  managers.push(await startManagerProcess(queue, ['--kube-api-qps', '50', '--kube-api-burst', '100'], { controllers: 'replicaset' }));
  const { events, fenced } = await scale.outcome(cutOff);
  // its requests name it as <host>-<pid> (activities/kube/fence.ts)
  const lastCutWrite = events.filter((e) => e.verb === 'create' && e.userAgent?.endsWith(`-${cutOff.pid})`))
    .map((e) => Date.parse(e.requestReceivedTimestamp ?? '')).reduce((a, b) => Math.max(a, b), 0);
  process.stderr.write(`cut from Temporal: last write ${lastCutWrite - cutAt} ms after the cut; fenced attempts ${fenced}\n`);
  expect(staleAttemptWrites(events)).toEqual([]);
  expect(fenced).toBeGreaterThanOrEqual(1);
  // within a local activity's allowance (3 s) and a probe's period of the cut
  expect(lastCutWrite - cutAt).toBeLessThan(4_000);
  await temporal.open();
}, 240_000);
