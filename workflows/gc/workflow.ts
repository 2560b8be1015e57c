import { proxyActivities } from '@temporalio/workflow';
import type { GcActivities } from '../../activities/gc/activities';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { batchReason, decideForegroundOwner, decideOrphanOwner, isDeletingDependents, isOrphaningDependents, planDependent } from './logic';
import type { GcAction, ObjectRef } from './types';
import { API_BATCHES } from '../runtime/activity-options';
import { isPatched } from '../runtime/patches';

/** What the ownership graph sends an object's collector workflow: its dependents as the watch knows them. */
export interface GcEvent {
  dependents: ObjectRef[];
  /** owners the graph has seen, but in another namespace than this dependent's (invalid references) */
  ownersElsewhere?: ObjectRef[];
}

export interface GcWorkflowInput extends CarriedSignals<GcEvent> {
  ref: ObjectRef;
  tuning?: Partial<LoopTuning>;
  /** the graph's last word, carried across continue-as-new: the only source of the dependents the observation reads */
  last?: GcEvent;
}

/** Workflow IDs by UID: names repeat across kinds, and a collector item is about one object. */
export function gcWorkflowId(ref: Pick<ObjectRef, 'namespace' | 'uid'>): string {
  return `garbagecollector/${ref.namespace ?? '_cluster'}/${ref.uid}`;
}

// reads and writes heartbeat per object, so a replica killed mid-way is noticed in seconds
const io = proxyActivities<GcActivities>(API_BATCHES);

/**
 * One object the collector must look at: a dependent whose owners may be gone, or an owner being
 * deleted in the foreground or with orphaning. It checks the owners against the API by UID,
 * decides as upstream's collector does, writes, and ends once nothing is left to wait for; an
 * owner whose foreground deletion waits for its dependents waits here, durably, across restarts.
 */
export async function garbageCollectorWorkflow(input: GcWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let dependents: ObjectRef[] = input.last?.dependents ?? [];
  let ownersElsewhere: ObjectRef[] = input.last?.ownersElsewhere ?? [];
  /** warnings already recorded for (dependent, owner): upstream emits each once */
  const warned = new Set<string>();

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await io.gcObserve({ ref: input.ref, dependents, ownersElsewhere });
    const obj = seen.object;
    if (!obj) return { finished: true };

    let actions: GcAction[];
    let retry = false;
    let waiting = false;
    if (isDeletingDependents(obj)) {
      actions = decideForegroundOwner(obj, seen.dependents);
      waiting = true; // until the apiserver removes the object once the finalizer is gone
    } else if (isOrphaningDependents(obj)) {
      actions = decideOrphanOwner(obj, seen.dependents);
      waiting = true;
    } else {
      const plan = planDependent(obj, seen.lookups, seen.dependents);
      actions = plan.actions;
      retry = plan.retry;
    }

    const todo = actions.filter((a) => {
      if (a.type !== 'warningEvent') return true;
      const key = `${a.target.uid}/${a.message}`;
      if (warned.has(key)) return false;
      warned.add(key);
      return true;
    });
    // one activity for the whole list: a foreground owner of 200 dependents decides 200 at once,
    // and an activity apiece cost a workflow task's round trip each (runs started before apply them one by one)
    if (isPatched('gc-actions-in-one-activity')) {
      if (todo.length) {
        const r = await io.gcApplyAll({ actions: todo, reason: batchReason(todo) });
        if (!r.ok) return { requeueAfterMs: 0 }; // changed since read: look again
      }
    } else {
      for (const a of todo) {
        const r = await io.gcApply(a);
        if (!r.ok) return { requeueAfterMs: 0 };
      }
    }
    if (retry) return { failed: true };
    if (waiting) return {};
    // a dependent whose deletion was requested, or one with nothing to do: this item is done
    return { finished: true };
  }

  await runObjectLoop<GcEvent>({
    controller: 'garbagecollector',
    tuning,
    apply(e) {
      dependents = e.dependents;
      ownersElsewhere = e.ownersElsewhere ?? [];
    },
    reconcile,
    // An episode: a dependent whose foreground deletion this run just asked for enters the
    // foreground a moment later, and the graph sends that to this same workflow ID, as it sends
    // an owner's last dependent going. A signal reaching the run as it finishes is then folded in
    // and reconciled, not ended with it (the chaos restarts pass saw owner-cycle-b kept for ever
    // by its foregroundDeletion finalizer, the signal saying so taken into a completed run).
    // Runs before this finished with it; the patch is asked only when signals are pending.
    drainBeforeFinish: () => isPatched('gc-drains-before-finish'),
    // the graph's word comes only as signals: those pending at the history ceiling go to the next run
    carries: input,
    // gcObserve reads only the dependents it is told of, and the graph signals only when they change: a
    // run started without them would find a waiting foreground owner unblocked and remove its
    // finalizer while a dependent still blocks it (a settled run continues as new after 15 minutes)
    continueAsNewArgs: () => [{
      ref: input.ref,
      ...(input.tuning ? { tuning: input.tuning } : {}),
      last: { dependents, ...(ownersElsewhere.length ? { ownersElsewhere } : {}) },
    } satisfies GcWorkflowInput],
  });
}
