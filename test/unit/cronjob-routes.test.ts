import { CHILD_JOB_FIELDS, CRON_JOB_VIEW_FIELDS, childJob, cronJobView } from '../../activities/cronjob/activities';
import { cronJobRoutes } from '../../activities/cronjob/routes';
import { prune } from '../../activities/informers/fields';
import { jobRoutes } from '../../activities/job/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { ttlAfterFinishedRoutes } from '../../activities/ttl-after-finished/routes';
import type { RouteFactory } from '../../workers/descriptor';
import { SCHEDULED_TIMESTAMP_ANNOTATION, mergeCronJobEvents, type CronJobEvent } from '../../workflows/cronjob/types';
import { cronJobWorkflow } from '../../workflows/cronjob/workflow';
import { routeHarness, type Sent } from '../support/routes';

const CRONJOBS = RESOURCES.cronJobs;
const JOBS = RESOURCES.jobs;

const harness = (factory: RouteFactory = cronJobRoutes, controllers = ['cronjob']) =>
  routeHarness<CronJobEvent>(factory, { controllers, tuning: { resyncMs: 7 } });

const cronJob = (name: string, o: { ns?: string; rv?: string; schedule?: string } = {}): KubeObject =>
  ({
    metadata: { namespace: o.ns ?? 'a', name, uid: o.ns && o.ns !== 'a' ? `cj-${o.ns}-${name}` : `cj-${name}`, resourceVersion: o.rv ?? '1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { schedule: o.schedule ?? '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [] } } } } },
    status: {},
  } as KubeObject);

const job = (name: string, o: { owner?: string; kind?: string; ns?: string; rv?: string; done?: boolean } = {}): KubeObject =>
  ({
    metadata: {
      namespace: o.ns ?? 'a', name, uid: `j-${name}`, resourceVersion: o.rv ?? '1', creationTimestamp: '2026-01-01T00:05:00Z',
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: o.kind ?? 'CronJob', name: o.owner, uid: `cj-${o.owner}`, controller: true }] } : {}),
    },
    spec: { template: { spec: { containers: [] } } },
    status: o.done ? { startTime: '2026-01-01T00:05:01Z', completionTime: '2026-01-01T00:06:00Z', conditions: [{ type: 'Complete', status: 'True' }] } : { startTime: '2026-01-01T00:05:01Z' },
  } as unknown as KubeObject);

const brief = (s: Sent<CronJobEvent>) => ({ id: s.id, event: s.event });
const jobNames = (e: CronJobEvent) => e.jobs?.map((j) => j.name);

describe('cronjob routes: a CronJob to itself', () => {
  test('a list sends each CronJob with `relist`; a later one sends the vanished their deletion', () => {
    const { sent, h } = harness();
    h(CRONJOBS).relisted([cronJob('nightly'), cronJob('hourly')], '10');
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { cronJob: cronJobView(cronJob('nightly')), relist: true } },
      { id: 'a/hourly', event: { cronJob: cronJobView(cronJob('hourly')), relist: true } },
    ]);
    expect(sent[0].target).toEqual({
      controller: 'cronjob', workflow: cronJobWorkflow, kind: 'CronJob', namespace: 'a', name: 'nightly', uid: 'cj-nightly',
      args: { namespace: 'a', name: 'nightly', uid: 'cj-nightly', tuning: { resyncMs: 7 } },
    });
    expect(sent.every((s) => !s.urgent)).toBe(true);
    sent.length = 0;
    h(CRONJOBS).relisted([cronJob('nightly', { rv: '11' })], '12');
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { cronJob: cronJobView(cronJob('nightly', { rv: '11' })), relist: true } },
      { id: 'a/hourly', event: { cronJobDeletedUid: 'cj-hourly' } },
    ]);
  });

  test('a watched add or change sends the CronJob; a deletion its UID', () => {
    const { sent, h } = harness();
    h(CRONJOBS).relisted([], '1');
    h(CRONJOBS).event('ADDED', cronJob('nightly', { rv: '2' }));
    h(CRONJOBS).event('MODIFIED', cronJob('nightly', { rv: '3', schedule: '0 * * * *' }));
    h(CRONJOBS).event('DELETED', cronJob('nightly', { rv: '4' }));
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { cronJob: cronJobView(cronJob('nightly', { rv: '2' })) } },
      { id: 'a/nightly', event: { cronJob: expect.objectContaining({ schedule: '0 * * * *', resourceVersion: '3' }) } },
      { id: 'a/nightly', event: { cronJobDeletedUid: 'cj-nightly' } },
    ]);
  });
});

describe('cronjob routes: a Job to the CronJob that controls it', () => {
  const listed = () => {
    const t = harness();
    t.h(CRONJOBS).relisted([cronJob('nightly'), cronJob('hourly'), cronJob('nightly', { ns: 'b' })], '1');
    t.h(JOBS).relisted([job('n1', { owner: 'nightly' }), job('h1', { owner: 'hourly' })], '2');
    t.sent.length = 0;
    return t;
  };

  test('the first list of Jobs sends each its CronJob; Jobs of other controllers, of unknown ones or of another namespace go nowhere', () => {
    const { sent, h } = harness();
    h(CRONJOBS).relisted([cronJob('nightly')], '1');
    sent.length = 0;
    h(JOBS).relisted([
      job('n1', { owner: 'nightly' }), job('n2', { owner: 'nightly', done: true }),
      job('other', { owner: 'nightly', kind: 'Something' }), job('lost', { owner: 'gone' }), job('bare'),
      job('elsewhere', { owner: 'nightly', ns: 'b' }),
    ], '2');
    expect(sent.map((s) => s.id)).toEqual(['a/nightly', 'a/nightly']);
    expect(sent.map((s) => s.event).reduce(mergeCronJobEvents)).toEqual({ jobs: [childJob(job('n1', { owner: 'nightly' })), childJob(job('n2', { owner: 'nightly', done: true }))] });
  });

  test('a change the CronJob does not read sends nothing; one it reads sends the Job; a deletion its UID', () => {
    const { sent, h } = listed();
    h(JOBS).event('MODIFIED', { ...job('n1', { owner: 'nightly', rv: '3' }), status: { startTime: '2026-01-01T00:05:01Z', active: 1 } } as KubeObject);
    expect(sent).toEqual([]);
    h(JOBS).event('MODIFIED', job('n1', { owner: 'nightly', rv: '4', done: true }));
    expect(sent.map(brief)).toEqual([{ id: 'a/nightly', event: { jobs: [childJob(job('n1', { owner: 'nightly', rv: '4', done: true }))] } }]);
    sent.length = 0;
    h(JOBS).event('DELETED', job('n1', { owner: 'nightly', rv: '5', done: true }));
    h(JOBS).event('DELETED', job('never-seen', { owner: 'hourly', rv: '6' }));
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { jobsDeleted: ['j-n1'] } },
      { id: 'a/hourly', event: { jobsDeleted: ['j-never-seen'] } },
    ]);
  });

  test('a Job changing controller is gone for the old CronJob and new for the other', () => {
    const { sent, h } = listed();
    h(JOBS).event('MODIFIED', job('n1', { owner: 'hourly', rv: '3' }));
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { jobsDeleted: ['j-n1'] } },
      { id: 'a/hourly', event: { jobs: [childJob(job('n1', { owner: 'hourly', rv: '3' }))] } },
    ]);
  });

  test('a later Job relist sends what changed, appeared or vanished during the gap, nothing for the rest', () => {
    const { sent, h } = listed();
    h(JOBS).relisted([job('n1', { owner: 'nightly', rv: '5', done: true }), job('n2', { owner: 'nightly', rv: '6' })], '7');
    expect(sent.map(brief)).toEqual([
      { id: 'a/nightly', event: { jobs: [childJob(job('n1', { owner: 'nightly', rv: '5', done: true }))] } },
      { id: 'a/nightly', event: { jobs: [childJob(job('n2', { owner: 'nightly', rv: '6' }))] } },
      { id: 'a/hourly', event: { jobsDeleted: ['j-h1'] } },
    ]);
    sent.length = 0;
    h(JOBS).relisted([job('n1', { owner: 'nightly', rv: '5', done: true }), job('n2', { owner: 'nightly', rv: '6' })], '8');
    expect(sent).toEqual([]);
  });
});

describe('cronjob routes: shared stores', () => {
  const feed = (h: ReturnType<typeof harness>['h']) => {
    h(JOBS).relisted([job('n1', { owner: 'nightly' })], '1');
    h(CRONJOBS).relisted([cronJob('nightly')], '2');
    h(JOBS).event('ADDED', job('n2', { owner: 'nightly', rv: '3' }));
    h(JOBS).event('MODIFIED', job('n2', { owner: 'nightly', rv: '4', done: true }));
    h(CRONJOBS).event('MODIFIED', { ...cronJob('nightly', { rv: '5' }), status: { lastScheduleTime: '2026-01-01T00:05:00Z' } } as KubeObject);
    h(JOBS).relisted([job('n2', { owner: 'nightly', rv: '6', done: true })], '7');
    h(JOBS).event('DELETED', job('n2', { owner: 'nightly', rv: '8', done: true }));
    h(CRONJOBS).event('DELETED', cronJob('nightly', { rv: '9' }));
  };

  test('the CronJobs are sent the same whether or not the job and TTL controllers read the same Jobs', () => {
    const alone = harness();
    feed(alone.h);
    const shared = harness((ctx) => {
      jobRoutes(ctx);
      ttlAfterFinishedRoutes(ctx);
      return cronJobRoutes(ctx);
    }, ['cronjob', 'job', 'ttl-after-finished']);
    feed(shared.h);
    expect(shared.sent.filter((s) => s.target.controller === 'cronjob')).toEqual(alone.sent);
    expect(alone.sent.map((s) => s.event).map((e) => Object.keys(e).sort().join())).toEqual([
      'cronJob,relist', 'jobs', 'jobs', 'cronJob', 'jobsDeleted', 'jobsDeleted', 'cronJobDeletedUid',
    ]);
    expect(jobNames(alone.sent[1].event)).toEqual(['n2']);
  });
});

describe('cronjob routes: field masks keep what the projections read', () => {
  test('cronJobView', () => {
    const rich = {
      metadata: {
        namespace: 'a', name: 'nightly', uid: 'u', resourceVersion: '9', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z',
        deletionTimestamp: '2026-01-02T00:00:00Z', labels: { x: 'y' },
      },
      spec: {
        schedule: '0 0 * * *', timeZone: 'Europe/Paris', startingDeadlineSeconds: 30, concurrencyPolicy: 'Forbid', suspend: true,
        successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1,
        jobTemplate: {
          metadata: { labels: { app: 'x' }, annotations: { note: 'n' }, name: 'ignored', finalizers: ['f'] },
          spec: { backoffLimit: 2, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
        },
        somethingNew: { a: 1 },
      },
      status: {
        active: [{ apiVersion: 'batch/v1', kind: 'Job', namespace: 'a', name: 'j', uid: 'ju', resourceVersion: '4', fieldPath: 'x' }],
        lastScheduleTime: '2026-01-01T00:00:00Z', lastSuccessfulTime: '2026-01-01T00:01:00Z',
      },
    } as unknown as KubeObject;
    const pruned = prune(rich, CRON_JOB_VIEW_FIELDS) as KubeObject;
    expect(pruned.spec?.somethingNew).toBeUndefined();
    expect(cronJobView(pruned)).toEqual(cronJobView(rich));
    expect(cronJobView(rich)).toMatchObject({ timeZone: 'Europe/Paris', concurrencyPolicy: 'Forbid', suspend: true, failedJobsHistoryLimit: 1 });
  });

  test('childJob', () => {
    const rich = {
      metadata: {
        namespace: 'a', name: 'j', uid: 'ju', resourceVersion: '4', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-01T01:00:00Z',
        annotations: { [SCHEDULED_TIMESTAMP_ANNOTATION]: '2026-01-01T00:00:00Z' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'c', uid: 'cu', controller: true }],
      },
      spec: { template: { spec: { containers: [] } } },
      status: {
        startTime: '2026-01-01T00:00:01Z', completionTime: '2026-01-01T00:02:00Z', succeeded: 1,
        conditions: [{ type: 'SuccessCriteriaMet', status: 'True', reason: 'r' }, { type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:02:00Z' }],
      },
    } as unknown as KubeObject;
    const pruned = prune(rich, CHILD_JOB_FIELDS) as KubeObject;
    expect(pruned.spec).toBeUndefined();
    expect(childJob(pruned)).toEqual(childJob(rich));
    expect(childJob(rich)).toMatchObject({ finished: 'Complete', scheduledTimestamp: '2026-01-01T00:00:00Z', controllerRef: { uid: 'cu' } });
  });
});
