import { log, proxyActivities } from '@temporalio/workflow';
import type { HpaActivities, HpaObservation } from '../../activities/hpa/activities';
import { apiBatches } from '../runtime/activity-options';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { finishSync, planSync, scaleReadFailed, type SyncInput, type SyncResult } from './logic';
import { emptyHistory, type HpaHistory } from './types';

export const CONTROLLER = 'hpa';

/** What the watch sends: why it looked. The workflow keeps its own clock; a signal never brings a sync forward. */
export interface HpaNudge {
  reason: string;
}

export interface HpaWorkflowInput {
  namespace: string;
  name: string;
  /** the first sync waits this long (upstream delays every enqueue of an HPA by the sync period) */
  syncPeriodMs: number;
  /** carried across continue-as-new: the stabilization window's recommendations and the scale events */
  history?: HpaHistory;
  nextSyncAtMs?: number;
  tuning?: Partial<LoopTuning>;
}

export function hpaWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

export const mergeHpaNudges = (earlier: HpaNudge, later: HpaNudge): HpaNudge =>
  earlier.reason === later.reason ? later : { reason: `${earlier.reason}; ${later.reason}` };

// a sync is a handful of reads and at most two writes; a replica killed mid-sync is noticed in 10 s
const io = proxyActivities<HpaActivities>(apiBatches('10 seconds'));

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The sync's input from what observeHpa read; undefined when the scale could not be read. */
function syncInputOf(obs: HpaObservation, history: HpaHistory, nowMs: number): SyncInput | undefined {
  const hpa = obs.hpa;
  const scale = obs.scale;
  if (!hpa || !scale || !scale.ok) return undefined;
  const input: SyncInput = { spec: hpa.spec, status: hpa.status, currentReplicas: scale.replicas, history, config: obs.config, nowMs };
  if (obs.selector) input.selector = obs.selector;
  if (obs.metrics) input.metrics = obs.metrics;
  return input;
}

/**
 * One HorizontalPodAutoscaler, for as long as it exists (upstream's reconcileAutoscaler, run
 * every --horizontal-pod-autoscaler-sync-period). Each sync reads the HPA, its target's scale,
 * the pods and the metrics in one activity, decides with the pure layer, updates the scale when
 * the count changes, then records the Events and writes the status if it changed.
 *
 * What upstream keeps in memory and loses on a restart — the recommendations of the
 * stabilization window and the scale events the behavior policies count — is this workflow's
 * state, carried across continue-as-new, so a failover never forgets the window and never scales
 * down early. The HPA is followed by name: one deleted and re-created between two syncs keeps the
 * history, as upstream's map keyed by namespace/name does; one gone at a sync ends the run.
 */
export async function hpaWorkflow(input: HpaWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let history: HpaHistory = input.history ?? emptyHistory();
  let nextSyncAt = input.nextSyncAtMs ?? Date.now() + input.syncPeriodMs;
  let lastReason = '';
  let target = '';
  let current: number | undefined;
  let desired: number | undefined;
  let lastSync = '';
  let lastError = '';
  let syncs = 0;
  let rescales = 0;

  async function sync(): Promise<ReconcileResult> {
    const obs = await io.observeHpa({ namespace: input.namespace, name: input.name });
    if (!obs.hpa) return { finished: true };
    const hpa = obs.hpa;
    const ref = hpa.spec.scaleTargetRef;
    target = `${ref.kind}/${ref.name}`;
    const nowMs = Date.now();
    let result: SyncResult;
    const syncInput = syncInputOf(obs, history, nowMs);
    if (!syncInput) {
      result = scaleReadFailed(hpa.status, history, obs.scale && !obs.scale.ok ? obs.scale.error : 'scale was not read', nowMs);
    } else {
      const plan = planSync(syncInput);
      let outcome;
      if (plan.rescale && !plan.status && obs.scale?.ok) {
        outcome = await io.rescaleHpaTarget({
          reason: plan.reason,
          namespace: input.namespace,
          hpa: input.name,
          scalePath: obs.scale.path,
          groupResource: obs.scale.groupResource,
          desiredReplicas: plan.desiredReplicas,
        });
        if (outcome.ok) rescales++;
      }
      result = finishSync(syncInput, plan, outcome);
    }
    history = result.history;
    current = result.status.currentReplicas;
    desired = result.status.desiredReplicas;
    const fin = await io.finishHpaSync({
      reason: result.error ? `sync ended with: ${result.error}` : 'the sync period passed',
      namespace: input.namespace,
      name: input.name,
      uid: hpa.uid,
      status: result.status,
      events: result.events,
    });
    if (fin.outcome === 'gone') return { finished: true };
    lastError = fin.outcome === 'failed' ? fin.error : result.error ?? '';
    if (lastError) log.info('hpa sync ended with an error', { error: lastError });
    syncs++;
    lastSync = iso(Date.now());
    nextSyncAt = Date.now() + obs.syncPeriodMs;
    return { requeueAfterMs: obs.syncPeriodMs };
  }

  await runObjectLoop<HpaNudge>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      lastReason = e.reason;
    },
    async reconcile() {
      // a signal wakes the loop early; the sync keeps to its period, as upstream's queue does
      const wait = nextSyncAt - Date.now();
      if (wait > 0) return { requeueAfterMs: wait };
      return sync();
    },
    describe: () => ({
      hpa: `${input.namespace}/${input.name}`,
      target: target || undefined,
      currentReplicas: current,
      desiredReplicas: desired,
      syncs,
      rescales,
      lastSync: lastSync || undefined,
      nextSync: iso(nextSyncAt),
      recommendations: history.recommendations.map((r) => `${r.replicas}@${iso(r.timestampMs)}`),
      scaleUpEvents: history.scaleUpEvents.length,
      scaleDownEvents: history.scaleDownEvents.length,
      lastError: lastError || undefined,
      lastReason: lastReason || undefined,
    }),
    continueAsNewArgs: () => [{ ...input, history, nextSyncAtMs: nextSyncAt }],
  });
}
