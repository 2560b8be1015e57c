import { ActivityFailure, log, proxyActivities } from '@temporalio/workflow';
import type { LegacyTokenCleanerActivities } from '../../activities/legacy-token-cleaner/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { PERIODIC_PASS } from '../runtime/activity-options';
import { CONTROLLER, SYNC_INTERVAL_MS } from './logic';

/** What the manager hands the cleaner; also sent as a signal, so a restarted manager's flag takes effect. */
export interface LegacyTokenCleanerSettings {
  /** --legacy-service-account-token-clean-up-period, in ms */
  cleanUpPeriodMs: number;
  /** between passes: upstream's fixed day, shorter only in tests */
  syncIntervalMs?: number;
}

export interface LegacyTokenCleanerWorkflowInput extends LegacyTokenCleanerSettings {
  tuning?: Partial<LoopTuning>;
}

/** A nudge from a starting replica: run a pass now (upstream passes at start), under these settings. */
export interface LegacyTokenCleanerEvent {
  settings?: LegacyTokenCleanerSettings;
}

/** One cleaner per deployment: the task queue names the deployment. */
export function legacyTokenCleanerWorkflowId(taskQueue: string): string {
  return `${CONTROLLER}/${taskQueue}`;
}

export function mergeLegacyTokenCleanerEvents(earlier: LegacyTokenCleanerEvent, later: LegacyTokenCleanerEvent): LegacyTokenCleanerEvent {
  const settings = later.settings ?? earlier.settings;
  return settings ? { settings } : {};
}

const io = proxyActivities<LegacyTokenCleanerActivities>(PERIODIC_PASS);

/**
 * The legacy service account token cleaner: one workflow for the cluster, running upstream's pass
 * at start and then once a day. The plan activity reads and decides; each label and delete is an
 * activity of its own, so a replica killed mid-pass neither repeats a write nor loses one.
 */
export async function legacyTokenCleanerWorkflow(input: LegacyTokenCleanerWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let settings: LegacyTokenCleanerSettings = {
    cleanUpPeriodMs: input.cleanUpPeriodMs,
    ...(input.syncIntervalMs !== undefined ? { syncIntervalMs: input.syncIntervalMs } : {}),
  };
  let lastPass: { at: string; outcome: string; labelled: number; deleted: number } | undefined;

  const intervalMs = () => (settings.syncIntervalMs && settings.syncIntervalMs > 0 ? settings.syncIntervalMs : SYNC_INTERVAL_MS);

  async function pass(): Promise<void> {
    const at = new Date().toISOString();
    const plan = await io.planLegacyTokenPass({ cleanUpPeriodMs: settings.cleanUpPeriodMs });
    if (plan.kind === 'error') {
      log.warn('cannot tell since when token use is tracked; skipping this pass', { error: plan.error });
      lastPass = { at, outcome: `error: ${plan.error}`, labelled: 0, deleted: 0 };
      return;
    }
    if (plan.kind === 'too-early') {
      lastPass = { at, outcome: `token use tracked only since ${plan.trackedSince}`, labelled: 0, deleted: 0 };
      return;
    }
    let labelled = 0;
    let deleted = 0;
    for (const a of plan.actions) {
      if (a.kind === 'label') {
        const r = await io.labelInvalidLegacyToken({
          namespace: a.namespace, name: a.name, uid: a.uid, invalidSince: a.invalidSince,
          reason: 'auto-generated token unused for the clean-up period and referenced by no pod',
        });
        if (r.outcome === 'done') labelled++;
      } else {
        const r = await io.deleteLegacyToken({
          namespace: a.namespace, name: a.name, resourceVersion: a.resourceVersion, serviceAccountName: a.serviceAccountName,
          ...(a.lastUsed !== undefined ? { lastUsed: a.lastUsed } : {}), invalidSince: a.invalidSince,
          reason: `marked invalid since ${a.invalidSince}, more than the clean-up period ago`,
        });
        if (r.outcome === 'done') deleted++;
      }
    }
    lastPass = { at, outcome: `scanned ${plan.scanned}`, labelled, deleted };
  }

  async function reconcile(): Promise<ReconcileResult> {
    try {
      await pass();
    } catch (e) {
      // upstream logs a failed pass and waits for the next one
      if (!(e instanceof ActivityFailure)) throw e;
      log.warn('legacy token cleaner pass failed; trying again next period', { error: String(e.cause ?? e) });
      lastPass = { at: new Date().toISOString(), outcome: 'failed', labelled: 0, deleted: 0 };
    }
    return { requeueAfterMs: intervalMs() };
  }

  await runObjectLoop<LegacyTokenCleanerEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if (e.settings) settings = { ...e.settings };
    },
    reconcile,
    describe: () => ({
      cleanUpPeriodMs: settings.cleanUpPeriodMs,
      lastPassAt: lastPass?.at,
      lastPass: lastPass?.outcome,
      labelled: lastPass?.labelled,
      deleted: lastPass?.deleted,
    }),
    continueAsNewArgs: () => [{ ...settings, tuning: input.tuning } satisfies LegacyTokenCleanerWorkflowInput],
  });
}
