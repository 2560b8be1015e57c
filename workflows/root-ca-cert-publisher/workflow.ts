import { proxyActivities } from '@temporalio/workflow';
import type { RootCaActivities } from '../../activities/root-ca-cert-publisher/activities';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { RootCaConfigMapView, rootCaWriteNeeded } from './logic';
import { API_WRITES } from '../runtime/activity-options';

export interface RootCaEvent {
  active: boolean;
  configMap?: RootCaConfigMapView;
}

export interface RootCaWorkflowInput extends CarriedSignals<RootCaEvent> {
  namespace: string;
  /** digest of the bundle to publish (a public certificate's hash, safe in history) */
  caSha256: string;
  tuning?: Partial<LoopTuning>;
}

export const rootCaWorkflowId = (namespace: string) => `root-ca-cert-publisher/${namespace}`;

const io = proxyActivities<RootCaActivities>(API_WRITES);

/**
 * One episode of "this namespace's kube-root-ca.crt is missing or differs": started by the watch
 * when that is so, it writes the ConfigMap and ends; the next drift is a new run.
 */
export async function rootCaWorkflow(input: RootCaWorkflowInput): Promise<void> {
  let seen: RootCaEvent = { active: true };

  async function reconcile(): Promise<ReconcileResult> {
    const write = rootCaWriteNeeded(seen.active, seen.configMap, input.caSha256);
    if (!write) return { finished: true };
    const reason = write === 'create' ? 'missing' : 'content or description differs from the root CA';
    const r = await io.publishRootCa({ namespace: input.namespace, write, reason });
    return r.outcome === 'failed' ? { failed: true } : { finished: true };
  }

  await runObjectLoop<RootCaEvent>({
    controller: 'root-ca-cert-publisher',
    tuning: { ...DEFAULT_TUNING, ...input.tuning },
    apply(e) {
      seen = e;
    },
    reconcile,
    // the ConfigMap comes only as signals: those pending at the history ceiling go to the next run
    carries: input,
    continueAsNewArgs: () => [input],
  });
}
