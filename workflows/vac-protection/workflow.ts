import { proxyActivities } from '@temporalio/workflow';
import type { VacProtectionActivities } from '../../activities/vac-protection/activities';
import { protectionAction } from '../common/storage-protection';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, type VacView } from './logic';

/** What the watch sends: the class as it stands and whether a claim or volume in the watch names it. */
export interface VacProtectionEvent {
  vac: VacView;
  inUse: boolean;
}

export interface VacProtectionWorkflowInput {
  name: string;
  /** the class this run decides for; a class recreated under the name gets a run of its own */
  uid: string;
  /** the last event, carried over a continue-as-new */
  last?: VacProtectionEvent;
  tuning?: Partial<LoopTuning>;
}

export function vacProtectionWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

// a replica killed mid-write is noticed in 5 s (the write is quick; a pod list heartbeats per page), not after a minute
const io = proxyActivities<VacProtectionActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this VolumeAttributesClass's protection finalizer is due to be written": added
 * to a class without it, removed from a class being deleted that no claim or volume in the watch
 * names. The update carries the watch copy's resourceVersion; a class that changed meanwhile is
 * judged again by its next event.
 */
export async function vacProtectionWorkflow(input: VacProtectionWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let seen: VacProtectionEvent | undefined = input.last;
  const id = objectIdentity<typeof vacProtectionWorkflow>(input.uid, (uid) => [{ ...input, uid, last: seen }]);
  let last = '';

  async function reconcile(): Promise<ReconcileResult> {
    if (!seen) return { finished: true };
    const { vac, inUse } = seen;
    await id.handOverIfNew(vac.uid);
    id.learn(vac.uid);
    const action = protectionAction(vac, () => inUse);
    if (action === 'none' || action === 'keep') {
      last = action === 'keep' ? 'kept: in use' : 'nothing to write';
      return { finished: true };
    }
    const add = action === 'add';
    const r = await io.setVacProtection({
      reason: add ? 'the class is not being deleted and lacks kubernetes.io/vac-protection'
        : 'the class is being deleted and no claim or volume names it: kubernetes.io/vac-protection goes',
      name: vac.name, uid: vac.uid, resourceVersion: vac.resourceVersion, present: add,
    });
    last = `${action}: ${r.outcome}`;
    return { finished: true };
  }

  await runObjectLoop<VacProtectionEvent>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      seen = e;
    },
    reconcile,
    describe: () => ({ vac: seen?.vac.name, deleting: seen?.vac.deleting, protected: seen?.vac.protected, inUse: seen?.inUse, last }),
    continueAsNewArgs: () => [{ ...input, last: seen }],
  });
}
