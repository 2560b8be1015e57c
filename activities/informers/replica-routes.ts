import { selectorMatches } from '../../workflows/common/selector';
import type { ReplicaOwnerEvent, ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import type { PodSummary, ReplicaOwner, ReplicaOwnerKind } from '../../workflows/replicaset/types';
import { controllerRef, podSummary, replicaOwner } from '../kube/projections';
import { mergeReplicaOwnerEvents } from '../routing';
import type { Handler } from './reflector';
import type { InformerInput, RouteFamily } from './family';
import type { Signaller } from './signaller';

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

  const queue = (res: OwnerResource, who: { namespace: string; name: string; uid: string }, event: ReplicaOwnerEvent) => {
    const args: ReplicaOwnerWorkflowInput = {
      controller: res.controller, kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid,
      tuning: input.tuning, burstReplicas: input.burstReplicas,
    };
    signaller.queue({ controller: res.controller, workflowType: 'replicaOwnerWorkflow', kind: res.kind, namespace: who.namespace, name: who.name, uid: who.uid, args },
      event, mergeReplicaOwnerEvents);
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
    for (const o of targets.values()) queue(o.res, o.owner, after ? { pods: [after] } : { podsDeleted: [before!.uid] });
  };

  const ownerHandler = (res: OwnerResource): Handler => ({
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const owner = replicaOwner(res.kind, obj);
        seen.add(owner.uid);
        owners.set(owner.uid, { res, owner });
        queue(res, owner, { owner, relist: true });
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
        owners.set(owner.uid, { res, owner });
        queue(res, owner, { owner });
      }
    },
  });

  const podHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const obj of objects) {
        const p = podSummary(obj);
        seen.add(p.uid);
        const before = pods.get(p.uid);
        pods.set(p.uid, p);
        if (before && before.resourceVersion !== p.resourceVersion) routePod(before, p);
      }
      for (const [uid, p] of pods) {
        if (!seen.has(uid)) {
          pods.delete(uid);
          routePod(p, undefined);
        }
      }
    },
    event(type, obj) {
      const p = podSummary(obj);
      const before = pods.get(p.uid);
      if (type === 'DELETED') {
        pods.delete(p.uid);
        routePod(before ?? p, undefined);
      } else {
        pods.set(p.uid, p);
        routePod(before, p);
      }
    },
  };

  return {
    handlers: new Map<string, Handler>([...enabled.map((r) => [r.path, ownerHandler(r)] as [string, Handler]), [PODS_PATH, podHandler]]),
    sizes: () => ({ replicaOwners: owners.size, pods: pods.size }),
  };
}
