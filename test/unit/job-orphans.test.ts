import { isJobRef, orphanReleaseDue, orphanVerdict, type OrphanCandidate } from '../../workflows/job/orphans';
import type { JobView } from '../../workflows/job/types';
import type { OwnerRef } from '../../workflows/common/meta';

const jobRef = (uid: string, o: Partial<OwnerRef> = {}): OwnerRef => ({ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid, controller: true, ...o });
const pod = (o: Partial<OrphanCandidate> = {}): OrphanCandidate => ({ hasTrackingFinalizer: true, ownerReferences: [], ...o });
const job = (uid: string, o: Partial<JobView> = {}): JobView => ({
  namespace: 'a', name: 'j', uid, resourceVersion: '1', generation: 1, creationTimestamp: '', labels: {}, parallelism: 1,
  completionMode: 'NonIndexed', backoffLimit: 6, suspend: false, selector: {}, restartPolicy: 'Never', status: {}, ...o,
});
const finished = (type: 'Complete' | 'Failed') => ({ conditions: [{ type, status: 'True' }] }) as JobView['status'];
const DELETING = '2026-01-01T00:00:00Z';

describe('isJobRef', () => {
  it('is a batch/v1 Job only', () => {
    expect(isJobRef(jobRef('u'))).toBe(true);
    expect(isJobRef(jobRef('u', { apiVersion: 'batch/v2' }))).toBe(false);
    expect(isJobRef(jobRef('u', { kind: 'CronJob' }))).toBe(false);
  });
});

describe('orphanReleaseDue (at the watch, upstream\'s enqueueOrphanPod conditions)', () => {
  const none = () => undefined;
  const cached = (uid: string) => (u: string) => (u === uid ? job(uid) : undefined);
  it.each<[string, OrphanCandidate, (uid: string) => JobView | undefined, boolean]>([
    ['no finalizer: nothing to do', pod({ hasTrackingFinalizer: false }), none, false],
    ['no finalizer, deleting, Job gone: nothing to do', pod({ hasTrackingFinalizer: false, deletionTimestamp: DELETING, ownerReferences: [jobRef('u')] }), none, false],
    ['finalizer and no owner at all', pod(), none, true],
    ['finalizer, a non-controller Job reference only', pod({ ownerReferences: [{ ...jobRef('u'), controller: false }] }), none, true],
    ['live pod whose Job is gone: left to the garbage collector', pod({ ownerReferences: [jobRef('u')] }), none, false],
    ['deleting pod whose Job is gone', pod({ deletionTimestamp: DELETING, ownerReferences: [jobRef('u')] }), none, true],
    ['deleting pod whose Job name holds another UID', pod({ deletionTimestamp: DELETING, ownerReferences: [jobRef('old')] }), cached('new'), true],
    ['deleting pod of a cached Job: that Job\'s workflow decides', pod({ deletionTimestamp: DELETING, ownerReferences: [jobRef('u')] }), cached('u'), false],
    ['deleting pod controlled by a ReplicaSet', pod({ deletionTimestamp: DELETING, ownerReferences: [jobRef('u', { apiVersion: 'apps/v1', kind: 'ReplicaSet' })] }), none, false],
  ])('%s', (_what, p, lookup, due) => {
    expect(orphanReleaseDue(p, lookup) !== undefined).toBe(due);
  });
});

describe('orphanVerdict (from a fresh read, upstream\'s handleSingleOrphanPod)', () => {
  it.each<[string, OrphanCandidate, JobView | undefined, boolean, RegExp]>([
    ['no finalizer', pod({ hasTrackingFinalizer: false }), undefined, false, /no tracking finalizer/],
    ['no controller', pod(), undefined, true, /no controller/],
    ['controlled by another kind', pod({ ownerReferences: [jobRef('u', { apiVersion: 'apps/v1', kind: 'ReplicaSet' })] }), undefined, false, /ReplicaSet/],
    ['its Job is gone', pod({ ownerReferences: [jobRef('u')] }), undefined, true, /gone/],
    ['its Job\'s name holds a new Job', pod({ ownerReferences: [jobRef('old')] }), job('new'), true, /holds uid new/],
    ['its Job is live (adopted meanwhile)', pod({ ownerReferences: [jobRef('u')] }), job('u'), false, /live/],
    ['its Job completed', pod({ ownerReferences: [jobRef('u')] }), job('u', { status: finished('Complete') }), true, /finished/],
    ['its Job failed', pod({ ownerReferences: [jobRef('u')] }), job('u', { status: finished('Failed') }), true, /finished/],
    ['its finished Job is managed by another controller', pod({ ownerReferences: [jobRef('u')] }), job('u', { status: finished('Complete'), managedBy: 'example.com/other' }), false, /managed by example.com\/other/],
    ['a Job managed by this controller by name', pod({ ownerReferences: [jobRef('u')] }), job('u', { status: finished('Complete'), managedBy: 'kubernetes.io/job-controller' }), true, /finished/],
  ])('%s', (_what, p, j, release, why) => {
    const v = orphanVerdict(p, j);
    expect(v.release).toBe(release);
    expect(v.why).toMatch(why);
  });
});
