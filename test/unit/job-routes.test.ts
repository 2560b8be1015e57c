import { jobRoutes } from '../../activities/job/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { JobEvent } from '../../workflows/job/types';
import { routeHarness } from '../support/routes';

const job = (name: string, app: string, rv = '1'): KubeObject =>
  ({ metadata: { namespace: 'a', name, uid: `j-${name}`, resourceVersion: rv }, spec: { selector: { matchLabels: { app } } } });
const pod = (name: string, labels: Record<string, string>, o: { job?: string; kind?: string; rv?: string; phase?: string; held?: boolean; deleting?: boolean } = {}): KubeObject => ({
  metadata: {
    namespace: 'a', name, uid: `p-${name}`, resourceVersion: o.rv ?? '1', labels,
    ...(o.held ? { finalizers: ['batch.kubernetes.io/job-tracking'] } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    ownerReferences: o.job ? [{ apiVersion: 'batch/v1', kind: o.kind ?? 'Job', name: o.job, uid: `j-${o.job}`, controller: true }] : undefined,
  },
  status: { phase: o.phase ?? 'Running' },
});

const harness = () => routeHarness<JobEvent>(jobRoutes, { controllers: ['job'] });

describe('job routes', () => {
  test('only with the job controller enabled', () => {
    expect(routeHarness(jobRoutes, { controllers: ['replicaset'] }).family).toBeUndefined();
  });

  test('every listed Job (first list or relist) reads its pods afresh; a watched one gets itself; a deleted one its UID', () => {
    const { sent, h } = harness();
    h(RESOURCES.jobs).relisted([job('a', 'a')], '1');
    expect(sent.map((s) => [s.target.workflowId ?? `job/${s.id}`, s.event.relist, s.event.job?.uid])).toEqual([['job/a/a', true, 'j-a']]);
    h(RESOURCES.jobs).relisted([job('a', 'a')], '2');
    expect(sent[1].event.relist).toBe(true);
    h(RESOURCES.jobs).event('MODIFIED', job('a', 'a', '3'));
    expect(sent[2].event).toEqual({ job: expect.objectContaining({ resourceVersion: '3' }) });
    h(RESOURCES.jobs).event('DELETED', job('a', 'a', '4'));
    expect(sent[3].event).toEqual({ jobDeletedUid: 'j-a' });
  });

  test('a pod goes to the Job controlling it, an orphan to every matching Job of its namespace, another kind\'s pod nowhere', () => {
    const { sent, h } = harness();
    h(RESOURCES.jobs).relisted([job('a', 'a'), job('b', 'b')], '1');
    h(RESOURCES.pods).relisted([], '1');
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('p1', { app: 'a' }, { job: 'a' }));
    h(RESOURCES.pods).event('ADDED', pod('p2', { app: 'b' }));
    h(RESOURCES.pods).event('ADDED', pod('p3', { app: 'a' }, { job: 'x', kind: 'ReplicaSet' }));
    expect(sent.map((s) => [s.id, s.event.pods?.map((p) => p.name)])).toEqual([['a/a', ['p1']], ['a/b', ['p2']]]);
    sent.length = 0;
    h(RESOURCES.pods).event('DELETED', pod('p1', { app: 'a' }, { job: 'a', rv: '2' }));
    expect(sent.map((s) => [s.id, s.event.podsDeleted])).toEqual([['a/a', ['p-p1']]]);
  });

  test('the pods\' first list sends nothing (each Job relists); a relist sends only what changed; an update nothing the controller reads changes is dropped', () => {
    const { sent, h } = harness();
    h(RESOURCES.jobs).relisted([job('a', 'a')], '1');
    sent.length = 0;
    h(RESOURCES.pods).relisted([pod('p1', { app: 'a' }, { job: 'a' }), pod('p2', { app: 'a' }, { job: 'a' })], '2');
    expect(sent).toHaveLength(0);
    h(RESOURCES.pods).relisted([pod('p1', { app: 'a' }, { job: 'a' }), pod('p2', { app: 'a' }, { job: 'a', rv: '3', phase: 'Succeeded' })], '4');
    expect(sent.map((s) => s.event.pods?.map((p) => [p.name, p.phase]))).toEqual([[['p2', 'Succeeded']]]);
    sent.length = 0;
    const relabelled = pod('p1', { app: 'a' }, { job: 'a', rv: '5' });
    (relabelled.spec as unknown) = { containers: [{ name: 'x' }] };
    h(RESOURCES.pods).event('MODIFIED', relabelled);
    expect(sent).toHaveLength(0);
  });

  test('a pod holding the tracking finalizer with no Job to count it gets a release of its own, keyed by the pod, from the first list on', () => {
    const { sent, h } = harness();
    h(RESOURCES.jobs).relisted([job('a', 'a')], '1');
    sent.length = 0;
    h(RESOURCES.pods).relisted([
      pod('orphan', { app: 'z' }, { held: true }),
      pod('dangling', { app: 'z' }, { job: 'gone', held: true, deleting: true }),
      pod('alive', { app: 'z' }, { job: 'gone', held: true }),
      pod('mine', { app: 'a' }, { job: 'a', held: true, deleting: true }),
    ], '2');
    const releases = () => sent.filter((s) => s.target.workflowId?.startsWith('job/orphan-pod/'));
    expect(releases().map((s) => [s.target.workflowId, s.target.kind, s.target.uid, (s.event as unknown as { why: string }).why])).toEqual([
      ['job/orphan-pod/a/orphan', 'Pod', 'p-orphan', expect.stringMatching(/no controller/)],
      ['job/orphan-pod/a/dangling', 'Pod', 'p-dangling', expect.stringMatching(/Job gone \(uid j-gone\) is gone/)],
    ]);
    sent.length = 0;
    // an unchanged relist sends nothing again; the garbage collector deleting the live one does
    h(RESOURCES.pods).relisted([pod('orphan', { app: 'z' }, { held: true }), pod('alive', { app: 'z' }, { job: 'gone', held: true })], '3');
    expect(releases()).toHaveLength(0);
    h(RESOURCES.pods).event('MODIFIED', pod('alive', { app: 'z' }, { job: 'gone', held: true, deleting: true, rv: '4' }));
    expect(releases().map((s) => s.target.workflowId)).toEqual(['job/orphan-pod/a/alive']);
  });
});
