import { proxyActivities } from '@temporalio/workflow';
import type { PvExpanderActivities } from '../../activities/pv-expander/activities';
import { API_WRITES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, changedSince, planExpansion, type ExpansionClaim } from './logic';
import { isPatched } from '../runtime/patches';

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
 * How long a run stays after its report: well past a watch takeover (the heartbeat timeout, 3 s
 * by default, plus a list at the inherited position), so a change sent again by the new holder
 * finds the run that reported it.
 */
const LINGER_MS = 60_000;

/**
 * One claim asking for more storage, synced as upstream's expand controller syncs it once per
 * event: its volume read, then an ExternalExpanding Event (and, for a volume migrated to CSI,
 * the resizer annotation). A sync that cannot read or match the volume retries with backoff; a
 * sync with nothing to do ends the run, one that reported ends it a minute later (LINGER_MS), and
 * the watch starts another when the claim grows again.
 */
export async function pvExpanderWorkflow(input: PvExpanderWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof pvExpanderWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let outcome = '';
  /** the resourceVersion of the newest claim change signalled since the last sync ('' when the event had none) */
  let signalled: string | undefined;
  /** after a report: the change it was for, and until when the run stays to recognise that change sent again */
  let reported: { resourceVersion: string; until: number } | undefined;

  async function reconcile(): Promise<ReconcileResult> {
    const event = signalled;
    signalled = undefined;
    if (reported && (event === undefined || !changedSince(event, reported.resourceVersion))) {
      // the lingering run's own timer, or a change up to the one it reported sent again by a new informer holder
      const left = reported.until - Date.now();
      return left > 0 ? { requeueAfterMs: left } : { finished: true };
    }
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
    // A new holder of the watch resumes from the last position its predecessor heartbeated, up to a
    // second or two behind what it had sent, so a claim change signalled just before a replica died
    // comes again, and would be synced (and reported) twice. The run stays a while after a report
    // and takes that change, by its resourceVersion, as the one reported; a newer change is synced
    // as usual. Histories recorded before this ended at once, hence the patch.
    if (!isPatched('pv-expander-lingers')) return { finished: true };
    reported = { resourceVersion: event ?? seen.claim.resourceVersion ?? '', until: Date.now() + LINGER_MS };
    return { requeueAfterMs: LINGER_MS };
  }

  await runObjectLoop<ExpansionEvent>({
    controller: CONTROLLER,
    tuning,
    apply: (e) => {
      signalled = e.claim.resourceVersion ?? '';
    },
    reconcile,
    describe: () => ({ outcome: outcome || undefined, ...(reported ? { reportedResourceVersion: reported.resourceVersion, lingersUntil: new Date(reported.until).toISOString() } : {}) }),
    continueAsNewArgs: () => [input],
  });
}
