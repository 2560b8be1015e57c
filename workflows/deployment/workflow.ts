import type { DeploymentActivities } from '../../activities/deployment/activities';
import { claimAll } from '../common/controller-ref';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { planDeployment } from './controller';
import { resolveCreateConflict } from './sync';
import { findNewReplicaSet } from './util';
import { deploymentRef } from './types';
import { API_BATCHES } from '../runtime/activity-options';
import { objectIo } from '../runtime/local-io';
import { type CacheFloor, type DeploymentObservation, floorAfterRead, floorAfterWrite, newerSnapshot, snapshotServes } from './cache';
import { isPatched } from '../runtime/patches';

/**
 * What the router sends a Deployment's workflow: "look again", with the Deployment and its
 * ReplicaSets as the shared cache has them. A reconcile plans from that snapshot when it already
 * includes the workflow's own last writes, and reads the API otherwise.
 */
export interface DeploymentEvent {
  /** the Deployment with this UID was deleted (or, from the sweep after a first list, is missing from the cache) */
  deletedUid?: string;
  /** something it owns (or might adopt) changed */
  changed?: boolean;
  /** the watch relisted: events may have been missed */
  relist?: boolean;
  /** the cache's view when the event was routed (absent from routers before the shared cache) */
  snapshot?: DeploymentObservation;
  /** the cache's view was too large for a payload and was left out: the next reconcile reads the API */
  lookAgain?: boolean;
}

/** Later events carry later snapshots (a later look again drops an earlier one); flags accumulate. */
export function mergeDeploymentEvents(a: DeploymentEvent, b: DeploymentEvent): DeploymentEvent {
  const snapshot = b.lookAgain ? undefined : b.snapshot ? newerSnapshot(a.snapshot, b.snapshot) : a.snapshot;
  const lookAgain = b.lookAgain || (a.lookAgain && !b.snapshot);
  return {
    ...(a.deletedUid || b.deletedUid ? { deletedUid: b.deletedUid ?? a.deletedUid } : {}),
    ...(a.changed || b.changed ? { changed: true } : {}),
    ...(a.relist || b.relist ? { relist: true } : {}),
    ...(snapshot ? { snapshot } : {}),
    ...(lookAgain ? { lookAgain: true } : {}),
  };
}

export interface DeploymentWorkflowInput {
  namespace: string;
  name: string;
  uid?: string;
  tuning?: Partial<LoopTuning>;
}

const MAX_IMMEDIATE_ROUNDS = 50;

const io = objectIo<DeploymentActivities>(API_BATCHES);

/** One Deployment: rolls its ReplicaSets toward spec.template and keeps its status and conditions true. */
export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const key = { namespace: input.namespace, name: input.name };
  // a new object under the same name gets a new run, never this one's state
  const id = objectIdentity<typeof deploymentWorkflow>(input.uid, (next) => [{ ...input, uid: next }]);
  /** rounds in a row that wrote and asked to look again at once; bounded so a planner that never settles backs off instead of spinning */
  let immediate = 0;
  /** the newest cache snapshot the watch sent */
  let snapshot: DeploymentObservation | undefined;
  /** what a snapshot must include before it may replace an API read */
  let floor: CacheFloor = {};
  // runs recorded before the shared cache read the API on every reconcile
  const fromCache = isPatched('deployment-from-cache');
  // runs recorded before named new ReplicaSets by this project's own template hash
  const upstreamTemplateHash = isPatched('upstream-template-hash');

  async function observe(): Promise<DeploymentObservation> {
    if (fromCache && snapshotServes(snapshot, floor)) return snapshot!;
    const read = await io.observeDeployment(key);
    if (fromCache) floor = floorAfterRead(floor, read);
    return read;
  }

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await observe();
    const d = seen.deployment;
    if (!d) return { finished: true };
    await id.handOverIfNew(d.uid);
    id.learn(d.uid);

    // which ReplicaSets it keeps, adopts and releases: the claim step every selector-based owner shares
    const claim = claimAll(d, seen.replicaSets);
    if (claim.adopt.length || claim.release.length) {
      if (claim.adopt.length) await io.adoptReplicaSets({ deployment: deploymentRef(d), replicaSets: claim.adopt.map(({ name, uid: u }) => ({ name, uid: u })) });
      if (claim.release.length) await io.releaseReplicaSets({ deployment: deploymentRef(d), replicaSets: claim.release.map(({ name, uid: u }) => ({ name, uid: u })) });
      // ownership patches return no version to wait for: the next look reads the API
      if (fromCache) floor = { ...floor, unknown: true };
      return { requeueAfterMs: 0 }; // look again with ownership settled
    }

    const newRS = findNewReplicaSet(d, claim.owned);
    const oldPodsRunning = claim.owned
      .filter((rs) => rs.uid !== newRS?.uid)
      .reduce((n, rs) => n + (seen.activePodsByReplicaSet[rs.uid] ?? 0), 0);
    const plan = planDeployment({ deployment: d, replicaSets: claim.owned, oldPodsRunning, now: Date.now(), upstreamTemplateHash });

    let view = deploymentRef(d);
    let wroteOthers = false;
    for (const action of plan.actions) {
      const from = action.type === 'scaleReplicaSet' ? claim.owned.find((rs) => rs.uid === action.uid)?.replicas : undefined;
      const r = await io.applyDeploymentAction({ deployment: view, action, fromReplicas: from });
      if (fromCache) floor = floorAfterWrite(floor, action, r);
      if (!r.ok) {
        if (r.reason === 'AlreadyExists') {
          // our own ReplicaSet from an earlier attempt, or a hash collision that bumps collisionCount
          for (const fix of resolveCreateConflict({ ...d, resourceVersion: view.resourceVersion }, r.existing).actions) {
            await io.applyDeploymentAction({ deployment: view, action: fix });
          }
        }
        // the world moved (conflict) or the name was taken: re-observe and plan again
        return r.reason === 'Rejected' ? { failed: true } : { requeueAfterMs: 0 };
      }
      if (r.resourceVersion && (action.type === 'updateDeploymentAnnotations' || action.type === 'updateDeploymentStatus')) {
        view = { ...view, resourceVersion: r.resourceVersion };
      }
      if (action.type !== 'updateDeploymentStatus') wroteOthers = true;
    }
    // After a ReplicaSet write, plan the next step from fresh observations right away; a
    // status-only round waits for the next event or the progress-deadline timer.
    if (wroteOthers) {
      immediate++;
      if (immediate > MAX_IMMEDIATE_ROUNDS) {
        immediate = 0;
        return { failed: true };
      }
      return { requeueAfterMs: 0 };
    }
    immediate = 0;
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
  }

  await runObjectLoop<DeploymentEvent>({
    controller: 'deployment',
    tuning,
    // an event wakes the loop; its snapshot (if any) is what the next reconcile may plan from
    apply(e) {
      // A deletion comes without a snapshot (the cache no longer has the object): the last one
      // would still show the Deployment, so the next look reads the API, which ends the run, or
      // finds a new object under the name and hands over to a new run. A later snapshot in the
      // same merged event (the name taken again) is newer than the deletion.
      // Asked here, at the deletion, not at the run's start: a run open since before this patch
      // (the ones that leaked) takes it from its next deletion on; its replay of older signals
      // finds no marker and plans as it did.
      if (e.deletedUid !== undefined && isPatched('deployment-deletion-reads-api')) snapshot = undefined;
      // the cache's newer view was too large to send: the last snapshot is stale, so read the API
      if (e.lookAgain) snapshot = undefined;
      if (e.snapshot) snapshot = newerSnapshot(snapshot, e.snapshot);
    },
    // the resync reads the API again rather than planning from the last snapshot: what the signal
    // gate held is in that read. Runs before it planned from the snapshot; asked at a resync only.
    onResync() {
      if (isPatched('resync-rereads')) snapshot = undefined;
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid } satisfies DeploymentWorkflowInput],
    // a new run starts with no snapshot and no floor: its first reconcile reads the Deployment and
    // its ReplicaSets from the API, so what signals said before it is superseded
    rereadsOnNewRun: true,
  });
}
