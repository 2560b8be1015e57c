import { proxyActivities } from '@temporalio/workflow';
import type { JobActivities, JobRef } from '../../activities/job/activities';
import { selectorError, selectorMatches } from '../common/selector';
import { podName, slowStartBatches } from '../replicaset/logic';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import type { JobStatus } from './api';
import type { BackoffRecord } from './backoff';
import { indexedPodGenerateName } from './indexes';
import {
  assessSync,
  finishTracking,
  isJobFinished,
  managedByOther,
  planTracking,
  type Assessment,
  type BackoffTuning,
  type JobEventRecord,
  type ManageOutcome,
} from './logic';
import type { JobEvent, JobPod, JobView } from './types';
import { newerVersion } from '../common/resource-version';
import { POD_BATCHES } from '../runtime/activity-options';

export interface JobWorkflowInput {
  namespace: string;
  name: string;
  /** the Job this run belongs to; a run started by a signal learns it on first observation */
  uid?: string;
  /** next pod-name sequence number, carried across continue-as-new so names never repeat */
  nextSeq?: number;
  /** the pod failure backoff record (upstream keeps it in memory; here it survives restarts) */
  backoff?: BackoffRecord;
  tuning?: Partial<LoopTuning>;
  /** pod failure backoff, upstream's 10 s doubling to 10 min unless a test shortens it */
  podFailureBackoff?: BackoffTuning;
}

// every activity here heartbeats per API call, so a replica killed mid-batch is noticed in seconds
const io = proxyActivities<JobActivities>(POD_BATCHES);

/** One Job: runs its pods to completion (or failure) and keeps its status counted exactly once. */
export async function jobWorkflow(input: JobWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const key = { namespace: input.namespace, name: input.name };
  // A new object with this name gets a fresh run (same workflow ID), never this run's state.
  const id = objectIdentity<typeof jobWorkflow>(input.uid, (next) => [{ ...input, uid: next, nextSeq: 0, backoff: undefined }]);
  let nextSeq = input.nextSeq ?? 0;
  let backoff: BackoffRecord = input.backoff ?? { failuresAfterLastSuccess: 0 };
  let job: JobView | undefined;
  /** pods this Job controls, by UID */
  const pods = new Map<string, JobPod>();
  /** UIDs we deleted: a late event about them must not bring them back */
  const deletedByUs = new Set<string>();
  /**
   * UIDs whose tracking finalizer we removed (upstream's finalizer-removal expectations): a late
   * watch event still showing the finalizer must not bring it back, or the pod would be counted
   * a second time.
   */
  const released = new Set<string>();
  let needObserve = true;
  let jobGone = false;

  const ownerUid = () => job?.uid ?? id.uid;

  function upsertPod(p: JobPod): void {
    if (deletedByUs.has(p.uid) && !p.deletionTimestamp) return;
    if (released.has(p.uid)) {
      if (p.hasTrackingFinalizer) return;
      released.delete(p.uid);
    }
    const known = pods.get(p.uid);
    if (known && newerVersion(known.resourceVersion, p.resourceVersion)) return;
    const ref = p.ownerReferences.find((r) => r.controller);
    if (ref && ref.uid === ownerUid()) {
      pods.set(p.uid, p);
      // controlled but no longer selected: the observation releases it, as upstream's claim does
      if (job && !selectorMatches(job.selector, p.labels)) needObserve = true;
      return;
    }
    pods.delete(p.uid);
    // a selected orphan: the observation adopts it
    if (!ref && !p.deletionTimestamp && job && !job.deletionTimestamp && selectorMatches(job.selector, p.labels)) needObserve = true;
  }

  function noteReleased(podUid: string, after: JobPod | undefined): void {
    released.add(podUid);
    if (after) pods.set(podUid, after);
    else pods.delete(podUid);
  }

  async function newUid(next: string): Promise<never> {
    if (id.uid) await io.releaseJobPods({ namespace: input.namespace, jobUid: id.uid, reason: 'the Job was replaced by a new one with the same name' });
    return id.handOver(next);
  }

  function ref(j: JobView): JobRef {
    return { namespace: j.namespace, name: j.name, uid: j.uid, resourceVersion: j.resourceVersion };
  }

  /** Status write; false when it lost a race (re-observe) or the Job is gone. */
  async function writeStatus(status: JobStatus, events: JobEventRecord[], reason: string): Promise<boolean> {
    const current = job as JobView;
    const r = await io.updateJobStatus({ job: ref(current), status, events, reason });
    if (!r.updated) {
      needObserve = true;
      return false;
    }
    job = { ...current, resourceVersion: r.resourceVersion, status };
    return true;
  }

  async function manage(a: Assessment): Promise<ManageOutcome | undefined> {
    const current = a.job;
    const outcome: ManageOutcome = { deleted: 0, deletedReady: 0, created: 0, failed: false };
    const m = a.manage;
    if (m.kind === 'delete') {
      const r = await io.deleteJobPods({
        job: ref(current),
        pods: m.pods.map((p) => ({ name: p.name, uid: p.uid })),
        removeFinalizer: m.reason !== 'JobFinished',
        reason: `${m.reason}: ${m.message}`,
      });
      const readyUids = new Set(m.pods.filter((p) => p.ready).map((p) => p.uid));
      for (const d of r.deleted) {
        if (m.reason !== 'JobFinished') released.add(d.uid);
        outcome.deleted++;
        if (readyUids.has(d.uid)) outcome.deletedReady++;
        if (d.pod) pods.set(d.uid, d.pod);
        else {
          pods.delete(d.uid);
          deletedByUs.add(d.uid);
        }
      }
      outcome.failed = r.failed.length > 0;
    } else if (m.kind === 'create') {
      // Slow start: 1, 2, 4, ... pods per batch; a failing batch stops the rest, so a broken
      // template or an exhausted quota costs a handful of rejected calls, not hundreds.
      const batches = slowStartBatches(m.count);
      let offset = 0;
      for (const [i, size] of batches.entries()) {
        const want = Array.from({ length: size }, (_, k) => {
          const ix = m.indexes?.[offset + k];
          const base = ix ? indexedPodGenerateName(current.name, ix.index).slice(0, -1) : current.name;
          return { ...ix, name: podName(base, current.uid, nextSeq++) };
        });
        offset += size;
        const r = await io.createJobPods({ job: ref(current), pods: want, reason: `${m.message}: slow-start batch ${i + 1} of ${batches.length}` });
        if (r.jobGone) {
          needObserve = true;
          return undefined;
        }
        for (const p of r.created) pods.set(p.uid, p);
        outcome.created += r.created.length;
        if (r.failed.length) {
          outcome.failed = true;
          break;
        }
      }
    }
    return outcome;
  }

  async function reconcile(): Promise<ReconcileResult> {
    // A delete event ends this run, after one last look: the name may already hold a new object.
    if (needObserve || !job || jobGone) {
      const seen = await io.observeJob(key);
      if (!seen.job) {
        const gone = ownerUid();
        if (gone) await io.releaseJobPods({ namespace: input.namespace, jobUid: gone, reason: 'the Job was deleted' });
        return { finished: true };
      }
      if (id.isNew(seen.job.uid)) await newUid(seen.job.uid);
      job = seen.job;
      pods.clear();
      for (const p of seen.pods) pods.set(p.uid, p);
      for (const d of [...deletedByUs]) if (!pods.has(d)) deletedByUs.delete(d);
      // a fresh list is the truth about finalizers
      released.clear();
      needObserve = false;
      jobGone = false;
    }
    id.learn(job.uid);
    const current = job;
    // another controller (spec.managedBy) owns it; an invalid selector cannot be reconciled at all
    if (managedByOther(current) !== undefined || selectorError(current.selector) !== undefined) return {};
    const owned = [...pods.values()].filter((p) => p.ownerReferences.some((r) => r.controller && r.uid === current.uid));

    if (isJobFinished(current)) {
      // pods adopted or left over after the end: nothing will count them any more
      const held = owned.filter((p) => p.hasTrackingFinalizer);
      if (held.length) {
        const r = await io.removeTrackingFinalizers({ job: ref(current), pods: held.map((p) => ({ name: p.name, uid: p.uid })), reason: 'the Job has finished' });
        for (const d of r.removed) noteReleased(d.uid, d.pod);
        if (r.failed.length) return { failed: true };
      }
      return {};
    }

    const a = assessSync({ job: current, pods: owned, backoff, nowMs: Date.now(), backoffTuning: input.podFailureBackoff });
    const outcome = await manage(a);
    if (!outcome) return { requeueAfterMs: 0 };

    const plan = planTracking(a, outcome);
    // plan.status also carries what upstream changes without forcing a write (e.g. startTime):
    // it rides along with whichever write comes next in this sync.
    if (plan.needsFlush) {
      if (!(await writeStatus(plan.status, plan.events, 'record newly finished pods before releasing them'))) return { requeueAfterMs: 0 };
      backoff = a.newBackoffRecord;
    }

    const removed = new Set<string>();
    let removalFailed = false;
    if (plan.finalizerRemovals.length) {
      const r = await io.removeTrackingFinalizers({
        job: ref(job as JobView),
        pods: plan.finalizerRemovals.map((p) => ({ name: p.name, uid: p.uid })),
        reason: 'finished pods recorded in uncountedTerminatedPods',
      });
      for (const d of r.removed) {
        removed.add(d.uid);
        noteReleased(d.uid, d.pod);
      }
      removalFailed = r.failed.length > 0;
    }

    const fin = finishTracking(plan, plan.status, removed, removalFailed, Date.now());
    if (fin.needsFlush) {
      const why = fin.finished ? 'the Job finished' : 'count pods whose finalizer is gone';
      if (!(await writeStatus(fin.status, fin.events, why))) return { requeueAfterMs: 0 };
    }
    if (outcome.failed || removalFailed) return { failed: true };
    if (needObserve) return { requeueAfterMs: 0 };
    return a.requeueAfterMs !== undefined ? { requeueAfterMs: a.requeueAfterMs } : {};
  }

  await runObjectLoop<JobEvent>({
    controller: 'job',
    tuning,
    reread() {
      // --shadow: the pods it created or deleted, and its status, were dry runs
      needObserve = true;
      deletedByUs.clear();
    },
    apply(e) {
      if (e.relist) needObserve = true;
      if (e.jobDeletedUid && e.jobDeletedUid === ownerUid()) jobGone = true;
      if (e.job) {
        if (id.isNew(e.job.uid)) {
          needObserve = true; // the reconcile will see the new UID and hand over to a new run
        } else if (!job || !newerVersion(job.resourceVersion, e.job.resourceVersion)) {
          job = e.job;
        }
      }
      for (const p of e.pods ?? []) upsertPod(p);
      for (const u of e.podsDeleted ?? []) {
        pods.delete(u);
        deletedByUs.delete(u);
        released.delete(u);
      }
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid, nextSeq, backoff } satisfies JobWorkflowInput],
    // a new run starts with needObserve: its first reconcile reads the Job and its pods
    rereadsOnNewRun: true,
    describe: () => {
      const mine = [...pods.values()].filter((p) => p.ownerReferences.some((r) => r.controller && r.uid === job?.uid));
      const uncounted = job?.status.uncountedTerminatedPods;
      return {
        uid: job?.uid ?? id.uid,
        completions: job?.completions,
        parallelism: job?.parallelism,
        suspended: job?.suspend,
        finished: job ? isJobFinished(job) : undefined,
        activePods: mine.filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed' && !p.deletionTimestamp).length,
        podsHoldingFinalizer: mine.filter((p) => p.hasTrackingFinalizer).length,
        statusSucceeded: job?.status.succeeded ?? 0,
        statusFailed: job?.status.failed ?? 0,
        uncounted: (uncounted?.succeeded?.length ?? 0) + (uncounted?.failed?.length ?? 0),
        failuresAfterLastSuccess: backoff.failuresAfterLastSuccess,
        lastFailureAt: backoff.lastFailureTimeMs !== undefined ? new Date(backoff.lastFailureTimeMs).toISOString() : undefined,
      };
    },
  });
}
