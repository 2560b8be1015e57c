import { log, proxyActivities } from '@temporalio/workflow';
import type { PvcProtectionActivities } from '../../activities/pvc-protection/activities';
import { protectionNeed } from '../common/storage-protection';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, type PvcView } from './logic';

/** What the watch sends: the claim as it stands, whenever a write may be due for it. */
export interface PvcProtectionEvent {
  pvc: PvcView;
}

export interface PvcProtectionWorkflowInput {
  namespace: string;
  name: string;
  /** the claim this run decides for; a claim recreated under the name gets a run of its own */
  uid: string;
  /** the claim as last seen, carried over a continue-as-new */
  pvc?: PvcView;
  tuning?: Partial<LoopTuning>;
}

export function pvcProtectionWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

// a replica killed mid-write is noticed in 5 s (the write is quick; a pod list heartbeats per page), not after a minute
const io = proxyActivities<PvcProtectionActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this claim may need its protection finalizer written": the watch starts it for
 * a claim without the finalizer, or for one being deleted that no pod in the watch uses. A claim
 * being deleted is checked against a live list of its namespace's pods, as upstream's
 * askAPIServer does, and the finalizer goes only if no pod uses it. The run ends once it has
 * written or found nothing to write; the next pod or claim event that may free it starts another.
 */
export async function pvcProtectionWorkflow(input: PvcProtectionWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvcProtectionWorkflow>(input.uid, (uid) => [{ ...input, uid, pvc }]);
  let pvc: PvcView | undefined = input.pvc;
  let last = '';

  async function reconcile(): Promise<ReconcileResult> {
    // every run starts from a signal, which carries the claim; there is nothing to decide without it
    if (!pvc) return { finished: true };
    await id.handOverIfNew(pvc.uid);
    id.learn(pvc.uid);
    const need = protectionNeed(pvc);
    if (need === 'none') {
      last = 'nothing to write';
      return { finished: true };
    }
    if (need === 'check-use') {
      const use = await io.findPodUsingPvc({ reason: 'the claim is being deleted and no pod in the watch uses it: a live list of the namespace\'s pods decides', pvc });
      if (use.pod) {
        last = `kept: used by pod ${use.pod}`;
        log.info('keeping PVC because it is being used', { pod: use.pod });
        return { finished: true };
      }
    }
    const add = need === 'add';
    const r = await io.setPvcProtection({
      reason: add ? 'the claim is not being deleted and lacks kubernetes.io/pvc-protection'
        : 'the claim is being deleted and no pod uses it: kubernetes.io/pvc-protection goes',
      namespace: pvc.namespace, name: pvc.name, uid: pvc.uid, resourceVersion: pvc.resourceVersion, present: add,
    });
    last = `${add ? 'add' : 'remove'}: ${r.outcome}`;
    // a conflict means the claim changed: its watch event judges it again (and reaches this run if it is still going)
    return { finished: true };
  }

  await runObjectLoop<PvcProtectionEvent>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      pvc = e.pvc;
    },
    reconcile,
    describe: () => ({
      pvc: pvc ? `${pvc.namespace}/${pvc.name}` : undefined,
      deleting: pvc?.deleting,
      protected: pvc?.protected,
      need: pvc ? protectionNeed(pvc) : undefined,
      last,
    }),
    continueAsNewArgs: () => [{ ...input, pvc }],
  });
}
