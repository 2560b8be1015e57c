import { proxyActivities } from '@temporalio/workflow';
import type { StatefulSetActivities, StatefulSetObservation } from '../../activities/statefulset/activities';
import { claimAll } from '../common/controller-ref';
import { selectorError } from '../common/selector';
import { API_BATCHES, POD_BATCHES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  actionCount,
  availabilityRequeueMs,
  currentRevisionOf,
  planSync,
  planUpdateRevision,
  revisionsToTruncate,
  statusToWrite,
  type SyncPlan,
} from './control';
import type { StatefulRevisionView, StatefulSetEvent, StatefulSetView } from './types';
import { CONTROLLER, isMemberOf } from './utils';

export interface StatefulSetWorkflowInput {
  namespace: string;
  name: string;
  /** the StatefulSet this run serves; one recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function statefulSetWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

/** Folds two events: a deletion sticks, the latest UID wins. */
export function mergeStatefulSetEvents(earlier: StatefulSetEvent, later: StatefulSetEvent): StatefulSetEvent {
  const uid = later.uid ?? earlier.uid;
  return { ...(earlier.gone || later.gone ? { gone: true } : {}), ...(uid ? { uid } : {}) };
}

const io = proxyActivities<StatefulSetActivities>(API_BATCHES);
const pods$ = proxyActivities<Pick<StatefulSetActivities, 'syncStatefulPods'>>(POD_BATCHES);

/**
 * One StatefulSet. Every sync observes the set, its pods, claims and revisions from the API and
 * decides as upstream's sync does (control.ts), so the order it keeps (no ordinal before its
 * predecessor is Running and Ready, one pod per ordinal) rests on what the API holds, never on
 * memory a killed replica took with it: pods and claims have fixed names, so a create retried
 * after a crash finds what it made.
 */
export async function statefulSetWorkflow(input: StatefulSetWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof statefulSetWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let last: { set: StatefulSetView; plan?: SyncPlan } | undefined;

  /** every event means the same: look again (each sync observes afresh) */
  function apply(_e: StatefulSetEvent): void {}

  async function reconcile(): Promise<ReconcileResult> {
    const o: StatefulSetObservation = await io.observeStatefulSet({ namespace: input.namespace, name: input.name });
    // gone (a 404): the run ends; a set made again under the name starts a new one
    if (!o.set) return { finished: true };
    const set = o.set;
    await id.handOverIfNew(set.uid);
    id.learn(set.uid);
    const ref = { namespace: set.namespace, name: set.name, uid: set.uid };
    if (selectorError(set.selector) !== undefined || !set.selector) return {};

    // claim: orphans the selector matches (pods only when named as this set's members) are adopted
    const claimant = { namespace: set.namespace, uid: set.uid, selector: set.selector, ...(set.deleting ? { deletionTimestamp: 'set' } : {}) };
    const members = o.pods.filter((p) => isMemberOf(set, p.name));
    const podClaims = claimAll(claimant, members.map((p) => ({
      namespace: p.namespace, labels: p.labels, ownerReferences: p.controllerRef ? [p.controllerRef] : [], ...(p.deleting ? { deletionTimestamp: 'set' } : {}), view: p,
    })));
    // a pod it controls whose name is not a member's is released too (upstream's claim filter)
    const strangers = set.deleting ? [] : o.pods.filter((p) => !isMemberOf(set, p.name) && p.controllerRef?.uid === set.uid && !p.deleting);
    const release = [...podClaims.release.map((c) => c.view), ...strangers];
    const revClaims = claimAll(claimant, o.revisions.map((r) => ({ namespace: set.namespace, labels: r.labels, ownerReferences: r.controllerRef ? [r.controllerRef] : [], view: r })));
    if (podClaims.adopt.length + release.length + revClaims.adopt.length) {
      await io.claimStatefulObjects({
        set: ref,
        adoptPods: podClaims.adopt.map((c) => ({ name: c.view.name, uid: c.view.uid })),
        releasePods: release.map((p) => ({ name: p.name, uid: p.uid })),
        adoptRevisions: revClaims.adopt.map((c) => ({ name: c.view.name, uid: c.view.uid })),
        reason: 'orphans the selector matches are adopted; pods it no longer matches are released',
      });
      return { requeueAfterMs: 0 };
    }
    const pods = podClaims.owned.map((c) => c.view);
    let revisions: StatefulRevisionView[] = revClaims.owned.map((c) => c.view);

    // the update revision: found, renumbered or made
    const step = planUpdateRevision(set, revisions);
    let update: StatefulRevisionView;
    let collisionCount = set.status.collisionCount ?? 0;
    if (step.kind === 'use') update = step.update;
    else if (step.kind === 'renumber') {
      const r = await io.renumberStatefulRevision({ namespace: set.namespace, name: step.name, revision: step.revision,
        reason: `the template went back to revision ${step.name}: it becomes number ${step.revision}` });
      if (!r) return { requeueAfterMs: 0 };
      update = r;
      revisions = revisions.map((x) => (x.name === r.name ? r : x));
    } else {
      const r = await io.createStatefulRevision({
        set: { ...ref, annotations: set.annotations, templateLabels: set.template.metadata?.labels }, data: step.data, revision: step.revision,
        collisionCount: step.collisionCount, reason: `the template has no revision yet: revision ${step.revision}`,
      });
      update = r.revision;
      collisionCount = r.collisionCount;
    }
    const current = currentRevisionOf(set, revisions, update);

    const now = Date.now();
    const plan = planSync(set, pods, new Map(o.claims.map((c) => [c.name, c])), current, update, collisionCount, now);
    last = { set, plan };
    let failed: string | undefined;
    if (actionCount(plan)) {
      const { status: _status, ...spec } = set;
      const stages = [plan.replicaActions, plan.condemnedClaimActions, plan.condemnedActions, plan.updateActions].filter((s) => s.length);
      const r = await pods$.syncStatefulPods({
        set: spec, stages, burst: plan.burst,
        reason: stages.flat().map((a) => a.why).join('; '),
      });
      failed = r.failed;
    }

    const status = statusToWrite(set, plan.status);
    if (status) {
      const r = await io.updateStatefulSetStatus({ set: { ...ref, resourceVersion: set.resourceVersion }, status,
        reason: `${status.readyReplicas}/${set.replicas} ready, ${status.updatedReplicas} at ${status.updateRevision}, ${status.currentReplicas} at ${status.currentRevision}` });
      if (r.outcome === 'gone') return { finished: true };
      if (r.outcome === 'conflict') return { requeueAfterMs: 0 };
    }

    const stale = revisionsToTruncate(set, revisions, pods, current.name, update.name);
    if (stale.length) await io.deleteStatefulRevisions({ namespace: set.namespace, names: stale, reason: `more old revisions than revisionHistoryLimit ${set.revisionHistoryLimit}` });

    if (failed) return { failed: true, error: failed };
    const requeue = availabilityRequeueMs(set, pods, plan.status, now);
    return requeue !== undefined ? { requeueAfterMs: requeue } : {};
  }

  await runObjectLoop<StatefulSetEvent>({
    controller: CONTROLLER,
    tuning,
    apply,
    reconcile,
    describe: () => ({
      replicas: last?.set.replicas,
      ready: last?.plan?.status.readyReplicas,
      available: last?.plan?.status.availableReplicas,
      currentRevision: last?.plan?.status.currentRevision,
      updateRevision: last?.plan?.status.updateRevision,
      policy: last?.set.podManagementPolicy,
      waitingFor: last?.plan?.waitingFor,
    }),
    continueAsNewArgs: () => [input],
    // every sync observes afresh, and events only say look again
    rereadsOnNewRun: true,
  });
}
