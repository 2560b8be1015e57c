import { cronJobRoutes } from '../../activities/cronjob/routes';
import { prune } from '../../activities/informers/fields';
import { jobRoutes } from '../../activities/job/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { JOB_TTL_FIELDS, jobTtlView } from '../../activities/ttl-after-finished/activities';
import { ttlAfterFinishedRoutes } from '../../activities/ttl-after-finished/routes';
import type { RouteFactory } from '../../workers/descriptor';
import type { TtlAfterFinishedEvent } from '../../workflows/ttl-after-finished/workflow';
import { ttlAfterFinishedWorkflow } from '../../workflows/ttl-after-finished/workflow';
import { routeHarness, type Sent } from '../support/routes';

const JOBS = RESOURCES.jobs;

const harness = (factory: RouteFactory = ttlAfterFinishedRoutes, controllers = ['ttl-after-finished']) =>
  routeHarness<TtlAfterFinishedEvent>(factory, { controllers, tuning: { resyncMs: 7 } });

const FINISHED = '2026-03-01T12:00:00Z';

const job = (name: string, o: { ttl?: number; done?: string | false; rv?: string; deleting?: boolean; active?: number } = {}): KubeObject =>
  ({
    metadata: {
      namespace: 'a', name, uid: `j-${name}`, resourceVersion: o.rv ?? '1',
      ...(o.deleting ? { deletionTimestamp: '2026-03-01T12:01:00Z' } : {}),
    },
    spec: { ...(o.ttl !== undefined ? { ttlSecondsAfterFinished: o.ttl } : {}), template: { spec: { containers: [] } } },
    status: {
      ...(o.active !== undefined ? { active: o.active } : {}),
      conditions: o.done === false ? [] : [{ type: 'Complete', status: 'True', lastTransitionTime: o.done ?? FINISHED }],
    },
  } as unknown as KubeObject);

const brief = (s: Sent<TtlAfterFinishedEvent>) => ({ id: s.id, event: s.event });
const sentFor = (...objs: KubeObject[]) => objs.map((o) => ({ id: `a/${o.metadata!.name}`, event: { job: jobTtlView(o) } }));

describe('ttl-after-finished routes', () => {
  test('a list sends every finished Job with a TTL that is not being deleted, to its own workflow ID', () => {
    const { sent, h } = harness();
    const due = job('due', { ttl: 60 });
    h(JOBS).relisted([due, job('no-ttl'), job('running', { ttl: 60, done: false }), job('deleting', { ttl: 60, deleting: true })], '5');
    expect(sent.map(brief)).toEqual(sentFor(due));
    expect(sent[0].target).toEqual({
      controller: 'ttl-after-finished', workflow: ttlAfterFinishedWorkflow, kind: 'Job', namespace: 'a', name: 'due', uid: 'j-due',
      args: { namespace: 'a', name: 'due', uid: 'j-due', tuning: { resyncMs: 7 } },
      workflowId: 'ttl-after-finished/a/due',
    });
    expect(sent[0].urgent).toBe(false);
  });

  test('watched: status churn on a finished Job sends nothing; what timing reads (TTL, finish time) sends the Job again', () => {
    const { sent, h } = harness();
    h(JOBS).relisted([job('j', { ttl: 60 })], '1');
    sent.length = 0;
    h(JOBS).event('MODIFIED', job('j', { ttl: 60, rv: '2', active: 0 }));
    h(JOBS).event('MODIFIED', job('j', { ttl: 60, rv: '3', active: 1 }));
    expect(sent).toEqual([]);
    const longer = job('j', { ttl: 120, rv: '4' });
    h(JOBS).event('MODIFIED', longer);
    const later = job('j', { ttl: 120, rv: '5', done: '2026-03-01T12:30:00Z' });
    h(JOBS).event('MODIFIED', later);
    expect(sent.map(brief)).toEqual(sentFor(longer, later));
  });

  test('watched: a Job finishing, or added finished, starts its workflow; running, deleting or deleted Jobs send nothing', () => {
    const { sent, h } = harness();
    h(JOBS).relisted([job('r', { ttl: 5, done: false })], '1');
    h(JOBS).event('MODIFIED', job('r', { ttl: 5, done: false, rv: '2', active: 1 }));
    expect(sent).toEqual([]);
    const finished = job('r', { ttl: 5, rv: '3' });
    h(JOBS).event('MODIFIED', finished);
    const added = job('new', { ttl: 0, rv: '4' });
    h(JOBS).event('ADDED', added);
    h(JOBS).event('MODIFIED', job('r', { ttl: 5, rv: '5', deleting: true }));
    h(JOBS).event('DELETED', job('r', { ttl: 5, rv: '6', deleting: true }));
    h(JOBS).event('DELETED', job('new', { ttl: 0, rv: '7' }));
    expect(sent.map(brief)).toEqual(sentFor(finished, added));
  });

  test('a Job that stops wanting a workflow and wants one again is sent again, even unchanged for timing', () => {
    const { sent, h } = harness();
    const j = job('j', { ttl: 60 });
    h(JOBS).relisted([j], '1');
    h(JOBS).event('MODIFIED', job('j', { rv: '2' }));
    const back = job('j', { ttl: 60, rv: '3' });
    h(JOBS).event('MODIFIED', back);
    expect(sent.map(brief)).toEqual(sentFor(j, back));
  });

  test('a relist sends every Job due again, changed or not (a workflow lost meanwhile comes back); the vanished send nothing', () => {
    const { sent, h } = harness();
    h(JOBS).relisted([job('a1', { ttl: 60 }), job('a2', { ttl: 60 }), job('gone', { ttl: 60 })], '1');
    sent.length = 0;
    const a1 = job('a1', { ttl: 60 });
    const a2 = job('a2', { ttl: 30, rv: '8' });
    h(JOBS).relisted([a1, a2, job('plain', { rv: '9' })], '10');
    expect(sent.map(brief)).toEqual(sentFor(a1, a2));
    sent.length = 0;
    // after the relist, churn is still nothing to send
    h(JOBS).event('MODIFIED', job('a1', { ttl: 60, rv: '11', active: 0 }));
    expect(sent).toEqual([]);
  });

  test('the same is sent whether or not the job and cronjob controllers read the same Jobs', () => {
    const feed = (h: ReturnType<typeof harness>['h']) => {
      h(JOBS).relisted([job('j', { ttl: 60 }), job('r', { ttl: 60, done: false })], '1');
      h(JOBS).event('MODIFIED', job('j', { ttl: 60, rv: '2', active: 0 }));
      h(JOBS).event('MODIFIED', job('r', { ttl: 60, rv: '3' }));
      h(JOBS).event('MODIFIED', job('j', { ttl: 10, rv: '4' }));
      h(JOBS).relisted([job('j', { ttl: 10, rv: '4' })], '5');
    };
    const alone = harness();
    feed(alone.h);
    const shared = harness((ctx) => {
      jobRoutes(ctx);
      cronJobRoutes(ctx);
      return ttlAfterFinishedRoutes(ctx);
    }, ['ttl-after-finished', 'job', 'cronjob']);
    feed(shared.h);
    expect(shared.sent.filter((s) => s.target.controller === 'ttl-after-finished')).toEqual(alone.sent);
    expect(alone.sent.map((s) => s.id)).toEqual(['a/j', 'a/r', 'a/j', 'a/j']);
  });

  test('JOB_TTL_FIELDS keeps what jobTtlView reads', () => {
    const rich = {
      metadata: { namespace: 'a', name: 'j', uid: 'u', resourceVersion: '3', deletionTimestamp: '2026-03-01T13:00:00Z', labels: { x: 'y' } },
      spec: { ttlSecondsAfterFinished: 30, backoffLimit: 2, template: { spec: { containers: [] } } },
      status: {
        succeeded: 1,
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: '2026-03-01T11:59:00Z', reason: 'r' },
          { type: 'Failed', status: 'False', lastTransitionTime: '2026-03-01T11:58:00Z' },
          { type: 'Complete', status: 'True', lastTransitionTime: FINISHED, message: 'm' },
        ],
      },
    } as unknown as KubeObject;
    const pruned = prune(rich, JOB_TTL_FIELDS) as KubeObject;
    expect(pruned.spec).toEqual({ ttlSecondsAfterFinished: 30 });
    expect(jobTtlView(pruned)).toEqual(jobTtlView(rich));
    expect(jobTtlView(rich)).toEqual({
      namespace: 'a', name: 'j', uid: 'u', ttlSecondsAfterFinished: 30, deletionTimestamp: '2026-03-01T13:00:00Z',
      finished: { type: 'Complete', lastTransitionTime: FINISHED },
    });
  });
});
