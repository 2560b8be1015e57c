import type { DeploymentStatus, DeploymentStrategy, DeploymentView, IntOrPercent, ReplicaSetView } from '../../workflows/deployment/types';
import type { LabelSelector, PodTemplate, ReplicaCondition } from '../../workflows/replicaset/types';
import { KubeObject, objectIdentity } from '../kube/projections';

const num = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);

function strategyOf(spec: Record<string, unknown>): DeploymentStrategy {
  const s = (spec.strategy ?? {}) as { type?: string; rollingUpdate?: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent } };
  if (s.type === 'Recreate') return { type: 'Recreate' };
  return { type: 'RollingUpdate', maxSurge: s.rollingUpdate?.maxSurge ?? '25%', maxUnavailable: s.rollingUpdate?.maxUnavailable ?? '25%' };
}

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
