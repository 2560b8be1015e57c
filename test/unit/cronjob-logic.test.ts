import { parseSchedule } from '../../workflows/common/cron';
import {
  NEXT_SCHEDULE_DELTA_MS,
  byJobStartTime,
  decideSchedule,
  formatRfc1123z,
  jobFromTemplate,
  jobName,
  jobRef,
  mostRecentScheduleTime,
  nextScheduleTime,
  nextScheduleTimeDuration,
  onScheduleChange,
  planHistoryCleanup,
  reconcileChildren,
  restoreUnconfirmed,
  statusEqual,
  unexpectedJobs,
  withoutActive,
} from '../../workflows/cronjob/logic';
import { SCHEDULED_TIMESTAMP_ANNOTATION, mergeCronJobEvents, type ChildJob, type ConcurrencyPolicy, type CronJobEventRecord, type CronJobView } from '../../workflows/cronjob/types';

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const at = (iso: string) => Date.parse(iso);
const rfc = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const TOP = at('2016-05-19T10:00:00Z');
const justBeforeTheHour = at('2016-05-19T09:59:00Z');
const justAfterTheHour = at('2016-05-19T10:01:00Z');
const justAfterThePriorHour = at('2016-05-19T09:01:00Z');
const justBeforeThePriorHour = at('2016-05-19T08:59:00Z');
const justBeforeTheNextHour = at('2016-05-19T10:59:00Z');
const weekAfterTheHour = at('2016-05-26T10:00:00Z');

const shortDead = 10;
const mediumDead = 2 * 60 * 60;
const longDead = 1_000_000;
const onTheHour = '0 * * * ?';
const everyHour = '@every 1h';

function cronJob(over: Partial<CronJobView> = {}): CronJobView {
  return {
    namespace: 'snazzycats',
    name: 'mycronjob',
    uid: '1a2b3c',
    resourceVersion: '1',
    creationTimestamp: rfc(justBeforeTheHour),
    schedule: '* * * * ?',
    concurrencyPolicy: 'Allow',
    suspend: false,
    jobTemplate: {
      metadata: { labels: { a: 'b' }, annotations: { x: 'y' } },
      spec: { parallelism: 1, completions: 1, template: { metadata: { labels: { foo: 'bar' } }, spec: { containers: [{ image: 'foo/bar' }] } } },
    },
    status: { active: [] },
    ...over,
  };
}

function child(name: string, over: Partial<ChildJob> = {}): ChildJob {
  return {
    namespace: 'snazzycats', name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: rfc(TOP),
    controllerRef: { apiVersion: 'batch/v1', kind: 'CronJob', name: 'mycronjob', uid: '1a2b3c' },
    ...over,
  };
}

// ---------------------------------------------------------------------------------------------

describe('mostRecentScheduleTime', () => {
  const cases: Array<{ name: string; cj: CronJobView; includeDeadline?: boolean; now: number; earliest?: number; recent?: number; missed?: string; error?: boolean }> = [
    { name: 'now before next schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '0 * * * *' }), now: TOP + 30 * SEC, earliest: TOP, missed: 'none' },
    { name: 'now just after next schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '0 * * * *' }), now: TOP + 61 * MIN, earliest: TOP, recent: TOP + HOUR, missed: 'none' },
    { name: 'missed 5 schedules', cj: cronJob({ creationTimestamp: rfc(TOP + 10 * SEC), schedule: '0 * * * *' }), now: TOP + 301 * MIN, earliest: TOP + 10 * SEC, recent: TOP + 300 * MIN, missed: 'few' },
    { name: 'complex schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 6-16/4 * * 1-5', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + DAY + 31 * MIN, earliest: TOP + 30 * MIN, recent: TOP + DAY + 30 * MIN, missed: 'few' },
    { name: 'another complex schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 10,11,12 * * 1-5', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + 30 * HOUR + 30 * MIN, earliest: TOP + 30 * MIN, missed: 'few' },
    { name: 'complex schedule with longer diff', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 6-16/4 * * 1-5', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + 96 * HOUR + 31 * MIN, earliest: TOP + 30 * MIN, recent: TOP + 96 * HOUR + 30 * MIN, missed: 'few' },
    { name: 'complex schedule with shorter diff', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 6-16/4 * * 1-5' }), now: TOP + DAY + 31 * MIN, earliest: TOP, recent: TOP + DAY + 30 * MIN, missed: 'few' },
    { name: '@every schedule', cj: cronJob({ creationTimestamp: rfc(TOP - 59 * MIN), schedule: '@every 1h', startingDeadlineSeconds: 10, status: { active: [], lastScheduleTime: rfc(TOP + MIN) } }), now: TOP + 7 * DAY, earliest: TOP + MIN, recent: TOP + 6 * DAY + 23 * HOUR + MIN, missed: 'many' },
    { name: 'rogue cronjob', cj: cronJob({ creationTimestamp: rfc(TOP + 10 * SEC), schedule: '59 23 31 2 *' }), now: TOP + HOUR, error: true },
    { name: 'earliest is creation and last schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '0 * * * *', status: { active: [], lastScheduleTime: rfc(TOP) } }), now: TOP + 30 * SEC, earliest: TOP, missed: 'none' },
    { name: 'earliest is last schedule', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '*/5 * * * *', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + 31 * MIN, earliest: TOP + 30 * MIN, missed: 'none' },
    { name: 'earliest is last schedule (within the deadline)', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '*/5 * * * *', startingDeadlineSeconds: 60, status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + 31 * MIN, earliest: TOP + 30 * MIN, missed: 'none' },
    { name: 'earliest is the deadline (outside it)', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '*/5 * * * *', startingDeadlineSeconds: 60, status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), includeDeadline: true, now: TOP + 32 * MIN, earliest: TOP + 31 * MIN, missed: 'none' },
  ];
  it.each(cases)('$name', (c) => {
    const r = mostRecentScheduleTime(c.cj, c.now, parseSchedule(c.cj.schedule), c.includeDeadline ?? false);
    if (c.error) {
      expect(r.error).toBe('time difference between two schedules is less than 1 second');
      expect(r.mostRecent).toBeUndefined();
      return;
    }
    expect(r.error).toBeUndefined();
    expect(r.earliest).toBe(c.earliest);
    expect(r.mostRecent).toBe(c.recent);
    expect(r.missed).toBe(c.missed);
  });
});

describe('nextScheduleTimeDuration', () => {
  it.each([
    { name: 'complex schedule skipping weekend', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 6-16/4 * * 1-5', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + DAY + 31 * MIN, want: 3 * HOUR + 59 * MIN },
    { name: 'another complex schedule skipping weekend', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '30 10,11,12 * * 1-5', status: { active: [], lastScheduleTime: rfc(TOP + 30 * MIN) } }), now: TOP + 30 * HOUR + 30 * MIN, want: 66 * HOUR },
    { name: 'once a week, missed two runs', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '0 12 * * 4', status: { active: [], lastScheduleTime: rfc(TOP + 2 * HOUR) } }), now: TOP + 19 * DAY + HOUR + 30 * MIN, want: 48 * HOUR + 30 * MIN },
    { name: 'no previous run', cj: cronJob({ creationTimestamp: rfc(TOP), schedule: '0 12 * * 5' }), now: TOP + 6 * HOUR, want: 20 * HOUR },
  ])('$name', ({ cj, now, want }) => {
    expect(nextScheduleTimeDuration(cj, now, parseSchedule(cj.schedule))).toBe(want + NEXT_SCHEDULE_DELTA_MS);
  });
});

describe('nextScheduleTime', () => {
  const sched = parseSchedule('0 * * * ?');
  const T1 = TOP;
  const T2 = TOP + HOUR;
  it('has no start time before the first schedule', () => {
    expect(nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 - 10 * MIN) }), T1 - 7 * MIN, sched).time).toBeUndefined();
  });
  it('finds the first one just after it', () => {
    expect(nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 - 10 * MIN) }), T1 + 2 * SEC, sched).time).toBe(T1);
  });
  it('has nothing more once it was scheduled', () => {
    expect(nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 - 10 * MIN), status: { active: [], lastScheduleTime: rfc(T1) } }), T1 + 2 * MIN, sched).time).toBeUndefined();
  });
  it('finds the next one after the last schedule', () => {
    expect(nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 - 10 * MIN), status: { active: [], lastScheduleTime: rfc(T1) } }), T2 + 5 * MIN, sched).time).toBe(T2);
    expect(nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 - 2 * HOUR), status: { active: [], lastScheduleTime: rfc(T1 - HOUR) } }), T2 + 5 * MIN, sched).time).toBe(T2);
  });
  it('warns when too many were missed, unless the deadline narrows the window', () => {
    const cj = cronJob({ creationTimestamp: rfc(T1 - 2 * HOUR), status: { active: [], lastScheduleTime: rfc(T1 - HOUR) } });
    const many = nextScheduleTime(cj, T2 + 10 * DAY, sched);
    expect(many.time).toBe(T2 + 10 * DAY);
    expect(many.events).toEqual([{ type: 'Warning', reason: 'TooManyMissedTimes', message: 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew' }]);
    const narrowed = nextScheduleTime({ ...cj, startingDeadlineSeconds: 2 * 3600 }, T2 + 10 * DAY, sched);
    expect(narrowed.time).toBe(T2 + 10 * DAY);
    expect(narrowed.events).toEqual([]);
  });
  it('reports a schedule that never fires', () => {
    const r = nextScheduleTime(cronJob({ creationTimestamp: rfc(T1 + 10 * SEC) }), T1 + HOUR, parseSchedule('59 23 31 2 *'));
    expect(r.time).toBeUndefined();
    expect(r.error).toBeDefined();
  });
});

describe('jobs from the template', () => {
  it('names a Job by its scheduled minute since the epoch', () => {
    expect(jobName('mycronjob', TOP)).toBe(`mycronjob-${TOP / 60_000}`);
    expect(jobName('mycronjob', TOP + 59 * SEC)).toBe(jobName('mycronjob', TOP));
  });

  it.each([
    ['UTC', '2016-05-19T10:00:00Z'],
    [undefined, '2016-05-19T10:00:00Z'],
    ['Europe/Rome', '2016-05-19T12:00:00+02:00'],
  ])('copies labels and annotations and stamps the scheduled time (zone %s)', (timeZone, stamp) => {
    const job = jobFromTemplate(cronJob({ ...(timeZone ? { timeZone } : {}) }), TOP);
    expect(job.metadata.name).toBe(`mycronjob-${TOP / 60_000}`);
    expect(job.metadata.labels).toEqual({ a: 'b' });
    expect(job.metadata.annotations).toEqual({ x: 'y', [SCHEDULED_TIMESTAMP_ANNOTATION]: stamp });
    expect(job.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'mycronjob', uid: '1a2b3c', controller: true, blockOwnerDeletion: true }]);
    expect(job.spec).toEqual(cronJob().jobTemplate.spec);
  });
});

describe('byJobStartTime', () => {
  const now = '2018-01-01T02:03:04Z';
  const later = '2019-01-01T02:03:04Z';
  const names = (js: ChildJob[]) => js.map((j) => `${j.name}:${j.startTime ?? 'nil'}`);
  it.each([
    ['both nil', [child('b'), child('a')], ['a:nil', 'b:nil']],
    ['first nil', [child('a'), child('b', { startTime: now })], [`b:${now}`, 'a:nil']],
    ['second nil', [child('a', { startTime: now }), child('b')], [`a:${now}`, 'b:nil']],
    ['equal', [child('b', { startTime: now }), child('a', { startTime: now })], [`a:${now}`, `b:${now}`]],
    ['different', [child('a', { startTime: later }), child('b', { startTime: now })], [`b:${now}`, `a:${later}`]],
  ])('%s', (_n, input, want) => {
    expect(names([...input].sort(byJobStartTime))).toEqual(want);
  });
});

describe('planHistoryCleanup', () => {
  const done = (name: string, kind: 'Complete' | 'Failed', start: number) => child(name, { finished: kind, startTime: rfc(start) });
  const jobs = [done('s1', 'Complete', TOP), done('s2', 'Complete', TOP + HOUR), done('s3', 'Complete', TOP + 2 * HOUR),
    done('f1', 'Failed', TOP), done('f2', 'Failed', TOP + HOUR), child('running', { startTime: rfc(TOP) })];
  it('keeps everything when no limit is set', () => {
    expect(planHistoryCleanup(cronJob(), jobs)).toEqual([]);
  });
  it('deletes the oldest beyond each limit, never a running one', () => {
    expect(planHistoryCleanup(cronJob({ successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }), jobs).map((j) => j.name)).toEqual(['s1', 's2', 'f1']);
    expect(planHistoryCleanup(cronJob({ successfulJobsHistoryLimit: 0 }), jobs).map((j) => j.name)).toEqual(['s1', 's2', 's3']);
    expect(planHistoryCleanup(cronJob({ failedJobsHistoryLimit: 5 }), jobs)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// syncCronJob, step by step as the workflow runs it (upstream's TestControllerV2SyncCronJob table)

interface SyncCase {
  policy?: ConcurrencyPolicy;
  suspend?: boolean;
  schedule: string;
  timeZone?: string;
  deadline?: number;
  ranPreviously?: boolean;
  stillActive?: boolean;
  cronjobCreationTime?: number;
  jobCreationTime?: number;
  lastScheduleTime?: number;
  now: number;
  /** the Job the API reports under the new name (upstream's AlreadyExists cases) */
  createAlreadyExists?: boolean;
  jobNotInLister?: boolean;
  jobPresentInActive?: boolean;
  // expectations
  create?: boolean;
  del?: boolean;
  completed?: boolean;
  active?: number;
  warnings?: number;
  requeue?: number;
  update?: boolean;
}

interface SyncResult {
  creates: number;
  deletes: number;
  events: CronJobEventRecord[];
  requeue?: number;
  activeCount: number;
  update: boolean;
  lastSuccessfulTime?: string;
}

function sync(c: SyncCase): SyncResult {
  const base = cronJob({
    concurrencyPolicy: c.policy ?? 'Allow',
    suspend: c.suspend ?? false,
    schedule: c.schedule,
    ...(c.timeZone ? { timeZone: c.timeZone } : {}),
    ...(c.deadline !== undefined ? { startingDeadlineSeconds: c.deadline } : {}),
  });
  // what a fresh read of the CronJob returns (upstream's fake: the object before the test's edits)
  let real = base;
  let cj = base;
  const jobs: ChildJob[] = [];
  let job: ChildJob | undefined;
  if (c.ranPreviously) {
    cj = { ...cj, creationTimestamp: rfc(c.cronjobCreationTime ?? justBeforeThePriorHour), status: { active: [], lastScheduleTime: rfc(c.lastScheduleTime ?? justAfterThePriorHour) } };
    const created = c.jobCreationTime ?? TOP;
    job = child(jobFromTemplate(cj, created).metadata.name, { uid: '1234', creationTimestamp: rfc(created) });
    if (c.jobPresentInActive ?? true) cj = { ...cj, status: { ...cj.status, active: [jobRef(job)] } };
    if (c.stillActive) real = { ...real, status: { active: [jobRef(job)] } };
    else job = { ...job, finished: 'Complete', completionTime: rfc(created + 10 * SEC) };
    if (!c.jobNotInLister) jobs.push(job);
  } else {
    cj = { ...cj, creationTimestamp: rfc(c.cronjobCreationTime ?? justBeforeTheHour) };
  }

  if (unexpectedJobs(cj, jobs).some((j) => real.status.active.some((a) => a.uid === j.uid))) cj = real;
  const before = cj.status;
  const events: CronJobEventRecord[] = [];
  const seen = reconcileChildren(cj, jobs);
  let status = seen.status;
  events.push(...seen.events);
  // the API still has every unseen active Job in these cases (upstream's fake GetJob finds it)

  const d = decideSchedule({ ...cj, status }, c.now);
  events.push(...d.events);
  let creates = 0;
  let deletes = 0;
  let requeue = d.kind === 'wait' ? d.requeueAfterMs : undefined;
  if (d.kind === 'start') {
    for (const r of d.replace) {
      deletes++;
      events.push({ type: 'Normal', reason: 'SuccessfulDelete', message: `Deleted job ${r.name}` });
    }
    status = withoutActive(status, d.replace.map((r) => r.uid));
    if (c.createAlreadyExists && job) {
      if (!status.active.some((a) => a.uid === job!.uid)) status = { ...status, active: [...status.active, jobRef(job)], lastScheduleTime: rfc(d.scheduledTime) };
      requeue = undefined;
    } else {
      creates++;
      events.push({ type: 'Normal', reason: 'SuccessfulCreate', message: `Created job ${d.job.metadata.name}` });
      status = { ...status, active: [...status.active, { namespace: cj.namespace, name: d.job.metadata.name, uid: 'new' }], lastScheduleTime: rfc(d.scheduledTime) };
      requeue = d.requeueAfterStartMs;
    }
  }
  return { creates, deletes, events, requeue, activeCount: status.active.length, update: !statusEqual(status, before), lastSuccessfulTime: status.lastSuccessfulTime };
}

const D = NEXT_SCHEDULE_DELTA_MS;
const syncCases: Record<string, SyncCase> = {
  'never ran, not valid schedule, A': { schedule: 'obvious error schedule', now: justBeforeTheHour, warnings: 1 },
  'never ran, not valid schedule, F': { policy: 'Forbid', schedule: 'obvious error schedule', now: justBeforeTheHour, warnings: 1 },
  'never ran, not valid time zone': { schedule: onTheHour, timeZone: 'bad timezone', now: justBeforeTheHour, warnings: 1 },
  'never ran, not time, A': { schedule: onTheHour, now: justBeforeTheHour, requeue: MIN + D },
  'never ran, not time, F': { policy: 'Forbid', schedule: onTheHour, now: justBeforeTheHour, requeue: MIN + D },
  'never ran, not time, R': { policy: 'Replace', schedule: onTheHour, now: justBeforeTheHour, requeue: MIN + D },
  'never ran, not time in zone': { schedule: onTheHour, timeZone: 'America/New_York', now: justBeforeTheHour, requeue: MIN + D },
  'never ran, is time, A': { schedule: onTheHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true },
  'never ran, is time, F': { policy: 'Forbid', schedule: onTheHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true },
  'never ran, is time, R': { policy: 'Replace', schedule: onTheHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true },
  'never ran, is time in zone': { schedule: onTheHour, timeZone: 'America/New_York', now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true },
  'never ran, is time in zone, but TZ is also set in schedule': { schedule: `TZ=UTC ${onTheHour}`, timeZone: 'America/New_York', now: justAfterTheHour, create: true, active: 1, warnings: 1, requeue: HOUR - MIN + D, update: true },
  'never ran, is time, suspended': { suspend: true, schedule: onTheHour, now: justAfterTheHour },
  'never ran, is time, past deadline': { schedule: onTheHour, deadline: shortDead, now: justAfterTheHour + (shortDead + 1) * MIN, requeue: HOUR - MIN - (shortDead + 1) * MIN + D },
  'never ran, is time, not past deadline': { schedule: onTheHour, deadline: longDead, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true },

  'prev ran but done, not time, A': { schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justBeforeTheHour, requeue: MIN + D, update: true, completed: true },
  'prev ran but done, not time, R': { policy: 'Replace', schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justBeforeTheHour, requeue: MIN + D, update: true, completed: true },
  'prev ran but done, is time, A': { schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true, completed: true },
  'prev ran but done, is time, create job failed, A': { schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, createAlreadyExists: true, update: true, completed: true },
  'prev ran but done, is time, job not in active status, create job failed, A': { schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, createAlreadyExists: true, jobPresentInActive: false, update: true },
  'prev ran but done, is time, F': { policy: 'Forbid', schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true, completed: true },
  'prev ran but done, is time, R': { policy: 'Replace', schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true, completed: true },
  'prev ran but done, is time, suspended': { suspend: true, schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, update: true, completed: true },
  'prev ran but done, is time, past deadline': { schedule: onTheHour, deadline: shortDead, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, requeue: HOUR - MIN + D, update: true, completed: true },
  'prev ran but done, is time, not past deadline': { schedule: onTheHour, deadline: longDead, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 1, requeue: HOUR - MIN + D, update: true, completed: true },

  'still active, not time, A': { schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justBeforeTheHour, active: 1, requeue: MIN + D },
  'still active, not time, F': { policy: 'Forbid', schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justBeforeTheHour, active: 1, requeue: MIN + D },
  'still active, is time, A': { schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 2, requeue: HOUR - MIN + D, update: true },
  'still active, is time, F': { policy: 'Forbid', schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, active: 1, requeue: HOUR - MIN + D },
  'still active, is time, R': { policy: 'Replace', schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, del: true, active: 1, requeue: HOUR - MIN + D, update: true },
  'still active, is time, suspended': { suspend: true, schedule: onTheHour, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, active: 1 },
  'still active, is time, past deadline': { schedule: onTheHour, deadline: shortDead, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, active: 1, requeue: HOUR - MIN + D },
  'still active, is time, not past deadline': { schedule: onTheHour, deadline: longDead, ranPreviously: true, stillActive: true, jobCreationTime: justAfterThePriorHour, now: justAfterTheHour, create: true, active: 2, requeue: HOUR - MIN + D, update: true },

  'prev ran but done, long overdue, not past deadline, A': { schedule: onTheHour, deadline: longDead, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour, create: true, active: 1, warnings: 1, requeue: HOUR + D, update: true, completed: true },
  'prev ran but done, long overdue, no deadline, F': { policy: 'Forbid', schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour, create: true, active: 1, warnings: 1, requeue: HOUR + D, update: true, completed: true },
  'prev ran but done, long overdue, past medium deadline, R': { policy: 'Replace', schedule: onTheHour, deadline: mediumDead, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour, create: true, active: 1, requeue: HOUR + D, update: true, completed: true },
  'prev ran but done, long overdue, past short deadline, A': { schedule: onTheHour, deadline: shortDead, ranPreviously: true, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour, create: true, active: 1, requeue: HOUR + D, update: true, completed: true },

  'this ran but done, time drifted back, F': { policy: 'Forbid', schedule: onTheHour, ranPreviously: true, jobCreationTime: justAfterTheHour, now: justBeforeTheHour, jobPresentInActive: false, requeue: MIN + D, update: true },
  'this started but went missing, not past deadline, A': { schedule: onTheHour, deadline: longDead, ranPreviously: true, stillActive: true, jobCreationTime: TOP + 100, now: justAfterTheHour + 100, active: 1, requeue: HOUR - MIN - 100 + D, jobNotInLister: true },
  'this started but went missing, not past deadline, R': { policy: 'Replace', schedule: onTheHour, deadline: longDead, ranPreviously: true, stillActive: true, jobCreationTime: TOP + 100, now: justAfterTheHour + 100, active: 1, requeue: HOUR - MIN - 100 + D, jobNotInLister: true },
  'this started but is not in the active list, not past deadline, F': { policy: 'Forbid', schedule: onTheHour, deadline: longDead, ranPreviously: true, stillActive: true, jobCreationTime: TOP + 100, now: justAfterTheHour + 100, jobPresentInActive: false, active: 1, requeue: HOUR - MIN - 100 + D },

  'with @every schedule, never ran, not time': { schedule: everyHour, cronjobCreationTime: justBeforeTheHour, now: TOP, requeue: HOUR - MIN + D },
  'with @every schedule, never ran, is time': { schedule: everyHour, cronjobCreationTime: justBeforeThePriorHour, now: justBeforeTheHour, create: true, active: 1, requeue: HOUR + D, update: true },
  'with @every schedule, never ran, is time, past deadline': { schedule: everyHour, deadline: shortDead, cronjobCreationTime: justBeforeThePriorHour, now: justBeforeTheHour + (shortDead + 1) * SEC, requeue: HOUR - (shortDead + 1) * SEC + D },
  'with @every schedule, never ran, is time, not past deadline': { schedule: everyHour, deadline: longDead, cronjobCreationTime: justBeforeThePriorHour, now: justBeforeTheHour + (shortDead - 1) * SEC, create: true, active: 1, requeue: HOUR - (shortDead - 1) * SEC + D, update: true },
  'with @every schedule, prev ran but done, not time': { schedule: everyHour, ranPreviously: true, cronjobCreationTime: justBeforeThePriorHour, jobCreationTime: justBeforeThePriorHour, lastScheduleTime: justBeforeTheHour, now: TOP, requeue: HOUR - MIN + D, update: true, completed: true },
  'with @every schedule, prev ran but done, is time': { schedule: everyHour, ranPreviously: true, cronjobCreationTime: justBeforeThePriorHour, jobCreationTime: justBeforeThePriorHour, lastScheduleTime: justBeforeTheHour, now: TOP + HOUR, create: true, active: 1, requeue: HOUR - MIN + D, update: true, completed: true },
  'with @every schedule, prev ran but done, is time, past deadline': { schedule: everyHour, deadline: shortDead, ranPreviously: true, cronjobCreationTime: justBeforeThePriorHour, jobCreationTime: justBeforeThePriorHour, lastScheduleTime: justBeforeTheHour, now: justBeforeTheNextHour + (shortDead + 1) * SEC, requeue: HOUR - (shortDead + 1) * SEC + D, update: true, completed: true },
  'with @every schedule, still active, is time': { schedule: everyHour, ranPreviously: true, stillActive: true, cronjobCreationTime: justBeforeThePriorHour, jobCreationTime: justBeforeThePriorHour, lastScheduleTime: justBeforeThePriorHour, now: justAfterTheHour, create: true, active: 2, requeue: HOUR - 2 * MIN + D, update: true },
  'with @every schedule, prev ran but done, long overdue, no deadline': { schedule: everyHour, ranPreviously: true, cronjobCreationTime: justAfterThePriorHour, lastScheduleTime: justAfterTheHour, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour, create: true, active: 1, warnings: 1, requeue: MIN + D, update: true, completed: true },
  'with @every schedule, prev ran but done, long overdue, past deadline': { schedule: everyHour, deadline: shortDead, ranPreviously: true, cronjobCreationTime: justAfterThePriorHour, lastScheduleTime: justAfterTheHour, jobCreationTime: justAfterThePriorHour, now: weekAfterTheHour + MIN + (shortDead + 1) * SEC, requeue: HOUR - (shortDead + 1) * SEC + D, update: true, completed: true },
};

describe('syncCronJob', () => {
  it.each(Object.entries(syncCases))('%s', (name, c) => {
    const r = sync(c);
    expect(r.creates).toBe(c.create ? 1 : 0);
    expect(r.deletes).toBe(c.del ? 1 : 0);
    if (c.requeue !== undefined) expect(r.requeue).toBe(c.requeue);
    expect(r.update).toBe(c.update ?? false);
    if (c.active !== undefined) expect(r.activeCount).toBe(c.active);
    const warnings = r.events.filter((e) => e.type === 'Warning');
    expect(warnings.length).toBe(c.warnings ?? 0);
    const expected = (c.create ? 1 : 0) + (c.del ? 1 : 0) + (c.completed ? 1 : 0) + (c.warnings ?? 0) + (name === 'still active, is time, F' ? 1 : 0);
    expect(r.events.length).toBe(expected);
    if (c.ranPreviously && !c.stillActive) expect(r.lastSuccessfulTime).toBe(rfc((c.jobCreationTime ?? TOP) + 10 * SEC));
  });
});

describe('decideSchedule events', () => {
  it('finds no start outside the starting deadline, so it never gets to MissSchedule (as upstream)', () => {
    // the deadline already narrows the search window, so a late start is simply not found
    const d = decideSchedule(cronJob({ schedule: onTheHour, startingDeadlineSeconds: 10 }), justAfterTheHour);
    expect(d).toMatchObject({ kind: 'wait', events: [], requeueAfterMs: HOUR - MIN + D });
    expect(formatRfc1123z(TOP)).toBe('Thu, 19 May 2016 10:00:00 +0000');
  });
  it('reports bad schedules and zones in upstream words', () => {
    expect(decideSchedule(cronJob({ schedule: 'obvious error schedule' }), TOP).events).toEqual([
      { type: 'Warning', reason: 'UnparseableSchedule', message: 'unparseable schedule: "obvious error schedule" : expected exactly 5 fields, found 3: [obvious error schedule]' },
    ]);
    expect(decideSchedule(cronJob({ schedule: onTheHour, timeZone: 'bad timezone' }), TOP).events).toEqual([
      { type: 'Warning', reason: 'UnknownTimeZone', message: 'invalid timeZone: "bad timezone": unknown time zone bad timezone' },
    ]);
    const invalid = decideSchedule(cronJob({ schedule: '59 23 31 2 *', creationTimestamp: rfc(TOP) }), TOP + HOUR);
    expect(invalid.events.map((e) => e.reason)).toEqual(['InvalidSchedule']);
    expect(invalid.kind === 'wait' && invalid.requeueAfterMs).toBeUndefined();
  });
  it('does nothing for a CronJob being deleted', () => {
    expect(decideSchedule(cronJob({ schedule: onTheHour, deletionTimestamp: rfc(TOP) }), justAfterTheHour)).toMatchObject({ kind: 'wait', events: [] });
  });
  it('treats a scheduled time already recorded as done', () => {
    const d = decideSchedule(cronJob({ schedule: onTheHour, status: { active: [], lastScheduleTime: rfc(TOP) } }), justAfterTheHour);
    expect(d.kind).toBe('wait');
  });
});

describe('reconcileChildren', () => {
  it('flags unfinished Jobs the status does not list, and active entries it cannot see', () => {
    const listed = { namespace: 'snazzycats', name: 'gone', uid: 'uid-gone' };
    const r = reconcileChildren(cronJob({ status: { active: [listed] } }), [child('stray')]);
    expect(r.events).toEqual([{ type: 'Warning', reason: 'UnexpectedJob', message: 'Saw a job that the controller did not create or forgot: stray' }]);
    expect(r.unseenActive).toEqual([listed]);
  });
  it('moves lastSuccessfulTime only forward, even for Jobs no longer listed', () => {
    const r = reconcileChildren(cronJob({ status: { active: [], lastSuccessfulTime: rfc(TOP + HOUR) } }), [
      child('old', { finished: 'Complete', completionTime: rfc(TOP) }),
      child('new', { finished: 'Complete', completionTime: rfc(TOP + 2 * HOUR) }),
      child('bad', { finished: 'Failed' }),
    ]);
    expect(r.status.lastSuccessfulTime).toBe(rfc(TOP + 2 * HOUR));
    expect(r.events).toEqual([]);
  });
});

describe('restoreUnconfirmed', () => {
  it('puts a created Job back into the status with its scheduled time', () => {
    const job = { namespace: 'snazzycats', name: 'mycronjob-1', uid: 'u1' };
    const s = restoreUnconfirmed({ active: [], lastScheduleTime: rfc(TOP - HOUR) }, [{ job, scheduledTime: rfc(TOP) }]);
    expect(s).toEqual({ active: [job], lastScheduleTime: rfc(TOP) });
    expect(restoreUnconfirmed(s, [{ job, scheduledTime: rfc(TOP) }])).toBe(s);
  });
});

describe('onScheduleChange', () => {
  it('moves the wake-up to the new schedule, or warns', () => {
    expect(onScheduleChange(cronJob({ schedule: '30 * * * *', creationTimestamp: rfc(TOP) }), TOP + 10 * MIN)).toEqual({ events: [], requeueAfterMs: 20 * MIN + D });
    expect(onScheduleChange(cronJob({ schedule: 'nope' }), TOP).events.map((e) => e.reason)).toEqual(['UnParseableCronJobSchedule']);
  });
});

describe('mergeCronJobEvents', () => {
  it('keeps the latest of each object and relist', () => {
    const a = child('a');
    const m = mergeCronJobEvents({ jobs: [a], relist: true }, { jobsDeleted: [a.uid], cronJob: cronJob() });
    expect(m).toEqual({ jobsDeleted: [a.uid], cronJob: cronJob(), relist: true });
    expect(mergeCronJobEvents(m, { jobs: [a] })).toEqual({ jobs: [a], cronJob: cronJob(), relist: true });
  });
});
