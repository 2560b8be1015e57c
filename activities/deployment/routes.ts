import { selectorMatches } from '../../workflows/common/selector';
import type { DeploymentObservation } from '../../workflows/deployment/cache';
import { mergeDeploymentEvents, type DeploymentEvent, type DeploymentWorkflowInput } from '../../workflows/deployment/workflow';
import {
  DEPLOYMENT_ROUTING_FIELDS, DEPLOYMENT_VIEW_FIELDS, OWNED_ROUTING_FIELDS, REPLICA_SET_VIEW_FIELDS,
  deploymentRouting, deploymentView, ownedRouting, replicaSetView, type DeploymentRouting, type OwnedRouting,
} from './projections';
import { unionMask, type FieldMask } from '../informers/fields';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import { BY_CONTROLLER_UID, BY_NAMESPACE, ORPHANS_BY_NAMESPACE } from '../informers/indexes';
import type { RouteContext, SignalGateFactory } from '../../workers/descriptor';
import type { Store } from '../informers/store';
import { SIGNAL_BUDGET_BYTES } from '../informers/signaller';
import { deploymentWorkflow } from '../../workflows/deployment/workflow';
import { deploymentWouldAct } from '../../workflows/deployment/would-act';
import { fitObservation } from './fit';

/** What a Recreate snapshot reads of a pod: its controller (metadata) and whether it is still active. */
export const ACTIVE_POD_FIELDS: FieldMask = { metadata: true, status: { phase: true } };

const isActivePod = (phase: string | undefined) => phase !== 'Succeeded' && phase !== 'Failed';

interface DeploymentStores {
  deployments: Store;
  replicaSets: Store;
  pods: Store;
}

/**
 * The Deployment and what it owns or may adopt as the cache has them, as observeDeployment reads
 * them from the API: the workflow plans from it once it includes the workflow's own last writes.
 * None until every store it is made of has listed.
 */
function snapshotOf({ deployments, replicaSets, pods }: DeploymentStores, uid: string): DeploymentObservation | undefined {
  const obj = deployments.get(uid);
  if (!obj || !deployments.synced || !replicaSets.synced) return undefined;
  const d = deploymentView(obj);
  const recreate = d.strategy.type === 'Recreate';
  if (recreate && !pods.synced) return undefined;
  const owned = [
    ...replicaSets.byIndex(BY_CONTROLLER_UID, d.uid),
    ...replicaSets.byIndex(ORPHANS_BY_NAMESPACE, d.namespace).filter((rs) => selectorMatches(d.selector, rs.metadata?.labels ?? {})),
  ].map(replicaSetView);
  const activePodsByReplicaSet: Record<string, number> = {};
  if (recreate) {
    for (const rs of owned) {
      const n = pods.byIndex(BY_CONTROLLER_UID, rs.uid).filter((p) => isActivePod((p.status as { phase?: string } | undefined)?.phase)).length;
      if (n) activePodsByReplicaSet[rs.uid] = n;
    }
  }
  return { deployment: d, replicaSets: owned, activePodsByReplicaSet, versions: { deployments: deployments.resourceVersion, replicaSets: replicaSets.resourceVersion } };
}

/**
 * The deployment controller's signal gate: an event is held when the workflow, planning from the
 * cache's snapshot, would neither write nor set a timer. That is the echo of its own status
 * write and ReplicaSet status changes that change nothing it reports (its ReplicaSets' own status
 * echoes, a pod restart that leaves readiness alone).
 */
export const deploymentSignalGate: SignalGateFactory = ({ cache }) => {
  const stores = (): DeploymentStores | undefined => {
    const deployments = cache.store(RESOURCES.deployments);
    const replicaSets = cache.store(RESOURCES.replicaSets);
    const pods = cache.store(RESOURCES.pods);
    return deployments && replicaSets && pods ? { deployments, replicaSets, pods } : undefined;
  };
  const snapshot = (uid: string) => {
    const s = stores();
    return s && snapshotOf(s, uid);
  };
  return {
    wouldAct(t) {
      // built again rather than taken from the pending event: the cache may have moved since the
      // route queued it, by changes not routed to the Deployment (an old pod's phase under Recreate)
      const s = snapshot(t.uid);
      return !s || deploymentWouldAct(s, Date.now());
    },
    full(t) {
      const s = snapshot(t.uid);
      return (s ? { changed: true, snapshot: s } : { relist: true }) satisfies DeploymentEvent;
    },
  };
};

/**
 * An event too large for a payload, cut down at its send: its snapshot fitted (fitObservation),
 * or, still too large, left out as a look again, and the workflow reads the Deployment from the API.
 */
export const shrinkDeploymentEvent = (event: unknown): DeploymentEvent => {
  const { snapshot, ...rest } = event as DeploymentEvent;
  const fitted = snapshot && fitObservation(snapshot);
  const shrunk = fitted ? { ...rest, snapshot: fitted } : rest;
  return Buffer.byteLength(JSON.stringify(shrunk)) <= SIGNAL_BUDGET_BYTES ? shrunk : { ...rest, lookAgain: true };
};

/**
 * Routes of the deployment controller, as upstream's handlers: a Deployment to itself; a
 * ReplicaSet to its controlling Deployment or, orphaned, to every Deployment whose selector
 * matches it (old and new state on update); a deleted pod to its Recreate Deployment, which waits
 * for old pods to go before it starts new ones.
 */
export function deploymentRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('deployment')) return undefined;

  /** `force`: a new, deleted or relisted Deployment, which the signal gate is not asked about */
  const queue = (d: Pick<DeploymentRouting, 'namespace' | 'name' | 'uid'>, event: DeploymentEvent, urgent = false, force = false) => {
    const args: DeploymentWorkflowInput = { namespace: d.namespace, name: d.name, uid: d.uid, tuning: input.tuning };
    const snapshot = event.deletedUid ? undefined : snapshotOf({ deployments, replicaSets, pods }, d.uid);
    signaller.queue({ controller: 'deployment', workflow: deploymentWorkflow, kind: 'Deployment', namespace: d.namespace, name: d.name, uid: d.uid, args, shrink: shrinkDeploymentEvent },
      snapshot ? { ...event, snapshot } : event, mergeDeploymentEvents, urgent, force);
  };

  /**
   * Once the Deployments, ReplicaSets and pods have all listed, every Deployment is sent `relist`
   * with its snapshot: after a restart each plans from the cache, without reading the API.
   */
  const sendAllOnceListed = (first: boolean) => {
    if (!first || !deployments.synced || !replicaSets.synced || !pods.synced) return;
    for (const o of deployments.list()) queue(deploymentRouting(o), { relist: true }, false, true);
  };

  const deployments = cache.watch(RESOURCES.deployments, unionMask(DEPLOYMENT_ROUTING_FIELDS, DEPLOYMENT_VIEW_FIELDS), {
    onListed: sendAllOnceListed,
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const d = deploymentRouting(ev.old);
        queue(d, { deletedUid: d.uid }, false, true);
        return;
      }
      const d = deploymentRouting(ev.obj);
      // the first list waits for the other stores (see sendAllOnceListed); a relist after a gap has each look afresh
      if (ev.source === 'list') return;
      if (ev.source === 'relist') {
        queue(d, { relist: true }, false, true);
        return;
      }
      // a spec change (a new generation) is acted on at once; our own status writes are routine
      const before = ev.type === 'updated' ? deploymentRouting(ev.old) : undefined;
      queue(d, { changed: true }, before?.generation !== d.generation, !before);
    },
  });
  deployments.addIndex(BY_NAMESPACE);

  const ownersOf = (rs: OwnedRouting): DeploymentRouting[] => {
    if (rs.controllerUid) {
      const d = deployments.get(rs.controllerUid);
      return d ? [deploymentRouting(d)] : [];
    }
    return deployments.byIndex(BY_NAMESPACE, rs.namespace).map(deploymentRouting).filter((d) => selectorMatches(d.selector, rs.labels));
  };

  const routeReplicaSet = (before: OwnedRouting | undefined, after: OwnedRouting | undefined) => {
    const targets = new Map<string, DeploymentRouting>();
    for (const rs of [before, after]) if (rs) for (const d of ownersOf(rs)) targets.set(d.uid, d);
    for (const d of targets.values()) queue(d, { changed: true });
  };

  const replicaSets = cache.watch(RESOURCES.replicaSets, unionMask(OWNED_ROUTING_FIELDS, REPLICA_SET_VIEW_FIELDS), {
    onListed: sendAllOnceListed,
    onEvent(ev) {
      // the first list only fills the store: every Deployment is sent `relist` by its own list
      if (ev.source === 'list') return;
      if (ev.type === 'deleted') {
        routeReplicaSet(ownedRouting(ev.old), undefined);
        return;
      }
      // after a watch gap, what changed or appeared meanwhile reaches its Deployments as events would have
      if (ev.type === 'updated' && ev.source === 'relist' && ev.old.metadata?.resourceVersion === ev.obj.metadata?.resourceVersion) return;
      routeReplicaSet(ev.type === 'updated' ? ownedRouting(ev.old) : undefined, ownedRouting(ev.obj));
    },
  });

  replicaSets.addIndex(BY_CONTROLLER_UID);
  replicaSets.addIndex(ORPHANS_BY_NAMESPACE);

  const pods = cache.watch(RESOURCES.pods, unionMask(OWNED_ROUTING_FIELDS, ACTIVE_POD_FIELDS), {
    onListed: sendAllOnceListed,
    onEvent(ev) {
      // only deletions matter (a Recreate rollout waits for them); one missed in a watch gap comes with the relist
      if (ev.type !== 'deleted') return;
      const rsUid = ownedRouting(ev.old).controllerUid;
      const rs = rsUid ? replicaSets.get(rsUid) : undefined;
      const dUid = rs && ownedRouting(rs).controllerUid;
      const d = dUid ? deployments.get(dUid) : undefined;
      if (d && deploymentRouting(d).recreate) queue(deploymentRouting(d), { changed: true });
    },
  });

  pods.addIndex(BY_CONTROLLER_UID);

  // a Deployment gone while no watch ran: told of its deletion as the watch would have told it
  return { sweeps: [{ controller: 'deployment', kind: 'Deployment', store: deployments, reobserve: (uid) => ({ deletedUid: uid ?? '' } satisfies DeploymentEvent) }] };
}
