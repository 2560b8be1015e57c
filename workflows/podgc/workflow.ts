import { ActivityFailure, log, proxyActivities } from '@temporalio/workflow';
import type { DeletePodsRequest, PodGcActivities } from '../../activities/podgc/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { Quarantine, advanceQuarantine, chunk, dueNodes } from './logic';
import {
  CONTROLLER,
  DEFAULT_MAX_TARGETS,
  DEFAULT_PERIOD_MS,
  DEFAULT_QUARANTINE_MS,
  DisruptionCondition,
  ORPHAN_CONDITION,
  PodGcReason,
  PodGcTarget,
} from './types';
import { PERIODIC_PASS } from '../runtime/activity-options';

/** What the manager hands the collector; also sent as a signal, so a restarted manager's flags take effect. */
export interface PodGcSettings {
  /** --terminated-pod-gc-threshold; 0 keeps every terminated pod */
  terminatedPodThreshold: number;
  /** between passes; upstream's 20 s, shorter in tests */
  periodMs?: number;
  /** how long a missing node waits before its pods go; upstream's 40 s */
  quarantineMs?: number;
  /** the most pods one listing returns */
  maxTargets?: number;
}

export interface PodGcWorkflowInput extends PodGcSettings {
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: missing nodes and when their quarantine ends (ms since the epoch) */
  quarantine?: Quarantine;
}

/** A nudge: run a pass now, under these settings when given. */
export interface PodGcEvent {
  settings?: PodGcSettings;
}

/**
 * One collector per deployment: the task queue names the deployment (as it does the informer
 * workflow), so a second deployment on the same Temporal namespace runs a collector of its own.
 */
export function podGcWorkflowId(taskQueue: string): string {
  return `${CONTROLLER}/${taskQueue}`;
}

export function mergePodGcEvents(earlier: PodGcEvent, later: PodGcEvent): PodGcEvent {
  const settings = later.settings ?? earlier.settings;
  return settings ? { settings } : {};
}

/** pods per delete activity: short enough to heartbeat through and to retry whole */
const DELETE_BATCH = 100;

// listing heartbeats per page, deleting per API call: a replica killed mid-way is noticed quickly
const io = proxyActivities<PodGcActivities>(PERIODIC_PASS);

/**
 * The pod garbage collector: one workflow for the cluster, running upstream's pass every period.
 * The listing activity picks the pods (terminated beyond the threshold, terminating on an
 * out-of-service node, bound to a node that is gone, terminating and never scheduled); the
 * workflow keeps the missing nodes' quarantine, so a restart neither forgets a node's time served
 * nor deletes a node's pods before it has served it.
 */
export async function podGcWorkflow(input: PodGcWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let settings: PodGcSettings = {
    terminatedPodThreshold: input.terminatedPodThreshold,
    ...(input.periodMs !== undefined ? { periodMs: input.periodMs } : {}),
    ...(input.quarantineMs !== undefined ? { quarantineMs: input.quarantineMs } : {}),
    ...(input.maxTargets !== undefined ? { maxTargets: input.maxTargets } : {}),
  };
  let quarantine: Quarantine = { ...input.quarantine };

  const periodMs = () => (settings.periodMs && settings.periodMs > 0 ? settings.periodMs : DEFAULT_PERIOD_MS);
  const quarantineMs = () => (settings.quarantineMs !== undefined && settings.quarantineMs >= 0 ? settings.quarantineMs : DEFAULT_QUARANTINE_MS);

  /** how many pods the API refused to delete this pass */
  let refused = 0;

  async function deletePods(reason: PodGcReason, pods: PodGcTarget[], condition?: DisruptionCondition): Promise<void> {
    for (const batch of chunk(pods, DELETE_BATCH)) {
      const req: DeletePodsRequest = { reason, pods: batch, ...(condition ? { condition } : {}) };
      const r = await io.podGcDeletePods(req);
      refused += r.failedCount;
      if (r.failedCount) log.warn('some pods could not be deleted', { reason, failed: r.failedCount, first: r.failed });
    }
  }

  /** One upstream gc pass; true when the listing held back pods that the next pass should take at once. */
  async function pass(): Promise<boolean> {
    refused = 0;
    const now = Date.now();
    const due = dueNodes(quarantine, now);
    const seen = await io.listPodGcCandidates({
      terminatedPodThreshold: settings.terminatedPodThreshold,
      dueNodes: due,
      maxTargets: settings.maxTargets ?? DEFAULT_MAX_TARGETS,
    });
    // the due nodes are taken out whatever the check says; those still missing start over
    quarantine = advanceQuarantine(quarantine, now, due, seen.missingNodes, quarantineMs());

    await deletePods('terminated', seen.terminated);
    await deletePods('terminating-out-of-service', seen.terminatingOutOfService);
    if (seen.orphaned.length) {
      const suspects = [...new Set(seen.orphaned.map((p) => p.nodeName ?? ''))].sort();
      const checked = await io.podGcCheckNodes({ names: suspects });
      const gone = new Set(checked.gone);
      await deletePods('orphaned', seen.orphaned.filter((p) => gone.has(p.nodeName ?? '')), ORPHAN_CONDITION);
    }
    await deletePods('terminating-unscheduled', seen.terminatingUnscheduled);
    // pods the API refuses would be picked again first: going straight on would spin
    return seen.truncated && refused === 0;
  }

  async function reconcile(): Promise<ReconcileResult> {
    try {
      const more = await pass();
      return { requeueAfterMs: more ? 0 : periodMs() };
    } catch (e) {
      // Upstream logs a failed pass and tries again next period; a backoff would only delay it.
      if (!(e instanceof ActivityFailure)) throw e;
      log.warn('pod gc pass failed; trying again next period', { error: String(e.cause ?? e) });
      return { requeueAfterMs: periodMs() };
    }
  }

  await runObjectLoop<PodGcEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if (e.settings) settings = { ...e.settings };
    },
    reconcile,
    continueAsNewArgs: () => [{ ...settings, tuning: input.tuning, quarantine } satisfies PodGcWorkflowInput],
  });
}
