import { proxyActivities } from '@temporalio/workflow';
import type { ServiceAccountActivities } from '../../activities/serviceaccount/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { missingServiceAccounts } from './logic';
import { API_WRITES } from '../runtime/activity-options';

/** A namespace as the watch sees it: whether it is active and which ensured accounts it holds. */
export interface NamespaceAccountsEvent {
  active: boolean;
  present: string[];
}

export interface ServiceAccountWorkflowInput {
  namespace: string;
  tuning?: Partial<LoopTuning>;
}

export const serviceAccountWorkflowId = (namespace: string) => `serviceaccount/${namespace}`;

const io = proxyActivities<ServiceAccountActivities>(API_WRITES);

/**
 * One episode of "this namespace lacks its default ServiceAccount": started by the watch when an
 * account is missing, it creates what is missing and ends. A later deletion starts a new run
 * under the same ID, so the namespace's history reads as a list of repairs.
 */
export async function serviceAccountWorkflow(input: ServiceAccountWorkflowInput): Promise<void> {
  let seen: NamespaceAccountsEvent = { active: true, present: [] };

  async function reconcile(): Promise<ReconcileResult> {
    const missing = missingServiceAccounts(seen.active, seen.present);
    if (!missing.length) return { finished: true };
    const r = await io.createServiceAccounts({ namespace: input.namespace, names: missing, reason: `missing in namespace ${input.namespace}` });
    return r.failed.length ? { failed: true } : { finished: true };
  }

  await runObjectLoop<NamespaceAccountsEvent>({
    controller: 'serviceaccount',
    tuning: { ...DEFAULT_TUNING, ...input.tuning },
    apply(e) {
      seen = e;
    },
    reconcile,
    continueAsNewArgs: () => [input],
  });
}
