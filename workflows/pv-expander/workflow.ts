import { proxyActivities } from '@temporalio/workflow';
import type { PvExpanderActivities } from '../../activities/pv-expander/activities';
import { API_WRITES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, planExpansion, type ExpansionClaim } from './logic';

export interface PvExpanderWorkflowInput {
  namespace: string;
  name: string;
  uid: string;
  tuning?: Partial<LoopTuning>;
}

/** The claim as the watch saw it when it asked for a sync. */
export interface ExpansionEvent {
  claim: ExpansionClaim;
}

export const pvExpanderWorkflowId = (namespace: string, name: string) => `${CONTROLLER}/${namespace}/${name}`;
export const mergeExpansionEvents = (_earlier: ExpansionEvent, later: ExpansionEvent): ExpansionEvent => later;

const io = proxyActivities<PvExpanderActivities>(API_WRITES);

/**
 * One claim asking for more storage, synced as upstream's expand controller syncs it once per
 * event: its volume read, then an ExternalExpanding Event (and, for a volume migrated to CSI,
 * the resizer annotation). A sync that cannot read or match the volume retries with backoff; a
 * done sync ends the run, and the watch starts another when the claim grows again.
 */
export async function pvExpanderWorkflow(input: PvExpanderWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvExpanderWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let outcome = '';

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await io.observeExpansion({ namespace: input.namespace, name: input.name });
    if (!seen) return { finished: true };
    await id.handOverIfNew(seen.claim.uid);
    id.learn(seen.claim.uid);
    const plan = planExpansion(seen.claim, seen.volume);
    outcome = plan.kind;
    if (plan.kind === 'none') return { finished: true };
    if (plan.kind === 'error') return { failed: true, error: plan.error };
    await io.reportExpansion({ claim: seen.claim, message: plan.message, ...(plan.kind === 'migrated' ? { resizer: plan.resizer } : {}),
      reason: plan.kind === 'migrated' ? 'the volume\'s in-tree plugin migrated to CSI: its resizer expands it' : 'no in-tree plugin expands this volume: an external controller does' });
    return { finished: true };
  }

  await runObjectLoop<ExpansionEvent>({
    controller: CONTROLLER,
    tuning,
    apply: () => undefined,
    reconcile,
    describe: () => ({ outcome: outcome || undefined }),
    continueAsNewArgs: () => [input],
  });
}
