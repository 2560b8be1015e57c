import { proxyActivities } from '@temporalio/workflow';
import type { PvProtectionActivities } from '../../activities/pv-protection/activities';
import { protectionAction, type ProtectionAction } from '../common/storage-protection';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, pvInUse, type PvView } from './logic';

/** What the watch sends: the volume as it stands, whenever a write is due for it. */
export interface PvProtectionEvent {
  pv: PvView;
}

export interface PvProtectionWorkflowInput {
  name: string;
  /** the volume this run decides for; a volume recreated under the name gets a run of its own */
  uid: string;
  /** the volume as last seen, carried over a continue-as-new */
  pv?: PvView;
  tuning?: Partial<LoopTuning>;
}

export function pvProtectionWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

// a replica killed mid-write is noticed in 5 s (the write is quick; a pod list heartbeats per page), not after a minute
const io = proxyActivities<PvProtectionActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this volume's protection finalizer is due to be written": added to a volume
 * without it, removed from a volume being deleted that is not Bound. Upstream's sync decides
 * from its informer's copy, and so does this run, from the watch's; the update carries that
 * copy's resourceVersion, so a volume that changed meanwhile is judged again by its next event.
 */
export async function pvProtectionWorkflow(input: PvProtectionWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvProtectionWorkflow>(input.uid, (uid) => [{ ...input, uid, pv }]);
  let pv: PvView | undefined = input.pv;
  let last = '';

  async function reconcile(): Promise<ReconcileResult> {
    if (!pv) return { finished: true };
    await id.handOverIfNew(pv.uid);
    id.learn(pv.uid);
    const action: ProtectionAction = protectionAction(pv, () => pvInUse(pv!));
    if (action === 'none' || action === 'keep') {
      last = action === 'keep' ? 'kept: Bound' : 'nothing to write';
      return { finished: true };
    }
    const add = action === 'add';
    const r = await io.setPvProtection({
      reason: add ? 'the volume is not being deleted and lacks kubernetes.io/pv-protection'
        : `the volume is being deleted and is not Bound (phase ${pv.phase || 'unset'}): kubernetes.io/pv-protection goes`,
      name: pv.name, uid: pv.uid, resourceVersion: pv.resourceVersion, present: add,
    });
    last = `${action}: ${r.outcome}`;
    return { finished: true };
  }

  await runObjectLoop<PvProtectionEvent>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      pv = e.pv;
    },
    reconcile,
    describe: () => ({ pv: pv?.name, phase: pv?.phase, deleting: pv?.deleting, protected: pv?.protected, last }),
    continueAsNewArgs: () => [{ ...input, pv }],
  });
}
