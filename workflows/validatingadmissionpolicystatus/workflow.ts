import { log, proxyActivities } from '@temporalio/workflow';
import type { CheckPolicyResult, VapStatusActivities } from '../../activities/validatingadmissionpolicystatus/activities';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, PolicyView, checkDue, checkReason } from './logic';

/** What the watch sends: the policy's generations whenever a check is due, or that it (this UID) was deleted. */
export type VapStatusEvent = { policy: PolicyView } | { deletedUid: string };

export interface VapStatusWorkflowInput {
  name: string;
  /** the policy this run checks; one recreated under the name gets a run of its own */
  uid: string;
  /** the generation that was due when the run was started */
  generation: number;
  tuning?: Partial<LoopTuning>;
}

export function vapStatusWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

/** The latest wins: each view is the policy's whole state as far as the controller cares. */
export function mergeVapStatusEvents(_earlier: VapStatusEvent, later: VapStatusEvent): VapStatusEvent {
  return later;
}

// the check reads discovery and OpenAPI documents, then writes: it heartbeats per step, so a
// replica killed mid-check is noticed in seconds
const io = proxyActivities<VapStatusActivities>(apiBatches('5 seconds'));

/**
 * One ValidatingAdmissionPolicy whose generation has not been type-checked: has the activity read
 * it, check its expressions against the kinds it matches and apply status.observedGeneration and
 * status.typeChecking; ends once the status observes the generation, or the policy is gone. A
 * policy changed between the read and the write (a conflict) is checked again at once; a newer
 * generation arriving during the check is folded in before the run ends.
 */
export async function vapStatusWorkflow(input: VapStatusWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let policy: PolicyView = { name: input.name, uid: input.uid, generation: input.generation, observedGeneration: 0 };
  let deleted = false;
  let last: CheckPolicyResult | undefined;
  let checks = 0;

  const id = objectIdentity<typeof vapStatusWorkflow>(input.uid, (next) => [{ ...input, uid: next }]);

  async function reconcile(): Promise<ReconcileResult> {
    if (deleted) return { finished: true };
    if (!checkDue(policy)) return { finished: true };
    checks++;
    last = await io.typeCheckPolicy({ reason: checkReason(policy), name: input.name, uid: policy.uid, generation: policy.generation });
    switch (last.outcome) {
      case 'gone':
        return { finished: true };
      case 'replaced':
        await id.handOverIfNew(last.uid!);
        return { finished: true };
      case 'conflict':
        // changed since the read: read and check it again
        log.info('policy changed during its check; checking again', { policy: input.name });
        policy = { ...policy, generation: Math.max(policy.generation, last.generation ?? 0) };
        return { requeueAfterMs: 0 };
      case 'up-to-date':
      case 'written':
        policy = { ...policy, generation: Math.max(policy.generation, last.generation ?? 0), observedGeneration: last.observedGeneration ?? policy.observedGeneration };
        return { finished: true };
    }
  }

  await runObjectLoop<VapStatusEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if ('deletedUid' in e) {
        if (e.deletedUid === policy.uid) deleted = true;
        return;
      }
      // a newer policy under the name is handed over at the next check (the read sees its UID)
      if (e.policy.uid !== policy.uid) return;
      policy = e.policy;
    },
    reconcile,
    describe: () => ({
      policy: input.name,
      uid: policy.uid,
      generation: policy.generation,
      observedGeneration: policy.observedGeneration,
      checkDue: checkDue(policy),
      checks,
      outcome: last?.outcome,
      kinds: last?.kinds,
      warnings: last?.warnings,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [{ ...input, uid: policy.uid, generation: policy.generation }],
  });
}
