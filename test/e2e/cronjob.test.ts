import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { cronJobWorkflowId } from '../../workflows/cronjob/workflow';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { eventsFor, listPods, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';

/**
 * CronJobs on the wall clock, as upstream schedules them: Forbid skips while a run is active,
 * Replace replaces it, history limits trim finished Jobs, a time zone moves the schedule, and a
 * manager that was dead over a scheduled time catches up by upstream's rules: the missed time is
 * started, and not at all once it is past startingDeadlineSeconds (upstream looks for missed times
 * only inside the deadline's window, so it records nothing for it either).
 */
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('cron-e2e');
// each controller as its own ServiceAccount: the writes must fit upstream's system:controller:* roles
const args = ['--controllers', 'cronjob,job', '--use-service-account-credentials', '--resync-backoff-max', '5s', '--kube-api-qps', '200', '--kube-api-burst', '400'];
let manager: ManagerProcess;
let ns: string;

interface Job {
  metadata: { name: string; uid: string; deletionTimestamp?: string; annotations?: Record<string, string>; ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
interface CronJob { status?: { active?: Array<{ name: string }>; lastScheduleTime?: string; lastSuccessfulTime?: string } }

const MINUTE = 60_000;
const minuteOf = (ms: number) => Math.floor(ms / MINUTE);
const sleepUntil = async (ms: number) => { while (Date.now() < ms) await new Promise((r) => setTimeout(r, Math.min(1000, ms - Date.now()))); };

async function createCronJob(name: string, spec: Record<string, unknown>, outcome?: 'run'): Promise<void> {
  await rest.request('POST', `/apis/batch/v1/namespaces/${ns}/cronjobs`, { body: {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
    spec: {
      schedule: '*/1 * * * *',
      ...spec,
      jobTemplate: { spec: { template: {
        metadata: { labels: outcome ? { 'kwok.temporal-kcm.dev/outcome': outcome } : {} },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/cron:1' }] },
      } } },
    },
  } });
}

/** The Jobs a CronJob controls, by name; deleted ones (still finalizing) are left out. */
async function jobsOf(cronJob: string): Promise<string[]> {
  const r = await rest.request<{ items: Job[] }>('GET', `/apis/batch/v1/namespaces/${ns}/jobs`);
  return r.body.items
    .filter((j) => !j.metadata.deletionTimestamp && j.metadata.ownerReferences?.some((o) => o.kind === 'CronJob' && o.name === cronJob && o.controller))
    .map((j) => j.metadata.name).sort();
}
/** The last events of a workflow's history, for a failure message: where a run stood when it was late. */
async function historyTail(workflowId: string): Promise<string> {
  const connection = await testTemporalConnection();
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const events = (JSON.parse(historyToJSON(history)) as { events?: Array<{ eventTime?: string; eventType?: string }> }).events ?? [];
    return events.slice(-25).map((ev) => `${ev.eventTime} ${ev.eventType}`).join('\n');
  } catch (e) {
    return `history of ${workflowId} not read: ${String(e)}`;
  } finally {
    await connection.close();
  }
}

const cronJob = async (name: string) => (await rest.request<CronJob>('GET', `/apis/batch/v1/namespaces/${ns}/cronjobs/${name}`)).body;

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'cron');
  manager = await startManagerProcess(taskQueue, args);
});

afterAll(async () => {
  await rest.request('DELETE', `/apis/batch/v1/namespaces/${ns}/cronjobs`).catch(() => undefined);
  await rest.request('DELETE', `/apis/batch/v1/namespaces/${ns}/jobs`, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  // the job controller releases the pods of deleted Jobs (tracking finalizers) before it goes
  await eventually('pods released', async () => (await listPods(rest, ns)).every((p) => !(p.metadata.finalizers ?? []).length), 30_000).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
  await manager?.kill();
});

test('Forbid, Replace, history limits, a time zone, and catch-up after a scheduled time missed without a manager', async () => {
  // leave room before the first tick so every CronJob exists (and is watched) before it: their
  // creation and watch events take about a second (and a first look a little late still starts t1)
  if (Date.now() % MINUTE > 54_000) await sleepUntil((minuteOf(Date.now()) + 1) * MINUTE + 1000);
  const t1 = (minuteOf(Date.now()) + 1) * MINUTE;
  const t2 = t1 + MINUTE;
  // the minute t2 as a wall clock in Kolkata (UTC+05:30, no DST): only that zone's reading fires it
  const kolkata = new Date(t2 + 330 * MINUTE);
  await Promise.all([
    createCronJob('forbid', { concurrencyPolicy: 'Forbid' }, 'run'),
    createCronJob('replace', { concurrencyPolicy: 'Replace' }, 'run'),
    createCronJob('history', { concurrencyPolicy: 'Allow', successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }),
    createCronJob('zoned', { schedule: `${kolkata.getUTCMinutes()} ${kolkata.getUTCHours()} * * *`, timeZone: 'Asia/Kolkata' }, 'run'),
    createCronJob('catchup', { concurrencyPolicy: 'Allow' }, 'run'),
    createCronJob('late', { concurrencyPolicy: 'Allow', startingDeadlineSeconds: 8 }, 'run'),
  ]);

  // every CronJob fires at t1 with the manager up
  await sleepUntil(t1 + 20_000);
  const name = (cj: string, t: number) => `${cj}-${minuteOf(t)}`;
  for (const cj of ['forbid', 'replace', 'history', 'catchup', 'late']) expect(await jobsOf(cj)).toEqual([name(cj, t1)]);
  expect(await jobsOf('zoned')).toEqual([]);

  // then every manager process is down across t2, and back 14 s after it: past late's 8 s
  // deadline, so it is not started, while every other CronJob starts its missed t2 as upstream's
  // catch-up does (which of several missed times it starts, only the most recent, is held by the
  // unit tests of mostRecentScheduleTime), under its concurrency policy
  await manager.kill('SIGKILL');
  await sleepUntil(t2 + 14_000);
  manager = await startManagerProcess(taskQueue, args);
  // a catch-up is due at once (about a second here); until 5 s before t3 it may still count
  await eventually('catch-up run', async () => (await jobsOf('catchup')).includes(name('catchup', t2)), t2 + 55_000 - Date.now())
    .catch(async (e: Error) => { throw new Error(`${e.message}\n${await historyTail(cronJobWorkflowId(ns, 'catchup'))}`); });
  await new Promise((r) => setTimeout(r, 3000));
  expect(Date.now()).toBeLessThan(t2 + MINUTE);

  // Forbid: the first run never finishes, so the missed time is skipped
  expect(await jobsOf('forbid')).toEqual([name('forbid', t1)]);
  expect((await eventsFor(rest, ns, 'forbid', 'JobAlreadyActive')).length).toBeGreaterThanOrEqual(1);
  expect((await cronJob('forbid')).status?.active?.map((a) => a.name)).toEqual([name('forbid', t1)]);
  // Replace: the second run deleted the first
  expect(await jobsOf('replace')).toEqual([name('replace', t2)]);
  expect((await eventsFor(rest, ns, 'replace', 'SuccessfulDelete')).length).toBeGreaterThanOrEqual(1);
  // history limit 1: of two successful runs only the newest is kept
  // (the trim and the status are separate writes: upstream too deletes the old Job before it
  // records the new one's success, so both are waited for)
  const history = await eventually('history trimmed and its success recorded', async () => {
    if (JSON.stringify(await jobsOf('history')) !== JSON.stringify([name('history', t2)])) return undefined;
    const cj = await cronJob('history');
    return Date.parse(cj.status?.lastSuccessfulTime ?? '') >= t2 ? cj : undefined;
  }, 20_000);
  expect(Date.parse(history.status!.lastSuccessfulTime!)).toBeGreaterThanOrEqual(t2);
  expect(Date.parse(history.status!.lastScheduleTime!)).toBe(t2);
  // the zoned schedule fired for t2 (UTC), not at the same wall-clock reading in UTC
  expect(await jobsOf('zoned')).toEqual([name('zoned', t2)]);
  const zonedJob = (await rest.request<Job>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/${name('zoned', t2)}`)).body;
  expect(Date.parse(zonedJob.metadata.annotations!['batch.kubernetes.io/cronjob-scheduled-timestamp'])).toBe(t2);
  expect(await jobsOf('catchup')).toEqual([name('catchup', t1), name('catchup', t2)].sort());
  expect(await jobsOf('late')).toEqual([name('late', t1)]);
}, 600_000);
