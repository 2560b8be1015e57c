import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { cronJobWorkflowId } from '../../workflows/cronjob/workflow';
import { type LoopState, STATE_QUERY } from '../../workflows/runtime/object-loop';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { eventsFor, listPods, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';

/**
 * CronJobs on the wall clock, as upstream schedules them: a replica that comes back after a kill -9
 * to CronJobs whose last run was longer ago than their schedule catches up by upstream's rules (the
 * missed time is started, and not at all once it is past startingDeadlineSeconds: upstream looks
 * for missed times only inside the deadline's window, so it records nothing for it either); the
 * runs' timers the dead replica left fire on the new one; and on that tick Forbid skips while a run
 * is active, Replace replaces it, history limits trim finished Jobs, and a time zone moves the
 * schedule. One minute boundary, not two: the missed time is the boundary just passed, which the
 * status says was missed.
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

test('a missed time caught up after a kill -9, then Forbid, Replace, history limits, a deadline and a time zone on the next tick', async () => {
  // The Jobs' names carry their scheduled minute, so the file needs one minute boundary, t1, with
  // the manager up. The earlier time b, the boundary just passed, is made a missed one: while the
  // manager is dead, the status of four CronJobs is set back to say their last run was the minute
  // before b, as a manager that was down over b would have left it, and the new replica starts b
  // at once. `late` (deadline 8 s) is set back too, but at least 12 s after b: outside its window,
  // so upstream's catch-up neither starts nor records it. Every setup step fits between b + 12 s
  // and t1 - 10 s; outside that window the test waits for the next.
  const minuteAt = (ms: number) => ms % MINUTE;
  if (minuteAt(Date.now()) < 12_000) await sleepUntil(minuteOf(Date.now()) * MINUTE + 12_000);
  if (minuteAt(Date.now()) > 35_000) await sleepUntil((minuteOf(Date.now()) + 1) * MINUTE + 12_000);
  const b = minuteOf(Date.now()) * MINUTE;
  const t1 = b + MINUTE;
  // the minute t1 as a wall clock in Kolkata (UTC+05:30, no DST): only that zone's reading fires it
  const kolkata = new Date(t1 + 330 * MINUTE);
  await Promise.all([
    createCronJob('forbid', { concurrencyPolicy: 'Forbid' }, 'run'),
    createCronJob('replace', { concurrencyPolicy: 'Replace' }, 'run'),
    createCronJob('history', { concurrencyPolicy: 'Allow', successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }),
    createCronJob('zoned', { schedule: `${kolkata.getUTCMinutes()} ${kolkata.getUTCHours()} * * *`, timeZone: 'Asia/Kolkata' }, 'run'),
    createCronJob('catchup', { concurrencyPolicy: 'Allow' }, 'run'),
    createCronJob('late', { concurrencyPolicy: 'Allow', startingDeadlineSeconds: 8 }, 'run'),
  ]);
  const all = ['forbid', 'replace', 'history', 'zoned', 'catchup', 'late'];
  // every CronJob's run is waiting for t1 on a timer when the manager dies: the new replica inherits those timers
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    await eventually('every CronJob waiting for t1', async () => {
      const states = await Promise.all(all.map((cj) => client.workflow.getHandle(cronJobWorkflowId(ns, cj)).query<LoopState>(STATE_QUERY).catch(() => undefined)));
      // upstream's 100 ms of slack after the scheduled time
      return states.every((st) => {
        const at = Date.parse(String(st?.view?.nextScheduledRunAt));
        return at >= t1 && at < t1 + 1000;
      }) || undefined;
    }, 15_000);
  } finally {
    await connection.close();
  }
  await manager.kill('SIGKILL');

  const setBack = new Date(b - MINUTE).toISOString();
  for (const cj of ['forbid', 'replace', 'history', 'catchup', 'late']) {
    await rest.request('PATCH', `/apis/batch/v1/namespaces/${ns}/cronjobs/${cj}/status`, {
      body: { status: { lastScheduleTime: setBack } }, contentType: 'application/merge-patch+json',
    });
  }
  manager = await startManagerProcess(taskQueue, args);
  const name = (cj: string, t: number) => `${cj}-${minuteOf(t)}`;
  // the Job first, then the status that records it: both
  await eventually('the missed time b started and recorded', async () => {
    for (const cj of ['forbid', 'replace', 'history', 'catchup']) {
      if (JSON.stringify(await jobsOf(cj)) !== JSON.stringify([name(cj, b)])) return undefined;
      if (Date.parse((await cronJob(cj)).status?.lastScheduleTime ?? '') !== b) return undefined;
    }
    return true;
  }, t1 - 5_000 - Date.now()).catch(async (e: Error) => { throw new Error(`${e.message}\n${await historyTail(cronJobWorkflowId(ns, 'catchup'))}`); });
  // started before t1, or t1 would have been the most recent missed time
  expect(Date.now()).toBeLessThan(t1);
  // b was past late's deadline when the replica came back; zoned's first time is t1
  expect(await jobsOf('late')).toEqual([]);
  expect(Date.parse((await cronJob('late')).status!.lastScheduleTime!)).toBe(b - MINUTE);
  expect(await jobsOf('zoned')).toEqual([]);

  // t1, with the new replica up
  await sleepUntil(t1 + 8_000);
  await eventually('every CronJob past t1', async () => {
    for (const cj of ['replace', 'zoned', 'late']) if (!(await jobsOf(cj)).includes(name(cj, t1))) return undefined;
    return (await jobsOf('catchup')).length === 2 || undefined;
  }, 20_000);

  // Forbid: b's run never finishes, so t1 is skipped
  expect(await jobsOf('forbid')).toEqual([name('forbid', b)]);
  expect((await eventsFor(rest, ns, 'forbid', 'JobAlreadyActive')).length).toBeGreaterThanOrEqual(1);
  expect((await cronJob('forbid')).status?.active?.map((a) => a.name)).toEqual([name('forbid', b)]);
  // Replace: t1's run deleted b's
  expect(await jobsOf('replace')).toEqual([name('replace', t1)]);
  expect((await eventsFor(rest, ns, 'replace', 'SuccessfulDelete')).length).toBeGreaterThanOrEqual(1);
  // history limit 1: of two successful runs only the newest is kept
  // (the trim and the status are separate writes: upstream too deletes the old Job before it
  // records the new one's success, so both are waited for)
  const history = await eventually('history trimmed and its success recorded', async () => {
    if (JSON.stringify(await jobsOf('history')) !== JSON.stringify([name('history', t1)])) return undefined;
    const cj = await cronJob('history');
    return Date.parse(cj.status?.lastSuccessfulTime ?? '') >= t1 ? cj : undefined;
  }, 20_000);
  expect(Date.parse(history.status!.lastSuccessfulTime!)).toBeGreaterThanOrEqual(t1);
  expect(Date.parse(history.status!.lastScheduleTime!)).toBe(t1);
  // the zoned schedule fired for t1 (UTC), not at the same wall-clock reading in UTC
  expect(await jobsOf('zoned')).toEqual([name('zoned', t1)]);
  const zonedJob = (await rest.request<Job>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/${name('zoned', t1)}`)).body;
  expect(Date.parse(zonedJob.metadata.annotations!['batch.kubernetes.io/cronjob-scheduled-timestamp'])).toBe(t1);
  expect(await jobsOf('catchup')).toEqual([name('catchup', b), name('catchup', t1)].sort());
  // on time, inside its deadline
  expect(await jobsOf('late')).toEqual([name('late', t1)]);
}, 600_000);
