import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { eventCount, eventsFor, listPods, mergePatch, PodObject, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { UpstreamKcm } from '../support/upstream';

/**
 * Jobs as upstream's job controller runs them, on kwok pods that succeed or fail on command
 * (hack/kwok/stages.yaml): exact counts under parallelism, Indexed completion, the pod failure
 * backoff's spacing, pod failure policy, suspend/resume and an active deadline that outlives a
 * manager killed with SIGKILL; and, against upstream v1.35.4 on the same stack, what becomes of the
 * pods of Jobs deleted while no manager ran.
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('job-e2e');
const args = ['--controllers', 'job', '--resync-backoff-max', '5s', '--kube-api-qps', '200', '--kube-api-burst', '400'];
let manager: ManagerProcess;
let ns: string;

interface JobCondition { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }
interface JobStatus {
  active?: number; ready?: number; succeeded?: number; failed?: number; terminating?: number;
  startTime?: string; completionTime?: string; completedIndexes?: string; failedIndexes?: string;
  conditions?: JobCondition[]; uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
}
interface Job { metadata: { name: string; uid: string }; spec: Record<string, unknown>; status?: JobStatus }

const jobsPath = () => `/apis/batch/v1/namespaces/${ns}/jobs`;
const getJob = async (name: string) => (await rest.request<Job>('GET', `${jobsPath()}/${name}`)).body;
const condition = (j: Job, type: string) => j.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** A Job whose pods kwok drives by the outcome label (none: succeed once running). */
async function createJob(name: string, spec: Record<string, unknown>, pod: { labels?: Record<string, string>; annotations?: Record<string, string>; command?: string[] } = {}): Promise<Job> {
  const body = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: {
      ...spec,
      template: {
        metadata: { labels: pod.labels ?? {}, annotations: pod.annotations ?? {} },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/job:1', ...(pod.command ? { command: pod.command } : {}) }] },
      },
    },
  };
  return (await rest.request<Job>('POST', jobsPath(), { body })).body;
}

const podsOf = async (job: Job): Promise<PodObject[]> => (await listPods(rest, ns, `batch.kubernetes.io/controller-uid=${job.metadata.uid}`));
const phaseOf = (p: PodObject) => (p.status as { phase?: string } | undefined)?.phase;
const seconds = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;

/**
 * The Job of the backoff test, made at the start: its 30 s of backoffs run while the tests before
 * it do, on the same manager. Its test comes before the first that kills the manager.
 */
let failing: Promise<Job>;

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'job');
  manager = await startManagerProcess(taskQueue, args);
  failing = createJob('failing', { backoffLimit: 2 }, { labels: { 'kwok.temporal-kcm.dev/outcome': 'fail' } });
  await failing;
});

afterAll(async () => {
  // the controller releases the pods of deleted Jobs (tracking finalizers) before it goes
  await rest.request('DELETE', jobsPath(), { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  await eventually('pods released', async () => (await listPods(rest, ns)).every((p) => !(p.metadata.finalizers ?? []).length), 30_000).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
  await manager?.kill();
});

test('10 completions with parallelism 3: exact counts, never more than 3 active, every pod counted once and released', async () => {
  const job = await createJob('ten', { completions: 10, parallelism: 3 }, { annotations: { 'kwok.temporal-kcm.dev/delay-ms': '700' } });
  let maxActive = 0;
  const done = await eventually('job ten complete', async () => {
    const j = await getJob('ten');
    maxActive = Math.max(maxActive, j.status?.active ?? 0);
    return condition(j, 'Complete') ? j : undefined;
  }, 120_000, 100);
  expect(maxActive).toBeLessThanOrEqual(3);
  expect(maxActive).toBeGreaterThanOrEqual(2);
  expect(done.status?.succeeded).toBe(10);
  expect(done.status?.active ?? 0).toBe(0);
  expect(done.status?.failed ?? 0).toBe(0);
  expect(done.status?.completionTime).toBeDefined();
  expect(condition(done, 'SuccessCriteriaMet')).toBeDefined();
  expect(done.status?.uncountedTerminatedPods?.succeeded ?? []).toEqual([]);
  const pods = await podsOf(job);
  expect(pods.filter((p) => phaseOf(p) === 'Succeeded')).toHaveLength(10);
  // counted pods lose the tracking finalizer, so nothing keeps them from deletion
  await eventually('finalizers removed', async () =>
    (await podsOf(job)).every((p) => !(p.metadata.finalizers ?? []).includes('batch.kubernetes.io/job-tracking')), 30_000);
  expect(await eventCount(rest, ns, 'ten', 'Completed')).toBe(1);
}, 180_000);

test('an Indexed job completes each index exactly once, with the index in annotation, label, hostname and env', async () => {
  const job = await createJob('indexed', { completions: 5, parallelism: 2, completionMode: 'Indexed' });
  const done = await eventually('indexed complete', async () => {
    const j = await getJob('indexed');
    return condition(j, 'Complete') ? j : undefined;
  }, 120_000);
  expect(done.status).toMatchObject({ succeeded: 5, completedIndexes: '0-4' });
  const pods = await podsOf(job);
  const byIndex = new Map<string, number>();
  for (const p of pods) {
    const ix = p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
    expect(ix).toBeDefined();
    expect(p.metadata.labels?.['batch.kubernetes.io/job-completion-index']).toBe(ix);
    const spec = p.spec as { hostname?: string; containers: Array<{ env?: Array<{ name: string; valueFrom?: unknown }> }> };
    expect(spec.hostname).toBe(`indexed-${ix}`);
    expect(spec.containers[0].env?.some((e) => e.name === 'JOB_COMPLETION_INDEX')).toBe(true);
    if (phaseOf(p) === 'Succeeded') byIndex.set(ix!, (byIndex.get(ix!) ?? 0) + 1);
  }
  expect([...byIndex.entries()].sort()).toEqual([['0', 1], ['1', 1], ['2', 1], ['3', 1], ['4', 1]]);
}, 180_000);

test('pods steered by their command, as upstream\'s e2e images are: `sleep 2; exit 3` fails after 2 s with exit code 3, `sleep 1000000` keeps running', async () => {
  const failing = await createJob('cmd-fail', { backoffLimit: 0 }, { command: ['/bin/sh', '-c', 'sleep 2; exit 3'] });
  const forever = await createJob('cmd-forever', {}, { command: ['sleep', '1000000'] });
  const failed = await eventually('cmd-fail failed', async () => {
    const j = await getJob('cmd-fail');
    return condition(j, 'Failed') ? j : undefined;
  }, 60_000, 250);
  expect(condition(failed, 'Failed')?.reason).toBe('BackoffLimitExceeded');
  const [pod] = await podsOf(failing);
  const terminated = (pod.status as { containerStatuses?: Array<{ state?: { terminated?: { exitCode?: number } } }> }).containerStatuses?.[0]?.state?.terminated;
  expect(terminated?.exitCode).toBe(3);
  const st = pod.status as { startTime?: string; conditions?: Array<{ type: string; lastTransitionTime?: string }> };
  const ended = st.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
  expect(seconds(st.startTime!, ended!)).toBeGreaterThanOrEqual(1); // RFC 3339 seconds: 2 s can show as 1

  // the endless one is still running, and its Job active, well after the other ended
  await new Promise((r) => setTimeout(r, 3000));
  expect((await podsOf(forever)).map(phaseOf)).toEqual(['Running']);
  const j = await getJob('cmd-forever');
  expect(j.status?.active).toBe(1);
  expect(j.status?.succeeded ?? 0).toBe(0);
  await rest.request('DELETE', `${jobsPath()}/cmd-forever`, { body: { propagationPolicy: 'Background' } });
}, 120_000);

test('podFailurePolicy: Ignore does not count a failure against backoffLimit, FailJob fails the job at once', async () => {
  const rules = (action: string) => ({ rules: [{ action, onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }] });
  const failPod = { labels: { 'kwok.temporal-kcm.dev/outcome': 'fail' }, annotations: { 'kwok.temporal-kcm.dev/exit-code': '42' } };
  const ignoring = await createJob('ignoring', { backoffLimit: 0, podFailurePolicy: rules('Ignore') }, failPod);
  const failjob = await createJob('failjob', { backoffLimit: 6, podFailurePolicy: rules('FailJob') }, failPod);

  const fj = await eventually('failjob failed', async () => {
    const j = await getJob('failjob');
    return condition(j, 'Failed') ? j : undefined;
  }, 60_000);
  expect(condition(fj, 'Failed')?.reason).toBe('PodFailurePolicy');
  expect(condition(fj, 'Failed')?.message).toMatch(/Container main for pod .*failjob-.* failed with exit code 42 matching FailJob rule at index 0/);
  expect(fj.status?.failed).toBe(1);
  expect(await podsOf(failjob)).toHaveLength(1);

  // ignored failures are replaced without backoff and never fail the job, despite backoffLimit 0
  await eventually('two ignored failures', async () => (await podsOf(ignoring)).filter((p) => phaseOf(p) === 'Failed').length >= 2, 60_000);
  const ig = await getJob('ignoring');
  expect(condition(ig, 'Failed')).toBeUndefined();
  expect(ig.status?.failed ?? 0).toBe(0);
}, 180_000);

test('suspend deletes the active pods; resume starts them again with startTime reset to the resume', async () => {
  const job = await createJob('pausable', { parallelism: 2, completions: 2, suspend: true }, { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } });
  const suspended = await eventually('Suspended condition', async () => {
    const j = await getJob('pausable');
    return condition(j, 'Suspended') ? j : undefined;
  }, 30_000);
  expect(condition(suspended, 'Suspended')?.reason).toBe('JobSuspended');
  expect(suspended.status?.startTime).toBeUndefined();
  expect(await podsOf(job)).toHaveLength(0);

  const resumedAt = Date.now();
  await mergePatch(rest, `${jobsPath()}/pausable`, { spec: { suspend: false } });
  const running = await eventually('two ready pods', async () => {
    const j = await getJob('pausable');
    return j.status?.ready === 2 && j.status.active === 2 ? j : undefined;
  }, 30_000);
  // startTime is when the job was resumed, so an active deadline counts from there (1s resolution)
  expect(Date.parse(running.status!.startTime!)).toBeGreaterThanOrEqual(resumedAt - 1000);
  expect(running.status?.conditions?.find((c) => c.type === 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });

  await mergePatch(rest, `${jobsPath()}/pausable`, { spec: { suspend: true } });
  const again = await eventually('suspended again, pods gone', async () => {
    const j = await getJob('pausable');
    const live = (await podsOf(job)).filter((p) => !p.metadata.deletionTimestamp);
    return condition(j, 'Suspended') && live.length === 0 && (j.status?.active ?? 0) === 0 ? j : undefined;
  }, 30_000);
  // v1.35 keeps startTime on suspend (clearing it is the alpha MutableSchedulingDirectivesForSuspendedJobs)
  expect(again.status?.startTime).toBe(running.status?.startTime);
  expect(again.status?.failed ?? 0).toBe(0);
  expect((await eventsFor(rest, ns, 'pausable', 'Suspended')).length).toBeGreaterThanOrEqual(1);
  expect(await eventCount(rest, ns, 'pausable', 'Resumed')).toBe(1);
}, 120_000);

test('failing pods are retried with the exponential pod failure backoff until BackoffLimitExceeded', async () => {
  const job = await failing;
  const failed = await eventually('job failed', async () => {
    const j = await getJob('failing');
    return condition(j, 'Failed') ? j : undefined;
  }, 120_000, 500);
  expect(condition(failed, 'Failed')?.reason).toBe('BackoffLimitExceeded');
  expect(failed.status?.failed).toBe(3);
  const pods = (await podsOf(job)).sort((a, b) => Date.parse(a.metadata.creationTimestamp!) - Date.parse(b.metadata.creationTimestamp!));
  expect(pods).toHaveLength(3);
  // upstream waits 10s after the first failure and 20s after the second; pods fail as soon as they run,
  // and creation times have 1s resolution
  const gaps = [seconds(pods[0].metadata.creationTimestamp!, pods[1].metadata.creationTimestamp!), seconds(pods[1].metadata.creationTimestamp!, pods[2].metadata.creationTimestamp!)];
  expect(gaps[0]).toBeGreaterThanOrEqual(9);
  expect(gaps[0]).toBeLessThanOrEqual(14);
  expect(gaps[1]).toBeGreaterThanOrEqual(19);
  expect(gaps[1]).toBeLessThanOrEqual(25);
  expect(await eventCount(rest, ns, 'failing', 'BackoffLimitExceeded')).toBe(1);
}, 180_000);

test('activeDeadlineSeconds fails the job on time although the manager was killed while it waited', async () => {
  const job = await createJob('deadline', { parallelism: 2, completions: 2, activeDeadlineSeconds: 15 }, { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } });
  const started = await eventually('pods running', async () => {
    const j = await getJob('deadline');
    return j.status?.active === 2 && j.status.startTime ? j : undefined;
  }, 30_000);
  await manager.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 4000));
  manager = await startManagerProcess(taskQueue, args);

  const failed = await eventually('deadline exceeded', async () => {
    const j = await getJob('deadline');
    return condition(j, 'Failed') ? j : undefined;
  }, 60_000, 250);
  const cond = condition(failed, 'Failed')!;
  expect(cond.reason).toBe('DeadlineExceeded');
  expect(cond.message).toBe('Job was active longer than specified deadline');
  // the timer fired at startTime + 15s (1s resolution on both timestamps, plus a workflow task)
  const late = seconds(started.status!.startTime!, cond.lastTransitionTime!);
  expect(late).toBeGreaterThanOrEqual(14);
  expect(late).toBeLessThanOrEqual(19);
  await eventually('pods deleted', async () => (await podsOf(job)).length === 0, 30_000);
  expect(failed.status?.failed).toBe(2);
}, 120_000);

/** Plays the kubelet for one pod: its container exits with the given code. */
async function finishPod(p: PodObject, exitCode: number): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await mergePatch(rest, `/api/v1/namespaces/${ns}/pods/${p.metadata.name}/status`, { status: {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now }],
    containerStatuses: [{ name: 'main', image: 'registry.invalid/job:1', imageID: '', ready: false, restartCount: 0,
      state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: now, finishedAt: now } } }],
  } });
}

const podOfIndex = async (job: Job, ix: number) => eventually(`pod of index ${ix}`, async () => (await podsOf(job)).find((p) =>
  !p.metadata.deletionTimestamp && phaseOf(p) === 'Running' && p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === String(ix)), 30_000);

test('backoffLimitPerIndex 0: a failed index is not retried, the others run to the end, the Job fails with FailedIndexes', async () => {
  const job = await createJob('perindex', { completions: 3, parallelism: 3, completionMode: 'Indexed', backoffLimitPerIndex: 0 },
    { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } });
  await finishPod(await podOfIndex(job, 1), 3);
  await eventually('index 1 failed', async () => (await getJob('perindex')).status?.failedIndexes === '1', 30_000);
  await finishPod(await podOfIndex(job, 0), 0);
  await finishPod(await podOfIndex(job, 2), 0);
  const failed = await eventually('job failed', async () => {
    const j = await getJob('perindex');
    return condition(j, 'Failed') ? j : undefined;
  }, 30_000);
  expect(condition(failed, 'Failed')?.reason).toBe('FailedIndexes');
  expect(failed.status).toMatchObject({ completedIndexes: '0,2', failedIndexes: '1', succeeded: 2, failed: 1 });
  // index 1 got exactly one pod: no retry
  const forIndex1 = (await podsOf(job)).filter((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '1');
  expect(forIndex1).toHaveLength(1);
}, 120_000);

test('successPolicy: index 0 succeeding completes the Job and ends the other indexes', async () => {
  const job = await createJob('leader', { completions: 3, parallelism: 3, completionMode: 'Indexed', successPolicy: { rules: [{ succeededIndexes: '0' }] } },
    { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } });
  await podOfIndex(job, 1);
  await finishPod(await podOfIndex(job, 0), 0);
  const done = await eventually('job complete', async () => {
    const j = await getJob('leader');
    return condition(j, 'Complete') ? j : undefined;
  }, 30_000);
  expect(condition(done, 'SuccessCriteriaMet')?.reason).toBe('SuccessPolicy');
  expect(condition(done, 'Complete')?.reason).toBe('SuccessPolicy');
  expect(done.status).toMatchObject({ completedIndexes: '0', succeeded: 1 });
  await eventually('other indexes ended', async () => (await podsOf(job)).every((p) => phaseOf(p) === 'Succeeded' || p.metadata.deletionTimestamp), 30_000);
}, 120_000);

/**
 * What a user sees of two Jobs deleted while no manager ran: `kept` deleted with
 * propagationPolicy Orphan (its pod stays), `gone` deleted in the background (the garbage
 * collector deletes its pod once a manager runs again); and of a pod made meanwhile with the
 * tracking finalizer but no Job. `stop` ends the manager, `start` brings it back.
 */
async function deletedWhileDown(prefix: string, start: () => Promise<void>, stop: () => Promise<void>) {
  const space = await freshNamespace(testClusterAccess(), `job-${prefix}`);
  const jobs = `/apis/batch/v1/namespaces/${space}/jobs`;
  const running = { metadata: { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/job:1' }] } };
  const create = async (name: string) => (await rest.request<Job>('POST', jobs, { body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: running } } })).body;
  const pods = async (j: Job) => listPods(rest, space, `batch.kubernetes.io/controller-uid=${j.metadata.uid}`);
  const held = (p: PodObject) => (p.metadata.finalizers ?? []).includes('batch.kubernetes.io/job-tracking');
  await start();
  const [kept, gone] = [await create('kept'), await create('gone')];
  for (const j of [kept, gone]) await eventually(`${j.metadata.name} pod running`, async () => (await pods(j)).some((p) => phaseOf(p) === 'Running' && held(p)), 30_000, 100);
  await stop();
  await rest.request('DELETE', `${jobs}/kept`, { body: { propagationPolicy: 'Orphan' } });
  await rest.request('DELETE', `${jobs}/gone`, { body: { propagationPolicy: 'Background' } });
  // and a pod that never had a Job, made with the finalizer
  await rest.request('POST', `/api/v1/namespaces/${space}/pods`, { body: { apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'stray', labels: running.metadata.labels, finalizers: ['batch.kubernetes.io/job-tracking'] }, spec: running.spec } });
  const stray = async () => (await rest.request<PodObject>('GET', `/api/v1/namespaces/${space}/pods/stray`)).body;
  await start();
  const seen = await eventually('orphaned pod released, the other pod deleted', async () => {
    const [k, g] = [await pods(kept), await pods(gone)];
    const job = await rest.request('GET', `${jobs}/kept`).then(() => true, () => false);
    const s = await stray();
    if (job || k.length !== 1 || held(k[0]) || (k[0].metadata.ownerReferences ?? []).length || g.length || held(s)) return undefined;
    return {
      strayPod: { finalizers: s.metadata.finalizers ?? [], deleting: !!s.metadata.deletionTimestamp },
      keptPod: { phase: phaseOf(k[0]), finalizers: k[0].metadata.finalizers ?? [], ownerReferences: k[0].metadata.ownerReferences ?? [], deleting: !!k[0].metadata.deletionTimestamp },
      gonePods: g.length,
    };
  }, 30_000, 100).catch(async () => ({
    stuck: {
      kept: (await pods(kept)).map((p) => ({ finalizers: p.metadata.finalizers, ownerReferences: (p.metadata.ownerReferences ?? []).length, deleting: !!p.metadata.deletionTimestamp })),
      gone: (await pods(gone)).map((p) => ({ finalizers: p.metadata.finalizers, ownerReferences: (p.metadata.ownerReferences ?? []).length, deleting: !!p.metadata.deletionTimestamp })),
      stray: (await stray()).metadata.finalizers,
    },
  }));
  await rest.request('DELETE', `/api/v1/namespaces/${space}`).catch(() => undefined);
  return seen;
}

test('pods of Jobs deleted while no manager ran (orphaned, or deleted with the Job) lose the tracking finalizer once one runs again, as upstream', async () => {
  const withGc = args.map((a) => (a === 'job' ? 'job,garbagecollector' : a));
  await manager.kill();
  const upstream = new UpstreamKcm('job-orphans');
  const theirs = await deletedWhileDown('up', () => upstream.start('job,garbagecollector'), () => upstream.stop());
  await upstream.stop();
  // ours stops: its Job workflows stay open in Temporal, idle, and no watch of it sees the deletions
  // (a replica killed with SIGKILL is the activeDeadlineSeconds test's)
  const ours = await deletedWhileDown('ours', async () => {
    manager = await startManagerProcess(taskQueue, withGc);
  }, () => manager.kill());
  expect(theirs).toEqual({ keptPod: { phase: 'Running', finalizers: [], ownerReferences: [], deleting: false }, gonePods: 0, strayPod: { finalizers: [], deleting: false } });
  expect(ours).toEqual(theirs);
}, 120_000);
