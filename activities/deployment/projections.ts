import type { DeploymentStatus, DeploymentStrategy, DeploymentView, IntOrPercent, ReplicaSetView } from '../../workflows/deployment/types';
import type { ReplicaCondition } from '../../workflows/replicaset/types';
import type { LabelSelector, PodTemplate } from '../../workflows/common/meta';
import { objectIdentity, type KubeObject } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { METADATA, type FieldMask } from '../informers/fields';

const num = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);

function strategyOf(spec: Record<string, unknown>): DeploymentStrategy {
  const s = (spec.strategy ?? {}) as { type?: string; rollingUpdate?: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent } };
  if (s.type === 'Recreate') return { type: 'Recreate' };
  return { type: 'RollingUpdate', maxSurge: s.rollingUpdate?.maxSurge ?? '25%', maxUnavailable: s.rollingUpdate?.maxUnavailable ?? '25%' };
}

/** What deploymentView reads of a Deployment. */
export const DEPLOYMENT_VIEW_FIELDS: FieldMask = { metadata: true, spec: true, status: true };

export function deploymentView(o: KubeObject): DeploymentView {
  const m = o.metadata ?? {};
  const spec = o.spec ?? {};
  const st = (o.status ?? {}) as Partial<DeploymentStatus>;
  return {
    ...objectIdentity(o),
    labels: m.labels ?? {},
    annotations: m.annotations ?? {},
    replicas: num(spec.replicas, 1),
    selector: (spec.selector as LabelSelector | undefined) ?? {},
    template: (spec.template as PodTemplate | undefined) ?? { spec: {} },
    strategy: strategyOf(spec),
    minReadySeconds: num(spec.minReadySeconds, 0),
    revisionHistoryLimit: typeof spec.revisionHistoryLimit === 'number' ? spec.revisionHistoryLimit : spec.revisionHistoryLimit === undefined ? 10 : null,
    progressDeadlineSeconds: typeof spec.progressDeadlineSeconds === 'number' ? spec.progressDeadlineSeconds : spec.progressDeadlineSeconds === undefined ? 600 : null,
    paused: spec.paused === true,
    status: {
      observedGeneration: st.observedGeneration ?? 0,
      replicas: st.replicas ?? 0,
      updatedReplicas: st.updatedReplicas ?? 0,
      readyReplicas: st.readyReplicas ?? 0,
      availableReplicas: st.availableReplicas ?? 0,
      unavailableReplicas: st.unavailableReplicas ?? 0,
      ...(st.terminatingReplicas !== undefined ? { terminatingReplicas: st.terminatingReplicas } : {}),
      ...(st.collisionCount !== undefined ? { collisionCount: st.collisionCount } : {}),
      conditions: st.conditions ?? [],
    },
  };
}

/** What replicaSetView reads of a ReplicaSet. */
export const REPLICA_SET_VIEW_FIELDS: FieldMask = { metadata: true, spec: { replicas: true, minReadySeconds: true, template: true, selector: true }, status: true };

export function replicaSetView(o: KubeObject): ReplicaSetView {
  const m = o.metadata ?? {};
  const spec = o.spec ?? {};
  const st = (o.status ?? {}) as Partial<ReplicaSetView['status']> & { conditions?: ReplicaCondition[] };
  return {
    ...objectIdentity(o),
    creationTimestamp: m.creationTimestamp ?? '',
    labels: m.labels ?? {},
    annotations: m.annotations ?? {},
    ownerReferences: m.ownerReferences ?? [],
    replicas: num(spec.replicas, 1),
    minReadySeconds: num(spec.minReadySeconds, 0),
    template: (spec.template as PodTemplate | undefined) ?? { spec: {} },
    selector: (spec.selector as LabelSelector | undefined) ?? {},
    status: {
      replicas: st.replicas ?? 0,
      readyReplicas: st.readyReplicas ?? 0,
      availableReplicas: st.availableReplicas ?? 0,
      fullyLabeledReplicas: st.fullyLabeledReplicas ?? 0,
      observedGeneration: st.observedGeneration ?? 0,
      ...(st.terminatingReplicas !== undefined ? { terminatingReplicas: st.terminatingReplicas } : {}),
      ...(st.conditions ? { conditions: st.conditions } : {}),
    },
  };
}

/** What the deployment controller's routes key on: who a Deployment is, which orphans it may adopt, its strategy. */
export interface DeploymentRouting {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  selector: LabelSelector;
  /** Recreate waits for its old pods to go, so their deletions wake it */
  recreate: boolean;
}

/** What deploymentRouting reads of a Deployment. */
export const DEPLOYMENT_ROUTING_FIELDS: FieldMask = { metadata: true, spec: { selector: true, strategy: { type: true } } };

export function deploymentRouting(o: KubeObject): DeploymentRouting {
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

/** What the routes read of a ReplicaSet or a pod: the namespace, labels and controller are metadata only. */
export interface OwnedRouting {
  namespace: string;
  labels: Record<string, string>;
  controllerUid?: string;
}

/** What ownedRouting reads of a ReplicaSet or pod: nothing beyond the metadata every store keeps. */
export const OWNED_ROUTING_FIELDS: FieldMask = METADATA;

export function ownedRouting(o: KubeObject): OwnedRouting {
  const uid = controllerRef(o.metadata?.ownerReferences)?.uid;
  return { namespace: o.metadata?.namespace ?? '', labels: o.metadata?.labels ?? {}, ...(uid ? { controllerUid: uid } : {}) };
}
