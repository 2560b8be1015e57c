import { podsForRanking, statusForGates, type ReplicaOwnerGate } from './gates';
import type { ReplicaActivities } from '../../activities/replicaset/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import {
  DEFAULT_BURST_REPLICAS,
  calculateStatus,
  classifyPods,
  filterActivePods,
  nextAvailabilityCheck,
  planReplicas,
  podName,
  seqAfterNames,
  slowStartBatches,
  statusEqual,
} from './logic';
import type { ManageError, PodSummary, ReplicaOwner, ReplicaOwnerKind } from './types';
import { newerVersion } from '../common/resource-version';
import { POD_BATCHES } from '../runtime/activity-options';
import { objectIo } from '../runtime/local-io';
import { isPatched } from '../runtime/patches';

/** What the informer router sends one owner's workflow; several events for one key arrive merged. */
export interface ReplicaOwnerEvent {
  /** the owner as last seen by the watch */
  owner?: ReplicaOwner;
  /** the owner with this UID was deleted */
  ownerDeletedUid?: string;
  /** pods added or changed (latest state) */
  pods?: PodSummary[];
  /** UIDs of pods deleted */
  podsDeleted?: string[];
  /** the watch relisted (start, failover, 410 Gone): events may have been missed, re-read everything */
  relist?: boolean;
  /**
   * Every pod relevant to `owner` in the router's synced cache (sent with a new or relisted owner
   * instead of `relist`): the workflow takes it as an observation and skips its own API read.
   */
  snapshot?: PodSnapshot;
}

/** The pods an owner controls or could adopt, as the informer's cache held them. */
export interface PodSnapshot {
  /** the owner the pods were gathered for */
  ownerUid: string;
  pods: PodSummary[];
  /**
   * The newest resourceVersion the cache had taken in: a pod the workflow knows at this version or
   * older that is missing here is gone; one it knows at a newer version (its own fresh create) is
   * newer than the cache and stays.
   */
  resourceVersion: string;
}

export interface ReplicaOwnerWorkflowInput {
  controller: 'replicaset' | 'replicationcontroller';
  kind: ReplicaOwnerKind;
  namespace: string;
  name: string;
  /** the object this run belongs to; a run started by a signal learns it on first observation */
  uid?: string;
  /** next pod-name sequence number, carried across continue-as-new so names never repeat */
  nextSeq?: number;
  tuning?: Partial<LoopTuning>;
  burstReplicas?: number;
  /** feature gates off (--feature-gates) that change what this controller does; absent: on, their 1.35 default */
  gatesOff?: ReplicaOwnerGate[];
}


// every activity here heartbeats per API call, so a replica killed mid-batch is noticed in seconds
const io = objectIo<ReplicaActivities>(POD_BATCHES);

/** One ReplicaSet or ReplicationController: keeps spec.replicas pods alive and its status true. */
export async function replicaOwnerWorkflow(input: ReplicaOwnerWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const key = { kind: input.kind, namespace: input.namespace, name: input.name };
  // A new object with this name gets a fresh run (same workflow ID), never this run's state.
  const id = objectIdentity<typeof replicaOwnerWorkflow>(input.uid, (next) => [{ ...input, uid: next, nextSeq: 0 }]);
  let nextSeq = input.nextSeq ?? 0;
  let owner: ReplicaOwner | undefined;
  /** pods relevant to this owner by UID: its own plus orphans it may adopt */
  const pods = new Map<string, PodSummary>();
  /** UIDs we deleted: a late event about them must not bring them back */
  const deletedByUs = new Set<string>();
  let needObserve = true;
  let ownerGone = false;
  /** the last write decided and the one under way, for the `state` query */
  let lastDecision: string | undefined;
  let inFlight: string | undefined;

  // Our pods may exist under names the counter has not passed (see seqAfterNames); histories
  // from before this patch never moved it.
  const seqFollowsNames = isPatched('pod-seq-follows-names');
  /** Once per signal or observation: every name in it that is one of ours (the rest decode to nothing). */
  function seeNames(names: string[]): void {
    const uid = ownerUid();
    if (seqFollowsNames && uid && names.length) nextSeq = seqAfterNames(nextSeq, input.name, uid, names);
  }

  function ownerUid(): string | undefined {
    return owner?.uid ?? id.uid;
  }

  function relevant(p: PodSummary): boolean {
    const ref = p.ownerReferences.find((r) => r.controller);
    return ref ? ref.uid === ownerUid() : true; // orphans: the classifier checks the selector
  }

  function upsertPod(p: PodSummary): void {
    if (deletedByUs.has(p.uid) && !p.deletionTimestamp) return;
    const known = pods.get(p.uid);
    if (known && newerVersion(known.resourceVersion, p.resourceVersion)) return;
    if (relevant(p)) pods.set(p.uid, p);
    else pods.delete(p.uid);
  }

  /** A cache snapshot taken as an observation of the pods. */
  function applySnapshot(s: PodSnapshot): void {
    const listed = new Set(s.pods.map((p) => p.uid));
    for (const [u, p] of [...pods]) if (!listed.has(u) && !newerVersion(p.resourceVersion, s.resourceVersion)) pods.delete(u);
    for (const d of [...deletedByUs]) if (!listed.has(d)) deletedByUs.delete(d);
    for (const p of s.pods) upsertPod(p);
  }

  async function reconcile(): Promise<ReconcileResult> {
    // A delete event ends this run, after one last look: the name may already hold a new object.
    if (needObserve || !owner || ownerGone) {
      const seen = await io.observeReplicaOwner(key);
      if (!seen.owner) return { finished: true };
      await id.handOverIfNew(seen.owner.uid);
      owner = seen.owner;
      pods.clear();
      for (const p of seen.pods) pods.set(p.uid, p);
      seeNames(seen.pods.map((p) => p.name));
      for (const d of [...deletedByUs]) if (!pods.has(d)) deletedByUs.delete(d);
      needObserve = false;
      ownerGone = false;
    }
    id.learn(owner.uid);

    const current = owner;
    const classes = classifyPods(current, [...pods.values()]);
    if (classes.selectorError) {
      // upstream does not manage an owner whose selector cannot be parsed; the API normally prevents it
      return {};
    }
    let active = classes.activeOwned;

    if (classes.toAdopt.length) {
      const r = await io.adoptPods({ owner: current, pods: classes.toAdopt.map(ref), reason: 'orphans matching the selector' });
      for (const p of r.updated) pods.set(p.uid, p);
      if (r.skipped.length) needObserve = true;
      active = [...active, ...r.updated.filter((p) => p.ownerReferences.some((o) => o.uid === current.uid && o.controller))];
    }
    if (classes.toRelease.length) {
      const r = await io.releasePods({ owner: current, pods: classes.toRelease.map(ref), reason: 'labels no longer match the selector' });
      for (const p of r.updated) pods.delete(p.uid);
      if (r.skipped.length) needObserve = true;
    }

    let manageError: ManageError | undefined;
    const plan = planReplicas(current, filterActivePods(podsForRanking(active, input.gatesOff)), { burstReplicas: input.burstReplicas ?? DEFAULT_BURST_REPLICAS, now: Date.now() });
    if (plan.action === 'create') {
      // Slow start: 1, 2, 4, ... pods per batch; a failing batch stops the rest, so a broken
      // template or an exhausted quota costs a handful of rejected calls, not hundreds.
      const have = filterActivePods(active).length;
      const batches = slowStartBatches(plan.count);
      // One call runs every batch: a call per batch cost a round trip between the workflow and
      // its activity each (nine for 500 pods, about 0.5 s). Histories from before keep their calls.
      if (isPatched('slow-start-in-one-call')) {
        const names = Array.from({ length: plan.count }, () => podName(current.name, current.uid, nextSeq++));
        const reason = `scale up ${have}->${current.replicas}: ${plan.count} in slow-start batches of ${batches.join(', ')}`;
        lastDecision = inFlight = `createPods: ${reason}`;
        const r = await io.createPods({ reason, owner: current, names, batches });
        inFlight = undefined;
        for (const p of r.created) pods.set(p.uid, p);
        if (r.failed.length) manageError = { kind: 'create', message: r.failed[0].message };
      } else for (const [i, size] of batches.entries()) {
        const names = Array.from({ length: size }, () => podName(current.name, current.uid, nextSeq++));
        const reason = `scale up ${have}->${current.replicas}: slow-start batch ${i + 1} of ${batches.length}`;
        lastDecision = inFlight = `createPods: ${reason}`;
        // reason first: the Web UI shows an activity's input top-down
        const r = await io.createPods({ reason, owner: current, names });
        inFlight = undefined;
        for (const p of r.created) pods.set(p.uid, p);
        if (r.failed.length) {
          manageError = { kind: 'create', message: r.failed[0].message };
          break;
        }
      }
    } else if (plan.action === 'delete') {
      const reason = `scale down ${filterActivePods(active).length}->${current.replicas}: ${plan.pods.length} chosen by upstream's deletion order (${rankSummary(plan.pods)})`;
      lastDecision = inFlight = `deletePods: ${reason}`;
      const r = await io.deletePods({ reason, owner: current, pods: plan.pods.map(ref) });
      inFlight = undefined;
      for (const u of r.deleted) {
        pods.delete(u);
        deletedByUs.add(u);
      }
      if (r.failed.length) manageError = { kind: 'delete', message: r.failed[0].message };
    }

    const now = Date.now();
    const all = [...pods.values()];
    const owned = all.filter((p) => p.ownerReferences.some((o) => o.uid === current.uid && o.controller));
    const activeNow = classifyPods(current, all).activeOwned;
    const status = statusForGates(calculateStatus(current, activeNow, owned, manageError, now), input.gatesOff);
    if (!statusEqual(status, current.status)) {
      const r = await io.updateReplicaOwnerStatus({ owner: current, status });
      if (r.updated) owner = { ...current, resourceVersion: r.resourceVersion, status };
      else if (r.reason === 'NotFound') return { finished: true };
      else {
        needObserve = true;
        return { requeueAfterMs: 0 };
      }
    }
    if (manageError) return { failed: true, error: `${manageError.kind === 'create' ? 'createPods' : 'deletePods'}: ${manageError.message}` };
    if (needObserve) return { requeueAfterMs: 0 };
    const wait = nextAvailabilityCheck(current, activeNow, now, status);
    return wait !== undefined ? { requeueAfterMs: wait } : {};
  }

  await runObjectLoop<ReplicaOwnerEvent>({
    controller: input.controller,
    tuning,
    reread() {
      // --shadow: the pods it created or deleted were dry runs
      needObserve = true;
      deletedByUs.clear();
    },
    // the resync reads the owner and its pods again: what the signal gate held is in that read.
    // Runs before it planned the resync from their view; the patch is asked at a resync only.
    onResync() {
      if (isPatched('resync-rereads')) needObserve = true;
    },
    apply(e) {
      if (e.relist) needObserve = true;
      if (e.ownerDeletedUid && e.ownerDeletedUid === ownerUid()) ownerGone = true;
      let sameOwner = false;
      if (e.owner) {
        if (id.isNew(e.owner.uid)) {
          needObserve = true; // the reconcile will see the new UID and hand over to a new run
        } else {
          sameOwner = true;
          if (!owner || !newerVersion(owner.resourceVersion, e.owner.resourceVersion)) owner = e.owner;
        }
      }
      // a snapshot always travels with its owner; pod deltas in the same signal are later than it
      if (e.snapshot && sameOwner && e.snapshot.ownerUid === e.owner?.uid) {
        applySnapshot(e.snapshot);
        if (!e.relist && !ownerGone) needObserve = false;
      }
      for (const p of e.pods ?? []) upsertPod(p);
      seeNames([...(e.snapshot?.pods ?? []), ...(e.pods ?? [])].map((p) => p.name));
      for (const u of e.podsDeleted ?? []) {
        pods.delete(u);
        deletedByUs.delete(u);
      }
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid, nextSeq } satisfies ReplicaOwnerWorkflowInput],
    // a new run starts with needObserve: its first reconcile reads the owner and its pods from the API
    rereadsOnNewRun: true,
    describe: () => {
      const active = owner ? classifyPods(owner, [...pods.values()]).activeOwned : [];
      return {
        uid: ownerUid(),
        desiredReplicas: owner?.replicas,
        activePods: active.length,
        readyPods: active.filter((p) => p.ready).length,
        statusReplicas: owner?.status.replicas,
        statusReadyReplicas: owner?.status.readyReplicas,
        lastDecision,
        inFlight,
        nextPodSequence: nextSeq,
      };
    },
  });
}

/** The chosen pods by the first criteria of the deletion order: "1 unscheduled, 2 not ready, 1 ready". */
function rankSummary(chosen: PodSummary[]): string {
  const counts = new Map<string, number>();
  for (const p of chosen) {
    const k = !p.nodeName ? 'unscheduled' : p.phase === 'Pending' ? 'pending' : !p.ready ? 'not ready' : 'ready';
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return ['unscheduled', 'pending', 'not ready', 'ready'].filter((k) => counts.has(k)).map((k) => `${counts.get(k)} ${k}`).join(', ');
}

function ref(p: PodSummary) {
  return { name: p.name, uid: p.uid, resourceVersion: p.resourceVersion };
}
