import { proxyActivities } from '@temporalio/workflow';
import type { JobActivities } from '../../activities/job/activities';
import { POD_BATCHES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';

/** What the watch sends: the pod looks orphaned, and why (its cache's view; the release reads again). */
export interface OrphanPodEvent {
  uid: string;
  resourceVersion: string;
  why: string;
}

export interface OrphanPodWorkflowInput {
  namespace: string;
  /** the pod's name */
  name: string;
  /** the pod this run is for; a pod recreated under the name gets a run of its own */
  uid: string;
  /** the event not yet acted on, carried over a continue-as-new */
  pending?: OrphanPodEvent;
  tuning?: Partial<LoopTuning>;
}

/**
 * Keyed by the pod, as upstream's orphan queue is: a release never shares an ID with a Job's own
 * workflow (`job/<namespace>/<name>`, three parts; this has four), and a later Job reusing the
 * deleted one's name is not held up by it.
 */
export function orphanPodWorkflowId(namespace: string, pod: string): string {
  return `job/orphan-pod/${namespace}/${pod}`;
}

const io = proxyActivities<JobActivities>(POD_BATCHES);

/**
 * One episode of "this pod holds the job-tracking finalizer and no live Job will remove it":
 * re-read the pod and its Job from the API, and drop the finalizer if upstream's orphan worker
 * would. A pod that changed meanwhile is judged again by the event its change produces.
 */
export async function jobOrphanPodWorkflow(input: OrphanPodWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let pending: OrphanPodEvent | undefined = input.pending;
  const id = objectIdentity<typeof jobOrphanPodWorkflow>(input.uid, (uid) => [{ ...input, uid, pending }]);
  let last = '';
  let why = '';

  async function reconcile(): Promise<ReconcileResult> {
    const e = pending;
    if (!e) return { finished: true };
    await id.handOverIfNew(e.uid);
    pending = undefined;
    why = e.why;
    const r = await io.releaseOrphanPod({ namespace: input.namespace, name: input.name, uid: e.uid, reason: e.why });
    last = `${r.outcome}: ${r.why}`;
    return { finished: true };
  }

  await runObjectLoop<OrphanPodEvent>({
    controller: 'job',
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      pending = e;
    },
    reconcile,
    describe: () => ({ pod: `${input.namespace}/${input.name}`, uid: id.uid, orphanedBecause: why || pending?.why, last }),
    continueAsNewArgs: () => [{ ...input, pending } satisfies OrphanPodWorkflowInput],
  });
}
