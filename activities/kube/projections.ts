import type { FieldMask } from '../informers/fields';
import type { PodPhase, PodSummary, ReplicaOwner, ReplicaOwnerKind, ReplicaStatus } from '../../workflows/replicaset/types';
import type { LabelSelector, OwnerRef } from '../../workflows/common/meta';

/** The subset of an API object's JSON these projections read. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerRef[];
    finalizers?: string[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** The identity and version fields every projection of a controller-managed object starts with. */
export function objectIdentity(o: KubeObject) {
  const m = o.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    generation: m.generation ?? 0,
    deletionTimestamp: m.deletionTimestamp,
  };
}

/** What podSummary reads of a pod (the shared cache keeps no more of it for this reader). */
export const POD_SUMMARY_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, initContainers: { name: true, restartPolicy: true } },
  status: { phase: true, conditions: true, containerStatuses: { restartCount: true }, initContainerStatuses: { name: true, restartCount: true } },
};

export function podSummary(o: KubeObject): PodSummary {
  const m = o.metadata ?? {};
  const status = (o.status ?? {}) as {
    phase?: PodPhase;
    conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }>;
    containerStatuses?: Array<{ restartCount?: number }>;
    initContainerStatuses?: Array<{ name: string; restartCount?: number }>;
  };
  const sidecars = new Set(
    ((o.spec as { initContainers?: Array<{ name: string; restartPolicy?: string }> } | undefined)?.initContainers ?? [])
      .filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  const cost = Number(m.annotations?.[DELETION_COST]);
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    deletionTimestamp: m.deletionTimestamp,
    labels: m.labels ?? {},
    ownerReferences: (m.ownerReferences ?? []).map((r) => ({
      apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid, controller: r.controller, blockOwnerDeletion: r.blockOwnerDeletion,
    })),
    phase: status.phase ?? 'Pending',
    nodeName: (o.spec as { nodeName?: string } | undefined)?.nodeName || undefined,
    ready: ready?.status === 'True',
    readySince: ready?.status === 'True' ? ready.lastTransitionTime : undefined,
    restartCount: Math.max(0, ...(status.containerStatuses ?? []).map((c) => c.restartCount ?? 0)),
    sidecarRestartCount: Math.max(0, ...(status.initContainerStatuses ?? []).filter((c) => sidecars.has(c.name)).map((c) => c.restartCount ?? 0)),
    deletionCost: Number.isInteger(cost) ? cost : 0,
  };
}

/** What replicaOwner reads of a ReplicaSet or ReplicationController. */
export const REPLICA_OWNER_FIELDS: FieldMask = { metadata: true, spec: true, status: true };

/** A ReplicationController's map selector is the matchLabels of a LabelSelector. */
function ownerSelector(kind: ReplicaOwnerKind, spec: Record<string, unknown>): LabelSelector {
  if (kind === 'ReplicationController') {
    const sel = spec.selector as Record<string, string> | undefined;
    const tmplLabels = (spec.template as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels;
    // apiserver defaults an RC's empty selector to its template labels
    return { matchLabels: sel && Object.keys(sel).length ? sel : tmplLabels ?? {} };
  }
  return (spec.selector as LabelSelector | undefined) ?? {};
}

export function replicaOwner(kind: ReplicaOwnerKind, o: KubeObject): ReplicaOwner {
  const spec = o.spec ?? {};
  const st = (o.status ?? {}) as Partial<ReplicaStatus>;
  return {
    kind,
    apiVersion: kind === 'ReplicaSet' ? 'apps/v1' : 'v1',
    ...objectIdentity(o),
    replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
    minReadySeconds: typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0,
    selector: ownerSelector(kind, spec),
    template: (spec.template as ReplicaOwner['template'] | undefined) ?? { spec: {} },
    status: {
      replicas: st.replicas ?? 0,
      fullyLabeledReplicas: st.fullyLabeledReplicas ?? 0,
      readyReplicas: st.readyReplicas ?? 0,
      availableReplicas: st.availableReplicas ?? 0,
      ...(st.terminatingReplicas !== undefined ? { terminatingReplicas: st.terminatingReplicas } : {}),
      observedGeneration: st.observedGeneration ?? 0,
      conditions: st.conditions ?? [],
    },
  };
}

