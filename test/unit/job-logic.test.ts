import type { JobStatus } from '../../workflows/job/api';
import {
  MAX_UNCOUNTED_PODS,
  NO_OUTCOME,
  activePodsForRemoval,
  assessSync,
  cleanUncounted,
  finishTracking,
  isJobFinished,
  managedByOther,
  planTracking,
  type ManageOutcome,
} from '../../workflows/job/logic';
import type { BackoffRecord } from '../../workflows/job/backoff';
import type { JobPod, JobView } from '../../workflows/job/types';

/**
 * The job controller's sync decisions, after the table cases of upstream's TestControllerSyncJob,
 * TestTrackJobStatusAndRemoveFinalizers and friends, restated in terms of this module's phases.
 */
const NOW = Date.parse('2025-06-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function job(over: Partial<JobView> = {}, status: JobStatus = {}): JobView {
  return {
    namespace: 'ns', name: 'job', uid: 'job-uid', resourceVersion: '10', generation: 1, creationTimestamp: iso(NOW - 60_000),
    labels: {}, parallelism: 2, completions: 5, completionMode: 'NonIndexed', backoffLimit: 6, suspend: false,
    selector: { matchLabels: { app: 'x' } }, restartPolicy: 'Never', status: { startTime: iso(NOW - 30_000), ...status }, ...over,
  };
}

let seq = 0;
function pod(phase: JobPod['phase'], over: Partial<JobPod> = {}): JobPod {
  seq++;
  return {
    namespace: 'ns', name: `p${seq}`, uid: `uid-${seq}`, resourceVersion: String(100 + seq), creationTimestamp: iso(NOW - 20_000 + seq),
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'job', uid: 'job-uid', controller: true }],
    hasTrackingFinalizer: true, ready: phase === 'Running', nodeName: 'n1', restartCount: 0, sidecarRestartCount: 0, totalRestarts: 0,
    phase, conditions: phase === 'Running' ? [{ type: 'Ready', status: 'True', lastTransitionTime: iso(NOW - 10_000) }] : [],
    containerStatuses: [], initContainerStatuses: [], annotations: {}, labels: { app: 'x' }, ...over,
  };
}

function indexed(p: JobPod, ix: number): JobPod {
  return { ...p, annotations: { ...p.annotations, 'batch.kubernetes.io/job-completion-index': String(ix) } };
}

function failedWith(exitCode: number, finishedAt = iso(NOW - 1000)): Partial<JobPod> {
  return { containerStatuses: [{ name: 'main', terminated: { exitCode, finishedAt } }] };
}

const NO_BACKOFF: BackoffRecord = { failuresAfterLastSuccess: 0 };

/** One whole sync in which every write succeeds (the outcome of the manage step may be overridden). */
function sync(j: JobView, pods: JobPod[], opts: { backoff?: BackoffRecord; outcome?: Partial<ManageOutcome>; now?: number } = {}) {
  const now = opts.now ?? NOW;
  const a = assessSync({ job: j, pods, backoff: opts.backoff ?? NO_BACKOFF, nowMs: now });
  const m = a.manage;
  const full: ManageOutcome = {
    ...NO_OUTCOME,
    ...(m.kind === 'delete' ? { deleted: m.pods.length, deletedReady: m.pods.filter((p) => p.ready).length } : {}),
    ...(m.kind === 'create' ? { created: m.count } : {}),
    ...opts.outcome,
  };
  const plan = planTracking(a, full);
  const removed = new Set(plan.finalizerRemovals.map((p) => p.uid));
  const fin = finishTracking(plan, plan.status, removed, false, now);
  return { a, plan, fin, status: fin.status };
}

const cond = (s: JobStatus, type: string) => s.conditions?.find((c) => c.type === type);

describe('parallelism and completions', () => {
  test('a new Job starts parallelism pods and records startTime', () => {
    const { a, plan, status } = sync(job({}, { startTime: undefined }), []);
    expect(a.manage).toMatchObject({ kind: 'create', count: 2 });
    expect(plan.needsFlush).toBe(true);
    expect(status).toMatchObject({ active: 2, ready: 0, terminating: 0, startTime: iso(NOW) });
  });

  test('never more active pods than the completions still missing', () => {
    const pods = [pod('Succeeded', { hasTrackingFinalizer: false }), pod('Running')];
    const { a } = sync(job({ parallelism: 5 }, { succeeded: 3 }), pods);
    // 5 completions, 3 counted, 1 running: one more
    expect(a.manage).toMatchObject({ kind: 'create', count: 1 });
  });

  test('excess pods are deleted, not-ready and unscheduled ones first', () => {
    const ready = pod('Running');
    const pending = pod('Pending', { nodeName: undefined });
    const running = pod('Running', { ready: false, conditions: [] });
    const { a, status } = sync(job({ parallelism: 1 }), [ready, pending, running]);
    expect(a.manage.kind).toBe('delete');
    if (a.manage.kind !== 'delete') return;
    expect(a.manage.reason).toBe('ExcessPods');
    expect(a.manage.pods.map((p) => p.uid)).toEqual([pending.uid, running.uid]);
    expect(status).toMatchObject({ active: 1, terminating: 2, ready: 1 });
  });

  test('without completions, one success stops new pods and completes once the rest finish', () => {
    const running = pod('Running');
    const done = pod('Succeeded');
    const first = sync(job({ completions: undefined }), [done, running]);
    expect(first.a.manage.kind).toBe('none');
    expect(cond(first.status, 'Complete')).toBeUndefined();
    const finished = pod('Succeeded');
    const second = sync(job({ completions: undefined }, { succeeded: 1 }), [{ ...done, hasTrackingFinalizer: false }, finished]);
    expect(cond(second.status, 'Complete')?.status).toBe('True');
  });

  test('reaching completions: SuccessCriteriaMet, then Complete with completionTime once all is counted', () => {
    const last = pod('Succeeded');
    const { plan, fin, status } = sync(job({}, { succeeded: 4 }), [last]);
    expect(plan.status.uncountedTerminatedPods?.succeeded).toEqual([last.uid]);
    expect(cond(plan.status, 'SuccessCriteriaMet')).toMatchObject({ status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' });
    expect(plan.finalizerRemovals.map((p) => p.uid)).toEqual([last.uid]);
    expect(fin.finished).toBe(true);
    expect(status.succeeded).toBe(5);
    expect(status.uncountedTerminatedPods).toEqual({ succeeded: [], failed: [] });
    expect(cond(status, 'Complete')).toMatchObject({ status: 'True', reason: 'CompletionsReached' });
    expect(status.completionTime).toBe(iso(NOW));
    expect(fin.events).toEqual([{ type: 'Normal', reason: 'Completed', message: 'Job completed' }]);
    expect(isJobFinished({ ...job(), status })).toBe(true);
  });

  test('at most MaxPodCreateDeletePerSync creates in one sync', () => {
    const { a } = sync(job({ parallelism: 2000, completions: 2000 }), []);
    expect(a.manage).toMatchObject({ kind: 'create', count: 500 });
  });

  test('failed creates leave active at what was really created', () => {
    const { status } = sync(job({ parallelism: 4, completions: 4 }), [], { outcome: { created: 1, failed: true } });
    expect(status.active).toBe(1);
  });
});

describe('finished pod tracking', () => {
  test('a finished pod is listed as uncounted before its finalizer goes, then counted', () => {
    const ok = pod('Succeeded');
    const bad = pod('Failed', failedWith(1));
    const { plan, status } = sync(job(), [ok, bad, pod('Running')]);
    expect(plan.status.uncountedTerminatedPods).toEqual({ succeeded: [ok.uid], failed: [bad.uid] });
    expect(plan.status.succeeded ?? 0).toBe(0);
    expect(new Set(plan.finalizerRemovals.map((p) => p.uid))).toEqual(new Set([ok.uid, bad.uid]));
    expect(status).toMatchObject({ succeeded: 1, failed: 1, uncountedTerminatedPods: { succeeded: [], failed: [] } });
  });

  test('a pod already uncounted is not listed twice while its finalizer removal is retried', () => {
    const ok = pod('Succeeded');
    const j = job({}, { uncountedTerminatedPods: { succeeded: [ok.uid] } });
    const a = assessSync({ job: j, pods: [ok], backoff: NO_BACKOFF, nowMs: NOW });
    expect(a.succeeded).toBe(1);
    const plan = planTracking(a, { ...NO_OUTCOME, created: a.manage.kind === 'create' ? a.manage.count : 0 });
    expect(plan.status.uncountedTerminatedPods?.succeeded).toEqual([ok.uid]);
    // the removal fails: nothing is counted yet
    const failedRm = finishTracking(plan, plan.status, new Set(), true, NOW);
    expect(failedRm.status.succeeded ?? 0).toBe(0);
    expect(failedRm.status.uncountedTerminatedPods?.succeeded).toEqual([ok.uid]);
    const done = finishTracking(plan, plan.status, new Set([ok.uid]), false, NOW);
    expect(done.status.succeeded).toBe(1);
  });

  test('uncounted pods that lost their finalizer (or are gone) move into the counters first', () => {
    const s: JobStatus = { succeeded: 2, failed: 1, uncountedTerminatedPods: { succeeded: ['a', 'b'], failed: ['c'] } };
    expect(cleanUncounted(s, new Set(['b']))).toBe(true);
    expect(s).toEqual({ succeeded: 3, failed: 2, uncountedTerminatedPods: { succeeded: ['b'], failed: [] } });
    expect(cleanUncounted(s, new Set(['b']))).toBe(false);
  });

  test('pods without the finalizer are never counted again', () => {
    const { plan, status } = sync(job({}, { succeeded: 1 }), [pod('Succeeded', { hasTrackingFinalizer: false }), pod('Running')]);
    expect(plan.finalizerRemovals).toEqual([]);
    expect(status.succeeded).toBe(1);
  });

  test('a running pod keeps its finalizer', () => {
    const { plan } = sync(job(), [pod('Running')]);
    expect(plan.finalizerRemovals).toEqual([]);
  });

  test('at most MaxUncountedPods are added per sync, and the Job is not finished meanwhile', () => {
    const many = Array.from({ length: MAX_UNCOUNTED_PODS + 10 }, () => pod('Succeeded'));
    const { plan, fin } = sync(job({ completions: many.length, parallelism: 1 }), many);
    expect(plan.status.uncountedTerminatedPods?.succeeded).toHaveLength(MAX_UNCOUNTED_PODS);
    expect(plan.reachedMaxUncounted).toBe(true);
    expect(fin.finished).toBe(false);
  });

  test('a deleted pod that did not succeed counts as failed (TerminatingOrFailed)', () => {
    const gone = pod('Running', { deletionTimestamp: iso(NOW - 1000) });
    const { status, a } = sync(job(), [gone]);
    expect(a.failed).toBe(1);
    expect(status.failed).toBe(1);
  });
});

describe('failure', () => {
  test('backoffLimit exceeded: FailureTarget first, Failed once no pod is left terminating', () => {
    const running = pod('Running');
    const bad = pod('Failed', failedWith(1));
    const { a, plan, fin } = sync(job({ backoffLimit: 1 }, { failed: 1 }), [running, bad]);
    expect(a.manage).toMatchObject({ kind: 'delete', reason: 'JobFinished' });
    expect(cond(plan.status, 'FailureTarget')).toMatchObject({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    // every pod that did not succeed is counted as failed
    expect(new Set(plan.status.uncountedTerminatedPods?.failed)).toEqual(new Set([running.uid, bad.uid]));
    expect(fin.finished).toBe(false); // the deleted pod is still terminating
    expect(fin.status.failed).toBe(3);

    const later = sync(job({ backoffLimit: 1 }, fin.status), []);
    expect(later.fin.finished).toBe(true);
    expect(cond(later.status, 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(later.fin.events).toEqual([{ type: 'Warning', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }]);
    expect(later.status.completionTime).toBeUndefined();
  });

  test('restartPolicy OnFailure: container restarts count against backoffLimit', () => {
    const { plan } = sync(job({ restartPolicy: 'OnFailure', backoffLimit: 2 }), [pod('Running', { totalRestarts: 2 })]);
    expect(cond(plan.status, 'FailureTarget')?.reason).toBe('BackoffLimitExceeded');
  });

  test('a new failure holds back the replacement for the pod failure backoff', () => {
    const bad = pod('Failed', failedWith(1, iso(NOW - 3000)));
    const { a } = sync(job({ parallelism: 1 }), [bad]);
    expect(a.manage.kind).toBe('none');
    expect(a.newBackoffRecord).toEqual({ failuresAfterLastSuccess: 1, lastFailureTimeMs: NOW - 3000 });
    expect(a.requeueAfterMs).toBe(7000);
  });

  test('the backoff doubles per consecutive failure', () => {
    const { a } = sync(job({ parallelism: 1 }, { failed: 2 }), [], { backoff: { failuresAfterLastSuccess: 2, lastFailureTimeMs: NOW - 5000 } });
    expect(a.requeueAfterMs).toBe(15_000);
    const after = sync(job({ parallelism: 1 }, { failed: 2 }), [], { backoff: { failuresAfterLastSuccess: 2, lastFailureTimeMs: NOW - 21_000 } });
    expect(after.a.manage).toMatchObject({ kind: 'create', count: 1 });
  });

  test('activeDeadlineSeconds: wait until it passes, then DeadlineExceeded', () => {
    const before = sync(job({ activeDeadlineSeconds: 60 }), [pod('Running'), pod('Running')]);
    expect(before.a.requeueAfterMs).toBe(30_000);
    const running = [pod('Running'), pod('Running')];
    const past = sync(job({ activeDeadlineSeconds: 20 }), running);
    expect(past.a.manage).toMatchObject({ kind: 'delete', reason: 'JobFinished' });
    expect(cond(past.plan.status, 'FailureTarget')).toMatchObject({ reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    expect(past.status.failed).toBe(2);
  });

  test('a suspended Job has no deadline', () => {
    const { a } = sync(job({ activeDeadlineSeconds: 1, suspend: true }), []);
    expect(a.finishedCondition).toBeUndefined();
    expect(a.requeueAfterMs).toBeUndefined();
  });

  test('podFailurePolicy FailJob fails the Job at once with the rule message', () => {
    const bad = pod('Failed', failedWith(42));
    const policy = { rules: [{ action: 'FailJob' as const, onExitCodes: { containerName: 'main', operator: 'In' as const, values: [42] } }] };
    const { plan, fin } = sync(job({ podFailurePolicy: policy }), [bad, pod('Running')]);
    const target = cond(plan.status, 'FailureTarget');
    expect(target?.reason).toBe('PodFailurePolicy');
    expect(target?.message).toBe(`Container main for pod ns/${bad.name} failed with exit code 42 matching FailJob rule at index 0`);
    expect(fin.finished).toBe(false);
  });

  test('a pre-existing FailureTarget turns into Failed with its reason', () => {
    const status: JobStatus = { failed: 1, conditions: [{ type: 'FailureTarget', status: 'True', reason: 'PodFailurePolicy', message: 'm' }] };
    const { fin, status: out } = sync(job({}, status), []);
    expect(fin.finished).toBe(true);
    expect(cond(out, 'Failed')).toMatchObject({ reason: 'PodFailurePolicy', message: 'm' });
  });

  test('podFailurePolicy Ignore: the failure is not counted and its finalizer still goes', () => {
    const bad = pod('Failed', failedWith(42));
    const policy = { rules: [{ action: 'Ignore' as const, onExitCodes: { operator: 'In' as const, values: [42] } }] };
    const { a, plan, status } = sync(job({ backoffLimit: 0, podFailurePolicy: policy, parallelism: 1 }), [bad]);
    expect(a.failed).toBe(0);
    expect(a.finishedCondition).toBeUndefined();
    expect(plan.status.uncountedTerminatedPods?.failed).toEqual([]);
    expect(plan.finalizerRemovals.map((p) => p.uid)).toEqual([bad.uid]);
    expect(status.failed ?? 0).toBe(0);
  });

  test('with a podFailurePolicy a terminating pod is not replaced until it fails', () => {
    const policy = { rules: [{ action: 'Ignore' as const, onExitCodes: { operator: 'In' as const, values: [42] } }] };
    const terminating = pod('Running', { deletionTimestamp: iso(NOW - 1000) });
    const { a } = sync(job({ podFailurePolicy: policy, parallelism: 1 }), [terminating]);
    expect(a.manage.kind).toBe('none');
  });
});

describe('suspend and resume', () => {
  test('a Job created suspended gets Suspended and no startTime', () => {
    const { status, plan } = sync(job({ suspend: true }, { startTime: undefined }), []);
    expect(status.startTime).toBeUndefined();
    expect(cond(status, 'Suspended')).toMatchObject({ status: 'True', reason: 'JobSuspended', message: 'Job suspended' });
    expect(plan.events).toEqual([{ type: 'Normal', reason: 'Suspended', message: 'Job suspended' }]);
  });

  test('suspending deletes the active pods (their finalizers go with them) without counting them failed', () => {
    const pods = [pod('Running'), pod('Running')];
    const { a, status } = sync(job({ suspend: true }), pods);
    expect(a.manage).toMatchObject({ kind: 'delete', reason: 'Suspended' });
    expect(status).toMatchObject({ active: 0, terminating: 2 });
    expect(status.failed ?? 0).toBe(0);
    // v1.35 keeps startTime on suspend
    expect(status.startTime).toBe(iso(NOW - 30_000));
  });

  test('resuming resets startTime and flips the condition to JobResumed', () => {
    const suspended: JobStatus = { conditions: [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }] };
    const { status, plan, a } = sync(job({}, { ...suspended, startTime: iso(NOW - 3_600_000) }), []);
    expect(a.manage).toMatchObject({ kind: 'create', count: 2 });
    expect(cond(status, 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed', message: 'Job resumed' });
    expect(status.startTime).toBe(iso(NOW));
    expect(plan.events).toEqual([{ type: 'Normal', reason: 'Resumed', message: 'Job resumed' }]);
  });

  test('a never-suspended Job gets no Suspended condition', () => {
    const { status } = sync(job(), []);
    expect(cond(status, 'Suspended')).toBeUndefined();
  });
});

describe('Indexed', () => {
  const ix = (over: Partial<JobView> = {}, status: JobStatus = {}) => job({ completionMode: 'Indexed', parallelism: 3, completions: 5, ...over }, status);

  test('creates the lowest indexes that are neither succeeded nor running', () => {
    const { a } = sync(ix({}, { completedIndexes: '0' }), [indexed(pod('Running'), 2)]);
    expect(a.manage).toMatchObject({ kind: 'create', count: 2, indexes: [{ index: 1 }, { index: 3 }] });
  });

  test('succeeded indexes are recorded in completedIndexes, not as uncounted UIDs', () => {
    const pods = [indexed(pod('Succeeded'), 0), indexed(pod('Succeeded'), 1), indexed(pod('Running'), 2)];
    const { plan, status } = sync(ix(), pods);
    expect(plan.status.uncountedTerminatedPods?.succeeded).toEqual([]);
    expect(status).toMatchObject({ completedIndexes: '0,1', succeeded: 2 });
  });

  test('a second success of one index is counted once', () => {
    const pods = [indexed(pod('Succeeded'), 0), indexed(pod('Succeeded'), 0)];
    const { status } = sync(ix({ completions: 2, parallelism: 1 }, { completedIndexes: '1', succeeded: 1 }), pods);
    expect(status).toMatchObject({ completedIndexes: '0,1', succeeded: 2 });
    expect(cond(status, 'Complete')?.status).toBe('True');
  });

  test('duplicated and out-of-range indexes are deleted', () => {
    const keep = indexed(pod('Running'), 0);
    const dup = indexed(pod('Pending'), 0);
    const out = indexed(pod('Running'), 7);
    const none = pod('Running');
    const { a } = sync(ix(), [keep, dup, out, none]);
    expect(a.manage.kind).toBe('delete');
    if (a.manage.kind !== 'delete') return;
    expect(new Set(a.manage.pods.map((p) => p.uid))).toEqual(new Set([dup.uid, out.uid, none.uid]));
  });

  test('activePodsForRemoval takes duplicates even when no pod is in excess', () => {
    const j = ix();
    const rm = activePodsForRemoval(j, [indexed(pod('Running'), 1), indexed(pod('Running'), 1)], 0);
    expect(rm).toHaveLength(1);
  });

  test('successPolicy: SuccessCriteriaMet with its message, the other pods are deleted', () => {
    const policy = { rules: [{ succeededIndexes: '0', succeededCount: 1 }] };
    const running = indexed(pod('Running'), 1);
    const { a, plan, fin } = sync(ix({ successPolicy: policy }), [indexed(pod('Succeeded'), 0), running]);
    expect(cond(plan.status, 'SuccessCriteriaMet')).toMatchObject({ reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
    expect(a.manage).toMatchObject({ kind: 'delete', reason: 'JobFinished' });
    // the running pod is not counted as failed once the success criteria are met
    expect(plan.status.uncountedTerminatedPods?.failed).toEqual([]);
    expect(fin.finished).toBe(false); // waits for the terminating pod
    const later = sync(ix({ successPolicy: policy }, fin.status), []);
    expect(cond(later.status, 'Complete')).toMatchObject({ reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
  });

  test('backoffLimitPerIndex: an index past its limit is failed, the Job goes on with the others', () => {
    const lost = indexed(pod('Failed', { ...failedWith(1), annotations: { 'batch.kubernetes.io/job-index-failure-count': '1' } }), 0);
    const j = ix({ backoffLimitPerIndex: 1, backoffLimit: 2147483647, completions: 3, parallelism: 3 });
    const { a, status } = sync(j, [lost]);
    expect(status.failedIndexes).toBe('0');
    expect(a.manage).toMatchObject({ kind: 'create', indexes: [{ index: 1, failureCount: 0 }, { index: 2, failureCount: 0 }] });
    expect(a.finishedCondition).toBeUndefined();
  });

  test('backoffLimitPerIndex: the replacement carries the failure count and waits out the per-index backoff', () => {
    const failed = indexed(pod('Failed', failedWith(1, iso(NOW - 4000))), 1);
    const j = ix({ backoffLimitPerIndex: 2, backoffLimit: 2147483647, completions: 2, parallelism: 2 }, { completedIndexes: '0', succeeded: 1 });
    const waiting = sync(j, [failed]);
    expect(waiting.a.manage.kind).toBe('none');
    expect(waiting.a.requeueAfterMs).toBe(6000);
    // its finalizer stays until the replacement exists, so the count can be carried over
    expect(waiting.plan.finalizerRemovals).toEqual([]);
    const ready = sync(j, [failed], { now: NOW + 7000 });
    expect(ready.a.manage).toMatchObject({ kind: 'create', indexes: [{ index: 1, failureCount: 1 }] });
  });

  test('failed indexes plus succeeded ones covering all: FailedIndexes', () => {
    const lost = indexed(pod('Failed', failedWith(1)), 1);
    const j = ix({ backoffLimitPerIndex: 0, backoffLimit: 2147483647, completions: 2, parallelism: 2 }, { completedIndexes: '0', succeeded: 1 });
    const { plan } = sync(j, [lost]);
    expect(cond(plan.status, 'FailureTarget')).toMatchObject({ reason: 'FailedIndexes', message: 'Job has failed indexes' });
  });

  test('maxFailedIndexes exceeded', () => {
    const pods = [indexed(pod('Failed', failedWith(1)), 0), indexed(pod('Failed', failedWith(1)), 1)];
    const j = ix({ backoffLimitPerIndex: 0, maxFailedIndexes: 1, backoffLimit: 2147483647, completions: 4 });
    const { plan } = sync(j, pods);
    expect(cond(plan.status, 'FailureTarget')).toMatchObject({ reason: 'MaxFailedIndexesExceeded', message: 'Job has exceeded the specified maximal number of failed indexes' });
  });
});

describe('not ours to sync', () => {
  test('managedBy another controller', () => {
    expect(managedByOther(job({ managedBy: 'kueue.x-k8s.io/multikueue' }))).toBe('kueue.x-k8s.io/multikueue');
    expect(managedByOther(job({ managedBy: 'kubernetes.io/job-controller' }))).toBeUndefined();
    expect(managedByOther(job())).toBeUndefined();
  });

  test('a Job being deleted is not managed, but its pods are all released', () => {
    const running = pod('Running');
    const { a, plan } = sync(job({ deletionTimestamp: iso(NOW) }), [running]);
    expect(a.manage.kind).toBe('none');
    expect(plan.finalizerRemovals.map((p) => p.uid)).toEqual([running.uid]);
  });
});
