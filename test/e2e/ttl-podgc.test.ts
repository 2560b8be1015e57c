import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { listPods, PodObject, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';

/**
 * Cleanup controllers: ttl-after-finished deletes a finished Job its TTL after it finished (also
 * when the manager restarted in between), and podgc keeps only the newest terminated pods past
 * --terminated-pod-gc-threshold and removes pods bound to a node that does not exist.
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('cleanup-e2e');
// each controller as its own ServiceAccount: the writes must fit upstream's system:controller:* roles
const args = ['--controllers', 'job,ttl-after-finished,garbagecollector,podgc', '--terminated-pod-gc-threshold', '10', '--use-service-account-credentials',
  '--resync-backoff-max', '5s', '--kube-api-qps', '200', '--kube-api-burst', '400'];
let manager: ManagerProcess | undefined;
let ns: string;
/** The wait for the stranded pod's deletion: its node's 40 s quarantine runs while the TTL test does. */
let strandedDeleted: Promise<Error | undefined> | undefined;

interface Job { metadata: { uid: string; deletionTimestamp?: string }; status?: { conditions?: Array<{ type: string; status: string; lastTransitionTime: string }> } }

const phaseOf = (p: PodObject) => (p.status as { phase?: string } | undefined)?.phase;
const terminated = (p: PodObject) => ['Succeeded', 'Failed'].includes(phaseOf(p) ?? '');

async function createJob(name: string, ttl: number): Promise<void> {
  await rest.request('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, { body: {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: { ttlSecondsAfterFinished: ttl, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/ttl:1' }] } } },
  } });
}

/** When the Job finished (its Complete condition's time), once it has. */
async function finishedAt(name: string): Promise<number | undefined> {
  const j = (await rest.request<Job>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/${name}`)).body;
  const c = j.status?.conditions?.find((x) => x.type === 'Complete' && x.status === 'True');
  return c ? Date.parse(c.lastTransitionTime) : undefined;
}

const gone = (path: string) => rest.request('GET', path).then(() => false, (e: { status?: number }) => e.status === 404);

/**
 * When the TTL controller deleted the Job: its deletionTimestamp (whole seconds), or when it was
 * seen gone if it went between two looks. The delete is foreground, so the Job then waits for
 * the garbage collector to remove its pod; that is the collector's time, not this controller's,
 * and is waited for apart.
 */
async function deletedAt(name: string, timeoutMs: number): Promise<number> {
  return eventually(`${name} deleted`, async () => {
    const j = await rest.request<Job>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/${name}`).then((r) => r.body, (e: { status?: number }) => {
      if (e.status === 404) return undefined;
      throw e;
    });
    if (!j) return Date.now();
    return j.metadata.deletionTimestamp ? Date.parse(j.metadata.deletionTimestamp) : undefined;
  }, timeoutMs, 200);
}

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'cleanup');
});

afterAll(async () => {
  await manager?.kill();
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
});

test('podgc keeps the 10 newest of 30 terminated pods', async () => {
  // three batches a few seconds apart, so "newest" does not depend on ties within one second
  const created: string[][] = [];
  for (let b = 0; b < 3; b++) {
    const names = Array.from({ length: 10 }, (_, i) => `done-${b}-${i}`);
    await Promise.all(names.map((name) => rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
      metadata: { name, labels: { 'kwok.temporal-kcm.dev/outcome': 'succeed', batch: String(b) } },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'registry.invalid/p:1' }] },
    } })));
    created.push(names);
    await new Promise((r) => setTimeout(r, 2100));
  }
  await eventually('30 pods succeeded', async () => (await listPods(rest, ns)).filter(terminated).length === 30, 60_000);
  // bound straight to a node nobody registered: the scheduler is bypassed
  await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
    metadata: { name: 'stranded' }, spec: { nodeName: 'no-such-node', containers: [{ name: 'c', image: 'registry.invalid/p:1' }] },
  } });

  // No terminated pod in the cluster is newer than ours, so cluster-wide the threshold keeps exactly
  // our last batch. (A pod already being deleted but held by a finalizer still counts, as upstream
  // counts it: being oldest, it takes the place of one of ours among those deleted.)
  manager = await startManagerProcess(taskQueue, args);
  await eventually('terminated pods trimmed to 10', async () => {
    const all = (await rest.request<{ items: PodObject[] }>('GET', '/api/v1/pods')).body.items.filter(terminated);
    return all.filter((p) => !p.metadata.deletionTimestamp).length === 10 ? all : undefined;
  }, 60_000, 500);
  const left = (await listPods(rest, ns)).filter(terminated).map((p) => p.metadata.name!).sort();
  expect(left).toEqual([...created[2]].sort());

  // a missing node is quarantined for 40s and checked again before its pods go: waited for by the
  // last test, so that the next one runs meanwhile
  strandedDeleted = eventually('stranded pod deleted', () => gone(`/api/v1/namespaces/${ns}/pods/stranded`), 120_000, 1000)
    .then(() => undefined, (e: Error) => e);
}, 240_000);

test('a Job with ttlSecondsAfterFinished 5 is deleted 5s after it finished, and one with 20 is, across a manager restart', async () => {
  manager ??= await startManagerProcess(taskQueue, args);
  await createJob('short', 5);
  await createJob('long', 20);
  const shortDone = await eventually('short finished', () => finishedAt('short'), 60_000);
  const longDone = await eventually('long finished', () => finishedAt('long'), 60_000);

  // the condition's and the deletion's times both have 1s resolution
  const shortAfter = ((await deletedAt('short', 30_000)) - shortDone) / 1000;
  expect(shortAfter).toBeGreaterThanOrEqual(4);
  expect(shortAfter).toBeLessThanOrEqual(9);

  // the 20s timer is armed; kill the manager, come back later, the Job still goes on time. The
  // kill comes at once (short's pod collection is waited for after): under load, waiting for it
  // first pushed the restart past long's due time, and the Job then went at the restart instead
  await manager.kill('SIGKILL');
  const killedAfter = (Date.now() - longDone) / 1000;
  await new Promise((r) => setTimeout(r, 5000));
  expect(await gone(`/apis/batch/v1/namespaces/${ns}/jobs/long`)).toBe(false);
  manager = await startManagerProcess(taskQueue, args);
  const readyAfter = (Date.now() - longDone) / 1000;
  const longAfter = ((await deletedAt('long', 40_000)) - longDone) / 1000;
  expect(longAfter).toBeGreaterThanOrEqual(19);
  // on time when the new replica was ready before the due time (the usual case: killed at
  // killedAfter s, ready at readyAfter s); at once after its start when the start itself ran past it
  const late = longAfter - Math.max(20, readyAfter);
  expect({ killedAfter, readyAfter, longAfter, lateAtMost5s: late <= 5 }).toEqual({ killedAfter, readyAfter, longAfter, lateAtMost5s: true });
  await eventually('short gone, its pod collected', () => gone(`/apis/batch/v1/namespaces/${ns}/jobs/short`), 60_000, 200);
  await eventually('long gone, its pod collected', () => gone(`/apis/batch/v1/namespaces/${ns}/jobs/long`), 60_000, 200);
}, 180_000);

test('podgc deletes a pod bound to a node that does not exist, once the node\'s quarantine ran out (across the restart above)', async () => {
  // created by the first test, before the manager started
  expect(strandedDeleted).toBeDefined();
  const failed = await strandedDeleted;
  if (failed) throw failed;
}, 180_000);
