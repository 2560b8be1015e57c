import { proxyActivities } from '@temporalio/workflow';
import type { CronJobActivities, CronJobTarget } from '../../activities/cronjob/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import {
  decideSchedule,
  dropMissing,
  formatTime,
  inActiveList,
  isChildOf,
  jobRef,
  onScheduleChange,
  planHistoryCleanup,
  reconcileChildren,
  restoreUnconfirmed,
  statusEqual,
  unexpectedJobs,
  withoutActive,
} from './logic';
import type { ChildJob, CronJobEvent, CronJobEventRecord, CronJobStatusView, CronJobView, UnconfirmedStart } from './types';
import { newerVersion } from '../common/resource-version';
import { API_BATCHES } from '../runtime/activity-options';

export interface CronJobWorkflowInput {
  namespace: string;
  name: string;
  /** the object this run belongs to; a run started by a signal learns it on first observation */
  uid?: string;
  /** Jobs created whose status entry was not yet seen written, carried across continue-as-new */
  unconfirmed?: UnconfirmedStart[];
  tuning?: Partial<LoopTuning>;
}

export function cronJobWorkflowId(namespace: string, name: string): string {
  return `cronjob/${namespace}/${name}`;
}

// every activity here heartbeats per API call, so a replica killed mid-way is noticed in seconds
const io = proxyActivities<CronJobActivities>(API_BATCHES);

/**
 * One CronJob: starts its Jobs at the scheduled times (a durable timer waits for the next one),
 * applies the concurrency policy and starting deadline, keeps status.active and the last
 * schedule/success times true, and trims finished Jobs to the history limits.
 */
export async function cronJobWorkflow(input: CronJobWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const key = { namespace: input.namespace, name: input.name };
  // A new object with this name gets a fresh run (same workflow ID), never this run's state.
  const id = objectIdentity<typeof cronJobWorkflow>(input.uid, (next) => [{ ...input, uid: next, unconfirmed: [] }]);
  let unconfirmed: UnconfirmedStart[] = input.unconfirmed ?? [];
  let cronJob: CronJobView | undefined;
  const jobs = new Map<string, ChildJob>();
  let needObserve = true;
  let gone = false;
  /** this batch of signals changed the schedule or zone and nothing else (upstream then only moves the wake-up) */
  let scheduleChanged = false;
  let otherChange = false;
  /** when the current timer fires: a schedule change may only bring it forward, as upstream's delaying queue */
  let wakeAt: number | undefined;

  function target(cj: CronJobView): CronJobTarget {
    return { namespace: cj.namespace, name: cj.name, uid: cj.uid, resourceVersion: cj.resourceVersion };
  }

  function children(cj: CronJobView): ChildJob[] {
    return [...jobs.values()].filter((j) => isChildOf(cj, j));
  }

  function settle(result: ReconcileResult): ReconcileResult {
    wakeAt = result.requeueAfterMs !== undefined ? Date.now() + result.requeueAfterMs : undefined;
    return result;
  }

  async function record(cj: CronJobView, events: CronJobEventRecord[]): Promise<void> {
    if (events.length) await io.recordCronJobEvents({ cronJob: target(cj), events });
  }

  async function reconcile(): Promise<ReconcileResult> {
    const onlyScheduleChanged = scheduleChanged && !otherChange;
    scheduleChanged = false;
    otherChange = false;

    let fresh = false;
    if (needObserve || !cronJob || gone) {
      const seen = await io.observeCronJob(key);
      if (!seen.cronJob) return { finished: true };
      await id.handOverIfNew(seen.cronJob.uid);
      cronJob = seen.cronJob;
      jobs.clear();
      for (const j of seen.jobs) jobs.set(j.uid, j);
      needObserve = false;
      gone = false;
      fresh = true;
    }
    id.learn(cronJob.uid);
    const now = Date.now();

    if (onlyScheduleChanged && !fresh) {
      const r = onScheduleChange(cronJob, now);
      await record(cronJob, r.events);
      const pending = wakeAt !== undefined ? Math.max(0, wakeAt - now) : undefined;
      const soonest = [r.requeueAfterMs, pending].filter((x): x is number => x !== undefined);
      return settle(soonest.length ? { requeueAfterMs: Math.min(...soonest) } : {});
    }

    // An unfinished Job the status does not list: upstream looks at a fresh copy of the CronJob
    // before calling it unexpected (its own status write may not have reached the watch yet).
    if (!fresh && unexpectedJobs({ ...cronJob, status: restoreUnconfirmed(cronJob.status, unconfirmed) }, children(cronJob)).length) {
      const latest = await io.readCronJob(key);
      if (!latest) return { finished: true };
      if (latest.uid !== cronJob.uid) {
        needObserve = true;
        return { requeueAfterMs: 0 };
      }
      if (!newerVersion(cronJob.resourceVersion, latest.resourceVersion)) cronJob = latest;
    }

    let cj: CronJobView = cronJob;
    let status: CronJobStatusView = restoreUnconfirmed(cj.status, unconfirmed);
    const events: CronJobEventRecord[] = [];
    let failed = false;

    // 1. history limits (upstream's cleanupFinishedJobs runs first, whatever the state)
    const doomed = planHistoryCleanup(cj, children(cj));
    if (doomed.length) {
      const r = await io.deleteJobs({
        cronJob: target(cj),
        jobs: doomed.map((j) => ({ name: j.name, uid: j.uid })),
        reason: `finished jobs beyond the history limits (successful ${cj.successfulJobsHistoryLimit ?? 'unlimited'}, failed ${cj.failedJobsHistoryLimit ?? 'unlimited'})`,
      });
      status = withoutActive(status, [...r.deleted, ...r.gone]);
      // deleted Jobs still count below (lastSuccessfulTime), as upstream's sync still sees them
    }

    // 2. the Jobs it controls
    const kids = children(cj);
    const seen = reconcileChildren({ ...cj, status }, kids);
    status = seen.status;
    events.push(...seen.events);
    if (seen.unseenActive.length) {
      const r = await io.findJobs({ namespace: cj.namespace, names: seen.unseenActive.map((a) => a.name) });
      const missing = seen.unseenActive.filter((a) => !r.found.includes(a.name));
      const dropped = dropMissing(status, missing);
      status = dropped.status;
      events.push(...dropped.events);
    }
    for (const d of doomed) jobs.delete(d.uid);

    // 3. the schedule
    const decision = decideSchedule({ ...cj, status }, now);
    events.push(...decision.events);
    let requeue = decision.kind === 'wait' ? decision.requeueAfterMs : undefined;
    if (decision.kind === 'start') {
      if (decision.replace.length) {
        const r = await io.deleteJobs({ cronJob: target(cj), jobs: decision.replace.map((a) => ({ name: a.name, uid: a.uid })), reason: `concurrency policy Replace: ${decision.reason}` });
        status = withoutActive(status, [...r.deleted, ...r.gone]);
        for (const u of [...r.deleted, ...r.gone]) jobs.delete(u);
        failed = r.failed.length > 0; // upstream does not start the new Job until the old ones are gone
      }
      if (!failed) {
        const c = await io.createJob({ cronJob: target(cj), job: decision.job, reason: decision.reason });
        if (c.outcome === 'created' || (c.outcome === 'exists' && c.ours && !inActiveList(status, c.job.uid))) {
          jobs.set(c.job.uid, c.job);
          const start: UnconfirmedStart = { job: jobRef(c.job), scheduledTime: formatTime(decision.scheduledTime) };
          unconfirmed = [...unconfirmed.filter((u) => u.job.uid !== c.job.uid), start];
          status = { ...status, active: [...status.active, start.job], lastScheduleTime: start.scheduledTime };
          requeue = decision.requeueAfterStartMs;
        } else if (c.outcome === 'exists') {
          // someone else's Job under our name, or ours already listed: upstream leaves it there
          requeue = undefined;
        } else {
          failed = true;
        }
      }
    }
    await record(cj, events);

    // 4. one status write for everything above
    if (!statusEqual(status, cj.status)) {
      const r = await io.updateCronJobStatus({ cronJob: target(cj), status });
      if (r.updated) {
        cj = { ...cj, resourceVersion: r.resourceVersion, status };
        cronJob = cj;
      } else if (r.reason === 'NotFound') {
        return { finished: true };
      } else {
        needObserve = true;
        return settle({ requeueAfterMs: 0 });
      }
    }
    // what was restored or started is written now (or already was): nothing left to remember
    unconfirmed = [];
    if (failed) return settle({ failed: true });
    return settle(requeue !== undefined ? { requeueAfterMs: requeue } : {});
  }

  await runObjectLoop<CronJobEvent>({
    controller: 'cronjob',
    tuning,
    reread() {
      // --shadow: the Jobs it created or deleted, and its status, were dry runs
      needObserve = true;
    },
    apply(e) {
      if (e.relist) {
        needObserve = true;
        otherChange = true;
      }
      if (e.cronJobDeletedUid && e.cronJobDeletedUid === (cronJob?.uid ?? id.uid)) {
        gone = true;
        otherChange = true;
      }
      if (e.cronJob) {
        if (id.isNew(e.cronJob.uid)) {
          needObserve = true; // the reconcile will see the new UID and hand over to a new run
          otherChange = true;
        } else if (!cronJob || !newerVersion(cronJob.resourceVersion, e.cronJob.resourceVersion)) {
          if (cronJob && (cronJob.schedule !== e.cronJob.schedule || cronJob.timeZone !== e.cronJob.timeZone)) scheduleChanged = true;
          else if (cronJob?.resourceVersion !== e.cronJob.resourceVersion) otherChange = true;
          cronJob = e.cronJob;
        }
      }
      for (const j of e.jobs ?? []) {
        const known = jobs.get(j.uid);
        if (known && newerVersion(known.resourceVersion, j.resourceVersion)) continue;
        jobs.set(j.uid, j);
        otherChange = true;
      }
      for (const u of e.jobsDeleted ?? []) {
        jobs.delete(u);
        otherChange = true;
      }
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid, unconfirmed } satisfies CronJobWorkflowInput],
    describe: () => ({
      uid: cronJob?.uid ?? id.uid,
      schedule: cronJob?.schedule,
      timeZone: cronJob?.timeZone,
      suspended: cronJob?.suspend,
      concurrencyPolicy: cronJob?.concurrencyPolicy,
      nextScheduledRunAt: wakeAt !== undefined ? new Date(wakeAt).toISOString() : undefined,
      active: cronJob?.status.active?.map((a) => a.name),
      lastScheduleTime: cronJob?.status.lastScheduleTime,
      jobsKnown: jobs.size,
    }),
  });
}
