import { log, proxyActivities } from '@temporalio/workflow';
import type { TtlAfterFinishedActivities } from '../../activities/ttl-after-finished/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { CONTROLLER, JobTtlView, TtlDecision, decideTtl } from './logic';
import { API_WRITES } from '../runtime/activity-options';

/** What the watch sends: the Job as it stands, whenever something timing reads changed. */
export interface TtlAfterFinishedEvent {
  job: JobTtlView;
}

export interface TtlAfterFinishedWorkflowInput {
  namespace: string;
  name: string;
  /** the Job this run times; a Job recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function ttlAfterFinishedWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

/** The latest view wins: each one is the whole Job as timing sees it. */
export function mergeTtlAfterFinishedEvents(_earlier: TtlAfterFinishedEvent, later: TtlAfterFinishedEvent): TtlAfterFinishedEvent {
  return later;
}

const io = proxyActivities<TtlAfterFinishedActivities>(API_WRITES);

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One finished Job with a TTL: waits, on a durable timer, until its TTL after finishing runs out,
 * then reads it live and, if it is still finished and expired by its current TTL, deletes it in the
 * foreground. A TTL edited meanwhile re-arms the timer; the run ends once the Job is deleted, gone,
 * or no longer wants cleaning up.
 */
export async function ttlAfterFinishedWorkflow(input: TtlAfterFinishedWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const uid = input.uid;
  let job: JobTtlView | undefined;
  /** woken by the watch since the last reconcile (else by a timer, when the view may be stale) */
  let signalled = false;
  let warnedSkew = false;

  // a recreated Job gets a run of its own
  const id = objectIdentity<typeof ttlAfterFinishedWorkflow>(uid, (next) => [{ ...input, uid: next }]);
  // objectIdentity publishes now; this call stays for runs recorded before it did (it is a no-op after)
  id.publish();

  function decide(view: JobTtlView): TtlDecision {
    const d = decideTtl(view, Date.now());
    if (d.kind !== 'wait' && d.kind !== 'expired') return d;
    if (d.clock.finishedInFuture && !warnedSkew) {
      warnedSkew = true;
      log.warn('Job finished in the future, likely clock skew in the cluster; cleanup is deferred', {
        job: `${view.namespace}/${view.name}`, finishTime: iso(d.clock.finishAtMs),
      });
    }
    return d;
  }

  async function reconcile(): Promise<ReconcileResult> {
    const byWatch = signalled;
    signalled = false;
    // Without a view, or woken by a timer other than the expiry (resync, backoff), the view may be
    // stale: read the Job, so that one deleted meanwhile ends its run before its TTL would have.
    if (!job || (!byWatch && decideTtl(job, Date.now()).kind !== 'expired')) {
      job = await io.readFinishedJob({ namespace: input.namespace, name: input.name });
      if (!job) return { finished: true };
    }
    await id.handOverIfNew(job.uid);

    const first = decide(job);
    if (first.kind === 'done') return { finished: true };
    if (first.kind === 'error') {
      log.warn('cannot time job', { error: first.error });
      return { failed: true };
    }
    if (first.kind === 'wait') return { requeueAfterMs: first.ms };

    // The watch's TTL may be stale (edited since): decide again on the Job as it is now.
    const fresh = await io.readFinishedJob({ namespace: input.namespace, name: input.name });
    if (!fresh) return { finished: true };
    job = fresh;
    await id.handOverIfNew(fresh.uid);
    const d = decide(fresh);
    if (d.kind === 'done') return { finished: true };
    if (d.kind === 'error') {
      log.warn('cannot time job', { error: d.error });
      return { failed: true };
    }
    if (d.kind === 'wait') return { requeueAfterMs: d.ms };

    const r = await io.deleteExpiredJob({ namespace: input.namespace, name: input.name, uid, expiredAt: iso(d.clock.expireAtMs) });
    // replaced: the next reconcile reads the newcomer and continues as new for it
    return r.outcome === 'replaced' ? { requeueAfterMs: 0 } : { finished: true };
  }

  await runObjectLoop<TtlAfterFinishedEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      job = e.job;
      signalled = true;
    },
    reconcile,
    continueAsNewArgs: () => [input],
  });
}
