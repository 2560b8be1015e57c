import { selectorMatches } from '../../workflows/common/selector';
import type { DeploymentEvent, DeploymentWorkflowInput } from '../../workflows/deployment/workflow';
import type { LabelSelector } from '../../workflows/replicaset/types';
import { KubeObject, controllerRef } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import { PODS_PATH } from '../replicaset/routes';
import type { Signaller } from '../informers/signaller';
import { deploymentWorkflow } from '../../workflows/deployment/workflow';

const DEPLOYMENTS_PATH = '/apis/apps/v1/deployments';
const REPLICASETS_PATH = '/apis/apps/v1/replicasets';

interface DeploymentEntry {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  selector: LabelSelector;
  recreate: boolean;
}

interface ReplicaSetEntry {
  namespace: string;
  labels: Record<string, string>;
  controllerUid?: string;
}

export function mergeDeploymentEvents(a: DeploymentEvent, b: DeploymentEvent): DeploymentEvent {
  const out: DeploymentEvent = {};
  if (a.changed || b.changed) out.changed = true;
  if (a.relist || b.relist) out.relist = true;
  const deleted = b.deletedUid ?? a.deletedUid;
  if (deleted) out.deletedUid = deleted;
  return out;
}

function deploymentEntry(o: KubeObject): DeploymentEntry {
  const spec = (o.spec ?? {}) as { selector?: LabelSelector; strategy?: { type?: string } };
  return {
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    uid: o.metadata?.uid ?? '',
    generation: o.metadata?.generation ?? 0,
    selector: spec.selector ?? {},
    recreate: spec.strategy?.type === 'Recreate',
  };
}

/**
 * Routes of the deployment controller, as upstream's handlers: a Deployment to itself; a
 * ReplicaSet to its controlling Deployment or, orphaned, to every Deployment whose selector
 * matches it (old and new state on update); a deleted pod to its Recreate Deployment, which waits
 * for old pods to go before it starts new ones.
 */
export function deploymentRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('deployment')) return undefined;
  const deployments = new Map<string, DeploymentEntry>();
  const replicaSets = new Map<string, ReplicaSetEntry>();

  const queue = (d: Pick<DeploymentEntry, 'namespace' | 'name' | 'uid'>, event: DeploymentEvent, urgent = false) => {
    const args: DeploymentWorkflowInput = { namespace: d.namespace, name: d.name, uid: d.uid, tuning: input.tuning };
    signaller.queue({ controller: 'deployment', workflow: deploymentWorkflow, kind: 'Deployment', namespace: d.namespace, name: d.name, uid: d.uid, args },
      event, mergeDeploymentEvents, urgent);
  };

  const ownersOf = (rs: ReplicaSetEntry): DeploymentEntry[] => {
    if (rs.controllerUid) {
      const d = deployments.get(rs.controllerUid);
      return d ? [d] : [];
    }
    return [...deployments.values()].filter((d) => d.namespace === rs.namespace && selectorMatches(d.selector, rs.labels));
  };

  const rsEntry = (o: KubeObject): ReplicaSetEntry => ({
    namespace: o.metadata?.namespace ?? '',
    labels: o.metadata?.labels ?? {},
    controllerUid: controllerRef(o.metadata?.ownerReferences)?.uid,
  });

  const deploymentHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const d = deploymentEntry(o);
        seen.add(d.uid);
        deployments.set(d.uid, d);
        queue(d, { relist: true });
      }
      for (const [uid, d] of deployments) {
        if (!seen.has(uid)) {
          deployments.delete(uid);
          queue(d, { deletedUid: uid });
        }
      }
    },
    event(type, o) {
      const d = deploymentEntry(o);
      if (type === 'DELETED') {
        deployments.delete(d.uid);
        queue(d, { deletedUid: d.uid });
      } else {
        const before = deployments.get(d.uid);
        deployments.set(d.uid, d);
        // a spec change (a new generation) is acted on at once; our own status writes are routine
        queue(d, { changed: true }, before?.generation !== d.generation);
      }
    },
  };

  const routeReplicaSet = (before: ReplicaSetEntry | undefined, after: ReplicaSetEntry | undefined) => {
    const targets = new Map<string, DeploymentEntry>();
    for (const rs of [before, after]) if (rs) for (const d of ownersOf(rs)) targets.set(d.uid, d);
    for (const d of targets.values()) queue(d, { changed: true });
  };

  const replicaSetHandler: Handler = {
    relisted(objects) {
      replicaSets.clear();
      for (const o of objects) replicaSets.set(o.metadata?.uid ?? '', rsEntry(o));
    },
    event(type, o) {
      const uid = o.metadata?.uid ?? '';
      const before = replicaSets.get(uid);
      const after = type === 'DELETED' ? undefined : rsEntry(o);
      if (after) replicaSets.set(uid, after);
      else replicaSets.delete(uid);
      routeReplicaSet(before ?? (after ? undefined : rsEntry(o)), after);
    },
  };

  const podHandler: Handler = {
    relisted() {},
    event(type, o) {
      if (type !== 'DELETED') return;
      const rsUid = controllerRef(o.metadata?.ownerReferences)?.uid;
      const rs = rsUid ? replicaSets.get(rsUid) : undefined;
      const d = rs?.controllerUid ? deployments.get(rs.controllerUid) : undefined;
      if (d?.recreate) queue(d, { changed: true });
    },
  };

  return {
    handlers: new Map<string, Handler>([[DEPLOYMENTS_PATH, deploymentHandler], [REPLICASETS_PATH, replicaSetHandler], [PODS_PATH, podHandler]]),
    sizes: () => ({ deployments: deployments.size, deploymentReplicaSets: replicaSets.size }),
  };
}
