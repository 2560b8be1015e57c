import { newerVersion } from '../../workflows/common/resource-version';
import { selectorMatches } from '../../workflows/common/selector';
import { isPodActive } from '../../workflows/replicaset/logic';
import type { ReplicaOwnerEvent, ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import type { PodSummary, ReplicaOwner, ReplicaOwnerKind } from '../../workflows/replicaset/types';
import { controllerRef, podSummary, replicaOwner } from '../kube/projections';
import { mergeReplicaOwnerEvents } from './merge';
import type { Handler } from '../informers/reflector';
import type { InformerInput, RouteFamily } from '../informers/family';
import { SetIndex } from '../informers/set-index';
import type { Signaller } from '../informers/signaller';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';

interface OwnerResource {
  controller: 'replicaset' | 'replicationcontroller';
  kind: ReplicaOwnerKind;
  path: string;
}

const OWNER_RESOURCES: OwnerResource[] = [
  { controller: 'replicaset', kind: 'ReplicaSet', path: '/apis/apps/v1/replicasets' },
  { controller: 'replicationcontroller', kind: 'ReplicationController', path: '/api/v1/replicationcontrollers' },
];

export const PODS_PATH = '/api/v1/pods';

/**
 * Above this many pods an owner is sent `relist` and reads them itself: a snapshot rides in the
 * signal and so in the workflow's history, where a few hundred summaries (~0.4 KiB each) are
 * fine and thousands are not.
 */
export const SNAPSHOT_MAX_PODS = 500;

/** The later of two resourceVersions; '' until one is known. */
const laterVersion = (a: string, b: string | undefined): string => (b && (!a || newerVersion(b, a)) ? b : a);

/** Pod summaries carry only what owners decide on, so equal summaries (but for the version) mean nothing changed for them. */
function sameForOwners(a: PodSummary, b: PodSummary): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

/**
 * Routes of the replicaset / replicationcontroller engine, as upstream's handlers enqueue keys:
 * an owner to itself; a pod to its controller, or, orphaned, to every owner whose selector matches
 * it; an update to the owners of both its old and new state.
 */
export function replicaRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  const enabled = OWNER_RESOURCES.filter((r) => input.controllers.includes(r.controller));
  if (!enabled.length) return undefined;

  const owners = new Map<string, { res: OwnerResource; owner: ReplicaOwner }>();
  const pods = new Map<string, PodSummary>();
  // pods by controller UID and orphans by namespace: a snapshot looks only at what could be the owner's
  const byController = new SetIndex<string, string>();
  const orphansByNs = new SetIndex<string, string>();
  /** the pod cache holds a full list (and everything watched since) */
  let podsListed = false;
  /** the newest pod resourceVersion the cache has taken in */
  let podsVersion = '';

  const indexPod = (p: PodSummary, add: boolean) => {
    const ref = controllerRef(p.ownerReferences);
    if (ref) (add ? byController.add(ref.uid, p.uid) : byController.delete(ref.uid, p.uid));
    else (add ? orphansByNs.add(p.namespace, p.uid) : orphansByNs.delete(p.namespace, p.uid));
  };
  const putPod = (p: PodSummary) => {
    const before = pods.get(p.uid);
    if (before) indexPod(before, false);
    pods.set(p.uid, p);
    indexPod(p, true);
  };
  const dropPod = (p: PodSummary) => {
    pods.delete(p.uid);
    indexPod(p, false);
  };

  const queue = (res: OwnerResource, who: { namespace: string; name: string; uid: string }, event: ReplicaOwnerEvent, urgent = false) => {
    const args: ReplicaOwnerWorkflowInput = {
      controller: res.controller, kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid,
      tuning: input.tuning, burstReplicas: input.burstReplicas,
    };
    signaller.queue({ controller: res.controller, workflow: replicaOwnerWorkflow, kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid, args },
      event, mergeReplicaOwnerEvents, urgent);
  };

  /**
   * What a new or relisted owner is sent: its pods from the synced cache, so its workflow need not
   * list the namespace; before the pods are listed (or for a very large owner), `relist` instead.
   */
  const fullEvent = (owner: ReplicaOwner): ReplicaOwnerEvent => {
    if (!podsListed || !podsVersion) return { owner, relist: true };
    const mine: PodSummary[] = [];
    for (const u of byController.get(owner.uid)) mine.push(pods.get(u)!);
    for (const u of orphansByNs.get(owner.namespace)) {
      const p = pods.get(u)!;
      if (selectorMatches(owner.selector, p.labels)) mine.push(p);
    }
    if (mine.length > SNAPSHOT_MAX_PODS) return { owner, relist: true };
    return { owner, snapshot: { ownerUid: owner.uid, pods: mine, resourceVersion: podsVersion } };
  };

  const ownersForPod = (p: PodSummary): Array<{ res: OwnerResource; owner: ReplicaOwner }> => {
    const ref = controllerRef(p.ownerReferences);
    if (ref) {
      const o = owners.get(ref.uid);
      return o ? [o] : [];
    }
    return [...owners.values()].filter((o) => o.owner.namespace === p.namespace && selectorMatches(o.owner.selector, p.labels));
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

  const ownerHandler = (res: OwnerResource): Handler => ({
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const owner = replicaOwner(res.kind, obj);
        seen.add(owner.uid);
        owners.set(owner.uid, { res, owner });
        // at start-up the pods' first list finishing sends these, with their snapshots
        if (podsListed) queue(res, owner, fullEvent(owner));
      }
      for (const [uid, o] of owners) {
        if (o.res === res && !seen.has(uid)) {
          owners.delete(uid);
          queue(res, o.owner, { ownerDeletedUid: uid });
        }
      }
    },
    event(type, obj) {
      const owner = replicaOwner(res.kind, obj);
      if (type === 'DELETED') {
        owners.delete(owner.uid);
        queue(res, owner, { ownerDeletedUid: owner.uid });
      } else {
        const known = owners.get(owner.uid);
        owners.set(owner.uid, { res, owner });
        // a spec change (a new generation) is acted on at once; our own status writes are routine
        queue(res, owner, known || !podsListed ? { owner } : fullEvent(owner), known?.owner.generation !== owner.generation);
      }
    },
  });

  const podHandler: Handler = {
    relisted(objects, resourceVersion) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const p = podSummary(obj);
        seen.add(p.uid);
        const before = pods.get(p.uid);
        putPod(p);
        // after a watch gap, what changed or appeared meanwhile reaches its owners as events would have
        if (podsListed && before?.resourceVersion !== p.resourceVersion) routePod(before, p);
      }
      for (const [uid, p] of [...pods]) {
        if (!seen.has(uid)) {
          dropPod(p);
          routePod(p, undefined);
        }
      }
      podsVersion = laterVersion(podsVersion, resourceVersion);
      if (!podsListed) {
        podsListed = true;
        // the owners listed so far waited for this list: each now gets its pods in one signal
        for (const { res, owner } of owners.values()) queue(res, owner, fullEvent(owner));
      }
    },
    event(type, obj) {
      const p = podSummary(obj);
      podsVersion = laterVersion(podsVersion, p.resourceVersion);
      const before = pods.get(p.uid);
      if (type === 'DELETED') {
        dropPod(before ?? p);
        routePod(before ?? p, undefined);
      } else {
        putPod(p);
        routePod(before, p);
      }
    },
  };

  return {
    handlers: new Map<string, Handler>([...enabled.map((r) => [r.path, ownerHandler(r)] as [string, Handler]), [PODS_PATH, podHandler]]),
    sizes: () => ({ replicaOwners: owners.size, pods: pods.size }),
  };
}
