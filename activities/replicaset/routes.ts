import { selectorMatches } from '../../workflows/common/selector';
import { isPodActive } from '../../workflows/replicaset/logic';
import type { ReplicaOwnerEvent, ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import type { ReplicaOwnerGate } from '../../workflows/replicaset/gates';
import { featureEnabled } from '../../workers/feature-gates';
import type { PodSummary, ReplicaOwner, ReplicaOwnerKind } from '../../workflows/replicaset/types';
import { POD_SUMMARY_FIELDS, REPLICA_OWNER_FIELDS, podSummary, replicaOwner } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { RESOURCES, type ResourceType } from '../kube/resources';
import { mergeReplicaOwnerEvents } from './merge';
import type { RouteFamily } from '../informers/family';
import { BY_CONTROLLER_UID, BY_NAMESPACE, ORPHANS_BY_NAMESPACE } from '../informers/indexes';
import type { Store, StoreEvent, StoreListener } from '../informers/store';
import type { RouteContext, SignalGateFactory } from '../../workers/descriptor';
import type { InformerInput } from '../informers/family';
import type { Target } from '../informers/signaller';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';
import { replicaOwnerWouldAct } from '../../workflows/replicaset/would-act';

interface OwnerResource {
  controller: 'replicaset' | 'replicationcontroller';
  kind: ReplicaOwnerKind;
  resource: ResourceType;
}

const OWNER_RESOURCES: OwnerResource[] = [
  { controller: 'replicaset', kind: 'ReplicaSet', resource: RESOURCES.replicaSets },
  { controller: 'replicationcontroller', kind: 'ReplicationController', resource: RESOURCES.replicationControllers },
];

/**
 * Above this many pods an owner is sent `relist` and reads them itself: a snapshot rides in the
 * signal and so in the workflow's history, where a few hundred summaries (~0.4 KiB each) are
 * fine and thousands are not.
 */
export const SNAPSHOT_MAX_PODS = 500;

/** The feature gates off that change what the engine decides (both beta and on by default). */
function gatesOffFor(input: InformerInput): ReplicaOwnerGate[] {
  return (['PodDeletionCost', 'DeploymentReplicaSetTerminatingReplicas'] as const satisfies readonly ReplicaOwnerGate[])
    .filter((g) => !featureEnabled(input.flags, g));
}

/** What the owner's workflow holds of its pods, from the cache: its own and the orphans its selector matches. */
function podsOfOwner(pods: Store, owner: ReplicaOwner): PodSummary[] {
  const mine: PodSummary[] = pods.byIndex(BY_CONTROLLER_UID, owner.uid).map(podSummary);
  for (const o of pods.byIndex(ORPHANS_BY_NAMESPACE, owner.namespace)) {
    if (selectorMatches(owner.selector, o.metadata?.labels ?? {})) mine.push(podSummary(o));
  }
  return mine;
}

/**
 * What a new or relisted owner is sent: its pods from the synced cache, so its workflow need not
 * list the namespace; before the pods are listed (or for a very large owner), `relist` instead.
 */
function fullEvent(pods: Store, owner: ReplicaOwner): ReplicaOwnerEvent {
  if (!pods.synced || !pods.resourceVersion) return { owner, relist: true };
  const mine = podsOfOwner(pods, owner);
  if (mine.length > SNAPSHOT_MAX_PODS) return { owner, relist: true };
  return { owner, snapshot: { ownerUid: owner.uid, pods: mine, resourceVersion: pods.resourceVersion } };
}

/**
 * The engine's signal gate: an event is held when the owner's workflow, reconciling on what the
 * cache holds (the owner and its pods), would write nothing. That is the echo of its own status
 * write, the pods it created showing up, and pod changes no decision reads yet (a restart count,
 * a deletion cost). They go out with its next event that needs work, which then carries them merged.
 */
export const replicaOwnerSignalGate: SignalGateFactory = ({ input, cache }) => {
  const gatesOff = gatesOffFor(input);
  const read = (t: Target) => {
    const res = OWNER_RESOURCES.find((r) => r.controller === t.controller);
    const pods = cache.store(RESOURCES.pods);
    const o = res && cache.store(res.resource)?.get(t.uid);
    return res && pods?.synced && o ? { pods, owner: replicaOwner(res.kind, o) } : undefined;
  };
  return {
    wouldAct(t) {
      const s = read(t);
      return !s || replicaOwnerWouldAct(s.owner, podsOfOwner(s.pods, s.owner), { burstReplicas: input.burstReplicas, gatesOff, now: Date.now() });
    },
    full(t) {
      const s = read(t);
      return (s ? fullEvent(s.pods, s.owner) : { relist: true }) satisfies ReplicaOwnerEvent;
    },
  };
};

/** Pod summaries carry only what owners decide on, so equal summaries (but for the version) mean nothing changed for them. */
function sameForOwners(a: PodSummary, b: PodSummary): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the replicaset / replicationcontroller engine, as upstream's handlers enqueue keys:
 * an owner to itself; a pod to its controller, or, orphaned, to every owner whose selector matches
 * it; an update to the owners of both its old and new state.
 */
/**
 * An event too large for a payload, cut down at its send to a relist: an owner of many thousand
 * pods, whose snapshot (or a burst of their changes) outgrows SIGNAL_BUDGET_BYTES. The workflow
 * then reads the owner and its pods from the API, as after a relist; what it is told of deletions
 * stays, and is only UIDs.
 */
export const shrinkReplicaOwnerEvent = (event: unknown): ReplicaOwnerEvent => {
  const { owner: _owner, pods: _pods, snapshot: _snapshot, ...rest } = event as ReplicaOwnerEvent;
  return { ...rest, relist: true };
};

export function replicaRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  const enabled = OWNER_RESOURCES.filter((r) => input.controllers.includes(r.controller));
  if (!enabled.length) return undefined;

  const pods = cache.watch(RESOURCES.pods, POD_SUMMARY_FIELDS);
  pods.addIndex(BY_CONTROLLER_UID);
  pods.addIndex(ORPHANS_BY_NAMESPACE);
  const stores = new Map<OwnerResource, Store>();

  const gatesOff = gatesOffFor(input);
  /** `force`: a new, deleted or relisted owner, which the signal gate is not asked about */
  const queue = (res: OwnerResource, who: { namespace: string; name: string; uid: string }, event: ReplicaOwnerEvent, urgent = false, force = false) => {
    const args: ReplicaOwnerWorkflowInput = {
      controller: res.controller, kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid,
      tuning: input.tuning, burstReplicas: input.burstReplicas, ...(gatesOff.length ? { gatesOff } : {}),
    };
    signaller.queue({ controller: res.controller, workflow: replicaOwnerWorkflow, kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid, args, shrink: shrinkReplicaOwnerEvent },
      event, mergeReplicaOwnerEvents, urgent, force);
  };

  const ownersForPod = (p: PodSummary): Array<{ res: OwnerResource; owner: ReplicaOwner }> => {
    const ref = controllerRef(p.ownerReferences);
    const found: Array<{ res: OwnerResource; owner: ReplicaOwner }> = [];
    for (const [res, store] of stores) {
      if (ref) {
        const o = ref.kind === res.kind ? store.get(ref.uid) : undefined;
        if (o) found.push({ res, owner: replicaOwner(res.kind, o) });
        continue;
      }
      for (const o of store.byIndex(BY_NAMESPACE, p.namespace)) {
        const owner = replicaOwner(res.kind, o);
        if (selectorMatches(owner.selector, p.labels)) found.push({ res, owner });
      }
    }
    return found;
  };

  const routePod = (before: PodSummary | undefined, after: PodSummary | undefined) => {
    // A change the owners cannot act on (annotations, most of status) is not worth a signal.
    if (before && after && sameForOwners(before, after)) return;
    const targets = new Map<string, { res: OwnerResource; owner: ReplicaOwner }>();
    for (const p of [before, after]) if (p) for (const o of ownersForPod(p)) targets.set(o.owner.uid, o);
    // a pod leaving the active set means a replacement to create: that goes out without the hot-key wait
    const urgent = (!before || isPodActive(before)) && (!after || !isPodActive(after));
    for (const o of targets.values()) queue(o.res, o.owner, after ? { pods: [after] } : { podsDeleted: [before!.uid] }, urgent);
  };

  const ownerEvent = (res: OwnerResource, ev: StoreEvent) => {
    if (ev.type === 'deleted') {
      const owner = replicaOwner(res.kind, ev.old);
      queue(res, owner, { ownerDeletedUid: owner.uid }, false, true);
      return;
    }
    const owner = replicaOwner(res.kind, ev.obj);
    if (ev.source !== 'watch') {
      // at start-up the pods' first list finishing sends these, with their snapshots
      if (pods.synced) queue(res, owner, fullEvent(pods, owner), false, true);
      return;
    }
    const known = ev.type === 'updated' ? replicaOwner(res.kind, ev.old) : undefined;
    // a spec change (a new generation) is acted on at once; our own status writes are routine
    queue(res, owner, known || !pods.synced ? { owner } : fullEvent(pods, owner), known?.generation !== owner.generation, !known);
  };

  const ownerListeners = new Map<OwnerResource, StoreListener>();
  for (const res of enabled) {
    const listener: StoreListener = { onEvent: (ev) => ownerEvent(res, ev) };
    const store = cache.watch(res.resource, REPLICA_OWNER_FIELDS, listener);
    store.addIndex(BY_NAMESPACE);
    stores.set(res, store);
    ownerListeners.set(res, listener);
  }

  pods.subscribe({
    onEvent(ev) {
      // the first list only fills the cache: the owners then get their pods in one signal each
      if (ev.source === 'list') return;
      if (ev.type === 'deleted') {
        routePod(podSummary(ev.old), undefined);
        return;
      }
      const after = podSummary(ev.obj);
      const before = ev.type === 'updated' ? podSummary(ev.old) : undefined;
      // after a watch gap, what changed or appeared meanwhile reaches its owners as events would have
      if (ev.source === 'relist' && before?.resourceVersion === after.resourceVersion) return;
      routePod(before, after);
    },
    onListed(first) {
      // the owners listed so far waited for this list: each now gets its pods in one signal (as
      // a relisted owner does), each on its own, so that one the route cannot handle stops no other
      if (!first) return;
      for (const [res, store] of stores) store.offerAll(ownerListeners.get(res)!);
    },
  });

  // an owner gone while no watch ran: `relist` has its workflow read it, and finish on NotFound
  return { sweeps: [...stores].map(([res, store]) => ({ controller: res.controller, kind: res.kind, store, reobserve: () => ({ relist: true } satisfies ReplicaOwnerEvent) })) };
}
