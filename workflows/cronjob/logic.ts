/**
 * The CronJob controller's decisions, pure and deterministic: upstream's syncCronJob and
 * cleanupFinishedJobs taken apart into steps the workflow runs between its reads and writes.
 * Times are epoch milliseconds; `now` is always passed in.
 */

import { CronSchedule, formatRfc3339, nextAfter, parseSchedule, timeZoneError } from '../common/cron';
import {
  SCHEDULED_TIMESTAMP_ANNOTATION,
  type ChildJob,
  type CronJobEventRecord,
  type CronJobStatusView,
  type CronJobView,
  type JobManifest,
  type JobRef,
  type UnconfirmedStart,
} from './types';

/** Upstream wakes this long after a scheduled time, so a clock a little behind still sees it as due. */
export const NEXT_SCHEDULE_DELTA_MS = 100;

/** More missed start times than this earn a TooManyMissedTimes warning (upstream's threshold). */
export const MANY_MISSED_THRESHOLD = 100;

export type MissedSchedules = 'none' | 'few' | 'many';

export function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** metav1.Time on the wire: RFC 3339 in UTC, whole seconds. */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Go's time.RFC1123Z of a UTC time, as in MissSchedule messages: "Thu, 19 May 2016 10:00:00 +0000". */
export function formatRfc1123z(ms: number): string {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

const quote = (s: string) => JSON.stringify(s);
const warning = (reason: string, message: string): CronJobEventRecord => ({ type: 'Warning', reason, message });
const normal = (reason: string, message: string): CronJobEventRecord => ({ type: 'Normal', reason, message });

// ---------------------------------------------------------------------------------------------
// schedule arithmetic (upstream utils.go)

export interface MostRecent {
  /** the time the search started from: last schedule, creation, or the starting deadline */
  earliest: number;
  /** the latest scheduled time not after now, if any since `earliest` */
  mostRecent?: number;
  missed: MissedSchedules;
  /** a schedule that parses but never fires twice (e.g. February 31st) */
  error?: string;
}

/**
 * The most recent scheduled time not after `now`, counting roughly how many were missed since the
 * last schedule (or creation). Like upstream it estimates the count from the gap between the next
 * two activations instead of walking every missed one, so a CronJob stopped for years costs a few
 * steps, not millions.
 */
export function mostRecentScheduleTime(cj: CronJobView, now: number, schedule: CronSchedule, includeStartingDeadline: boolean): MostRecent {
  let earliest = parseTime(cj.status.lastScheduleTime) ?? parseTime(cj.creationTimestamp) ?? 0;
  if (includeStartingDeadline && cj.startingDeadlineSeconds !== undefined) {
    const deadline = now - cj.startingDeadlineSeconds * 1000;
    if (deadline > earliest) earliest = deadline;
  }
  const t1 = nextAfter(schedule, earliest);
  const t2 = t1 === undefined ? undefined : nextAfter(schedule, t1);
  if (t1 !== undefined && now < t1) return { earliest, missed: 'none' };
  if (t1 !== undefined && t2 !== undefined && now < t2) return { earliest, mostRecent: t1, missed: 'none' };

  const between = t1 === undefined || t2 === undefined ? 0 : Math.round((t2 - t1) / 1000);
  if (t1 === undefined || between < 1) {
    return { earliest, missed: 'none', error: 'time difference between two schedules is less than 1 second' };
  }
  const elapsed = Math.trunc((now - t1) / 1000);
  const missedCount = Math.trunc(elapsed / between) + 1;
  // one interval before the estimate, so irregular schedules (weekdays only, ...) still land right
  const from = t1 + (missedCount - 2) * between * 1000;
  let mostRecent: number | undefined;
  for (let t = nextAfter(schedule, from); t !== undefined && t <= now; t = nextAfter(schedule, t)) mostRecent = t;
  const missed: MissedSchedules = missedCount > MANY_MISSED_THRESHOLD ? 'many' : missedCount > 0 ? 'few' : 'none';
  return mostRecent === undefined ? { earliest, missed } : { earliest, mostRecent, missed };
}

/**
 * How long until the next scheduled time, plus upstream's 100ms slack; undefined when the schedule
 * never fires again (upstream's duration would be meaningless then).
 */
export function nextScheduleTimeDuration(cj: CronJobView, now: number, schedule: CronSchedule): number | undefined {
  const r = mostRecentScheduleTime(cj, now, schedule, false);
  let from: number;
  if (r.error) from = now;
  else if (r.mostRecent !== undefined) from = r.mostRecent;
  else from = r.missed === 'none' ? r.earliest : now;
  const next = nextAfter(schedule, from);
  return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - now;
}

/** The unmet scheduled time to act on now (within the starting deadline), with upstream's warning when many were missed. */
export function nextScheduleTime(cj: CronJobView, now: number, schedule: CronSchedule): { time?: number; error?: string; events: CronJobEventRecord[] } {
  const r = mostRecentScheduleTime(cj, now, schedule, true);
  if (r.mostRecent === undefined || r.mostRecent > now) return { events: [], ...(r.error ? { error: r.error } : {}) };
  const events = r.missed === 'many'
    ? [warning('TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew')]
    : [];
  return { time: r.mostRecent, events, ...(r.error ? { error: r.error } : {}) };
}

/** Upstream's getJobName: the CronJob's name and the scheduled time in minutes since the epoch. */
export function jobName(cronJobName: string, scheduledTime: number): string {
  return `${cronJobName}-${Math.trunc(Math.trunc(scheduledTime / 1000) / 60)}`;
}

/**
 * The schedule string upstream hands its parser, and the UnsupportedSchedule warning it records
 * when the schedule carries its own TZ= / CRON_TZ= (then spec.timeZone does not apply to it).
 */
export function effectiveSchedule(cj: CronJobView): { spec: string; timeZone?: string; events: CronJobEventRecord[] } {
  if (cj.schedule.includes('TZ')) {
    return {
      spec: cj.schedule,
      events: [warning('UnsupportedSchedule', `CRON_TZ or TZ used in schedule ${quote(cj.schedule)} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`)],
    };
  }
  if (cj.timeZone !== undefined && !timeZoneError(cj.timeZone)) return { spec: cj.schedule, timeZone: cj.timeZone, events: [] };
  return { spec: cj.schedule, events: [] };
}

function tryParse(spec: string, timeZone: string | undefined): { schedule?: CronSchedule; error?: string } {
  try {
    return { schedule: parseSchedule(spec, timeZone) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** The Job upstream's getJobFromTemplate2 builds for a scheduled time. */
export function jobFromTemplate(cj: CronJobView, scheduledTime: number): JobManifest {
  const meta = cj.jobTemplate.metadata ?? {};
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cj.name, scheduledTime),
      namespace: cj.namespace,
      labels: { ...(meta.labels ?? {}) },
      annotations: { ...(meta.annotations ?? {}), [SCHEDULED_TIMESTAMP_ANNOTATION]: formatRfc3339(scheduledTime, cj.timeZone) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.name, uid: cj.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: JSON.parse(JSON.stringify(cj.jobTemplate.spec)) as Record<string, unknown>,
  };
}

/** status.active's entry for a Job (upstream's ObjectReference of the created Job). */
export function jobRef(j: Pick<ChildJob, 'namespace' | 'name' | 'uid' | 'resourceVersion'>): JobRef {
  return { apiVersion: 'batch/v1', kind: 'Job', namespace: j.namespace, name: j.name, uid: j.uid, resourceVersion: j.resourceVersion };
}

// ---------------------------------------------------------------------------------------------
// the Jobs it controls

export function inActiveList(status: CronJobStatusView, uid: string): boolean {
  return status.active.some((r) => r.uid === uid);
}

export function withoutActive(status: CronJobStatusView, uids: Iterable<string>): CronJobStatusView {
  const gone = new Set(uids);
  return { ...status, active: status.active.filter((r) => !gone.has(r.uid)) };
}

/** Which Jobs count as the CronJob's: upstream lists by controller reference name, not UID. */
export function isChildOf(cj: Pick<CronJobView, 'namespace' | 'name'>, j: ChildJob): boolean {
  return j.namespace === cj.namespace && j.controllerRef?.name === cj.name;
}

/** Upstream's byJobStartTime: started ones first, oldest first, then the never-started; ties by name. */
export function byJobStartTime(a: ChildJob, b: ChildJob): number {
  const ta = parseTime(a.startTime);
  const tb = parseTime(b.startTime);
  if (ta === undefined && tb !== undefined) return 1;
  if (ta !== undefined && tb === undefined) return -1;
  if (ta === tb) return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  return (ta as number) - (tb as number);
}

/**
 * Finished Jobs beyond the history limits, oldest-started first: the successful ones past
 * successfulJobsHistoryLimit, then the failed ones past failedJobsHistoryLimit. A limit that is unset keeps all.
 */
export function planHistoryCleanup(cj: CronJobView, jobs: ChildJob[]): ChildJob[] {
  const out: ChildJob[] = [];
  const trim = (kind: 'Complete' | 'Failed', limit: number | undefined) => {
    if (limit === undefined) return;
    const done = jobs.filter((j) => j.finished === kind).sort(byJobStartTime);
    out.push(...done.slice(0, Math.max(0, done.length - limit)));
  };
  trim('Complete', cj.successfulJobsHistoryLimit);
  trim('Failed', cj.failedJobsHistoryLimit);
  return out;
}

/** Unfinished Jobs missing from status.active: upstream re-reads the CronJob before calling them unexpected. */
export function unexpectedJobs(cj: CronJobView, jobs: ChildJob[]): ChildJob[] {
  return jobs.filter((j) => !j.finished && !inActiveList(cj.status, j.uid));
}

/**
 * Put back the Jobs this workflow created whose status write it has not seen land, as upstream
 * does when its create finds its own Job already there: in status.active, and lastScheduleTime moved up.
 */
export function restoreUnconfirmed(status: CronJobStatusView, unconfirmed: UnconfirmedStart[]): CronJobStatusView {
  let out = status;
  for (const u of unconfirmed) {
    if (inActiveList(out, u.job.uid)) continue;
    const last = parseTime(out.lastScheduleTime);
    const at = parseTime(u.scheduledTime) ?? 0;
    out = { ...out, active: [...out.active, u.job], lastScheduleTime: last !== undefined && last >= at ? out.lastScheduleTime : u.scheduledTime };
  }
  return out;
}

export interface ChildrenOutcome {
  status: CronJobStatusView;
  events: CronJobEventRecord[];
  /** entries of status.active with no Job among the children: upstream asks the API before dropping them */
  unseenActive: JobRef[];
}

/**
 * The first half of syncCronJob: finished Jobs leave status.active (SawCompletedJob), successful ones
 * move lastSuccessfulTime up, unfinished ones the status does not list are reported (UnexpectedJob).
 */
export function reconcileChildren(cj: CronJobView, jobs: ChildJob[]): ChildrenOutcome {
  let status: CronJobStatusView = { ...cj.status, active: [...cj.status.active] };
  const events: CronJobEventRecord[] = [];
  for (const j of jobs) {
    const listed = inActiveList(status, j.uid);
    if (!j.finished) {
      if (!listed) events.push(warning('UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.name}`));
      continue;
    }
    if (listed) {
      status = withoutActive(status, [j.uid]);
      events.push(normal('SawCompletedJob', `Saw completed job: ${j.name}, condition: ${j.finished}`));
    }
    if (j.finished === 'Complete') {
      // a successful Job counts even when it is no longer listed as active
      const done = parseTime(j.completionTime);
      const last = parseTime(status.lastSuccessfulTime);
      if (done !== undefined && (last === undefined || done > last)) status = { ...status, lastSuccessfulTime: j.completionTime };
    }
  }
  const uids = new Set(jobs.map((j) => j.uid));
  return { status, events, unseenActive: status.active.filter((r) => !uids.has(r.uid)) };
}

/** Active entries the API says are gone leave the list, each with a MissingJob event. */
export function dropMissing(status: CronJobStatusView, missing: JobRef[]): { status: CronJobStatusView; events: CronJobEventRecord[] } {
  return {
    status: withoutActive(status, missing.map((r) => r.uid)),
    events: missing.map((r) => normal('MissingJob', `Active job went missing: ${r.name}`)),
  };
}

// ---------------------------------------------------------------------------------------------
// the scheduling decision

export type ScheduleDecision =
  | {
      kind: 'wait';
      events: CronJobEventRecord[];
      /** undefined: nothing to wait for (suspended, bad schedule, being deleted); only an update wakes it */
      requeueAfterMs?: number;
      reason: string;
    }
  | {
      kind: 'start';
      events: CronJobEventRecord[];
      scheduledTime: number;
      job: JobManifest;
      /** Replace: the running Jobs to delete first */
      replace: JobRef[];
      /** the wait after a successful start (computed with lastScheduleTime moved to scheduledTime) */
      requeueAfterStartMs?: number;
      reason: string;
    };

/** The second half of syncCronJob, on a status already cleaned of finished and missing Jobs. */
export function decideSchedule(cj: CronJobView, now: number): ScheduleDecision {
  if (cj.deletionTimestamp) return { kind: 'wait', events: [], reason: 'the CronJob is being deleted' };
  if (cj.timeZone !== undefined) {
    const problem = timeZoneError(cj.timeZone);
    if (problem) {
      return { kind: 'wait', events: [warning('UnknownTimeZone', `invalid timeZone: ${quote(cj.timeZone)}: ${problem}`)], reason: 'unknown time zone' };
    }
  }
  if (cj.suspend) return { kind: 'wait', events: [], reason: 'suspended' };

  const eff = effectiveSchedule(cj);
  const events = [...eff.events];
  const parsed = tryParse(eff.spec, eff.timeZone);
  if (!parsed.schedule) {
    events.push(warning('UnparseableSchedule', `unparseable schedule: ${quote(cj.schedule)} : ${parsed.error}`));
    return { kind: 'wait', events, reason: 'unparseable schedule' };
  }
  const sched = parsed.schedule;
  const next = nextScheduleTime(cj, now, sched);
  events.push(...next.events);
  const wait = (reason: string, extra: CronJobEventRecord[] = []): ScheduleDecision => {
    const d = nextScheduleTimeDuration(cj, now, sched);
    return { kind: 'wait', events: [...events, ...extra], ...(d !== undefined ? { requeueAfterMs: Math.max(0, d) } : {}), reason };
  };
  if (next.error) {
    events.push(warning('InvalidSchedule', `invalid schedule: ${cj.schedule} : ${next.error}`));
    return { kind: 'wait', events, reason: 'invalid schedule' };
  }
  if (next.time === undefined) return wait('no unmet start time');
  const scheduled = next.time;

  if (cj.startingDeadlineSeconds !== undefined && scheduled + cj.startingDeadlineSeconds * 1000 < now) {
    return wait('missed the starting deadline', [warning('MissSchedule', `Missed scheduled time to start a job: ${formatRfc1123z(scheduled)}`)]);
  }
  const name = jobName(cj.name, scheduled);
  if (cj.status.active.some((r) => r.name === name && r.namespace === cj.namespace) || parseTime(cj.status.lastScheduleTime) === scheduled) {
    return wait('the scheduled time was already processed');
  }
  if (cj.concurrencyPolicy === 'Forbid' && cj.status.active.length > 0) {
    return wait('a prior run is active and concurrency is forbidden',
      [normal('JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid')]);
  }
  const after: CronJobView = { ...cj, status: { ...cj.status, lastScheduleTime: formatTime(scheduled) } };
  const d = nextScheduleTimeDuration(after, now, sched);
  return {
    kind: 'start',
    events,
    scheduledTime: scheduled,
    job: jobFromTemplate(cj, scheduled),
    replace: cj.concurrencyPolicy === 'Replace' ? [...cj.status.active] : [],
    ...(d !== undefined ? { requeueAfterStartMs: Math.max(0, d) } : {}),
    reason: `scheduled for ${formatRfc3339(scheduled, cj.timeZone)}`,
  };
}

/**
 * Upstream does not sync a CronJob whose schedule (or time zone) just changed: it only moves its
 * wake-up to the new schedule's next time, or warns and leaves it be when the new one does not parse.
 */
export function onScheduleChange(cj: CronJobView, now: number): { requeueAfterMs?: number; events: CronJobEventRecord[] } {
  const eff = effectiveSchedule(cj);
  const parsed = tryParse(eff.spec, eff.timeZone);
  if (!parsed.schedule) return { events: [warning('UnParseableCronJobSchedule', `unparseable schedule for cronjob: ${cj.schedule}`)] };
  const d = nextScheduleTimeDuration(cj, now, parsed.schedule);
  return { events: [], ...(d !== undefined ? { requeueAfterMs: Math.max(0, d) } : {}) };
}

/** Whether two statuses would read the same to a user (versions of the active refs aside). */
export function statusEqual(a: CronJobStatusView, b: CronJobStatusView): boolean {
  const key = (s: CronJobStatusView) => JSON.stringify({
    active: s.active.map((r) => `${r.namespace}/${r.name}/${r.uid}`),
    last: parseTime(s.lastScheduleTime) ?? null,
    ok: parseTime(s.lastSuccessfulTime) ?? null,
  });
  return key(a) === key(b);
}
