import { log, proxyActivities } from '@temporalio/workflow';
import type { MirroringActivities } from '../../activities/endpointslicemirroring/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { planMirroring } from './logic';
import { DEFAULT_MAX_ENDPOINTS_PER_SUBSET, MIRRORING_CONTROLLER, MirroringEvent, MirroringWorkflowInput } from './types';
import { MIRRORING_BATCHES } from '../runtime/activity-options';

export function mirroringWorkflowId(namespace: string, name: string): string {
  return `${MIRRORING_CONTROLLER}/${namespace}/${name}`;
}

const io = proxyActivities<MirroringActivities>(MIRRORING_BATCHES);

const DELETED = '';

/**
 * One Service/Endpoints pair (by name): while the Service has no selector, its custom Endpoints
 * are mirrored into EndpointSlices; otherwise whatever was mirrored goes, and the run ends.
 * Each reconcile reads the pair and its slices afresh, so nothing large is carried across
 * continue-as-new; echoes of its own writes are recognised and cost no reconcile.
 */
export async function endpointSliceMirroringWorkflow(input: MirroringWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const maxEndpointsPerSubset = input.maxEndpointsPerSubset ?? DEFAULT_MAX_ENDPOINTS_PER_SUBSET;
  /** slice name -> the resourceVersion we last wrote (DELETED once we deleted it), as upstream's tracker */
  const written = new Map<string, string>();
  let dirty = true;
  let lastObservedAt = 0;

  async function reconcile(): Promise<ReconcileResult> {
    // Woken only by our own echoes, and not yet due for the periodic look: nothing to do.
    if (!dirty && Date.now() - lastObservedAt < tuning.resyncMs) return {};
    dirty = false;
    const seen = await io.observeMirroring({ namespace: input.namespace, name: input.name });
    lastObservedAt = Date.now();
    const plan = planMirroring(seen, { maxEndpointsPerSubset });
    if (!plan.writes.length && !plan.warnings.length) return plan.mirror ? {} : { finished: true };

    const r = await io.applyMirroring({
      namespace: input.namespace,
      endpointsName: input.name,
      endpointsUid: seen.endpoints?.uid,
      knownSlices: seen.slices.map((s) => s.name),
      writes: plan.writes,
      warnings: plan.warnings,
      summary: plan.summary,
    });
    for (const w of r.written) written.set(w.name, w.deleted ? DELETED : w.resourceVersion);
    if (!r.ok) {
      log.info('mirrored slices changed under us; looking again', { reason: r.reason });
      dirty = true;
      return { requeueAfterMs: 0 };
    }
    return plan.mirror ? {} : { finished: true };
  }

  await runObjectLoop<MirroringEvent>({
    controller: MIRRORING_CONTROLLER,
    tuning,
    apply(e) {
      if (e.changed || e.relist) dirty = true;
      for (const s of e.slices ?? []) {
        const mine = written.get(s.name);
        const echo = mine !== undefined && (s.deleted ? mine === DELETED : mine === s.resourceVersion);
        if (!echo) dirty = true;
        else if (s.deleted) written.delete(s.name);
      }
    },
    reconcile,
    continueAsNewArgs: () => [input],
  });
}
