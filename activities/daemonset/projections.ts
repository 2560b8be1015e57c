import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { CONTROLLER_REVISION_FIELDS, controllerRevisionView, revisionedWorkloadMeta } from '../kube/controller-revisions';
import { controllerRef } from '../../workflows/common/controller-ref';
import type { LabelSelector, OwnerRef, PodTemplate } from '../../workflows/common/meta';
import { REVISION_HASH_LABEL } from '../../workflows/common/controller-history';
import { TEMPLATE_GENERATION_ANNOTATION, TEMPLATE_GENERATION_LABEL, targetNodeName, type DaemonNodeView, type DaemonPodSpecView, type DaemonUpdateStrategy } from '../../workflows/daemonset/predicates';
import type { AffinityView } from '../../workflows/common/node-affinity';
import type { TaintView } from '../../workflows/common/tolerations';
import type { DaemonPodView, DaemonRevisionView, DaemonSetStatusView, DaemonSetView } from '../../workflows/daemonset/types';

/** A DaemonSet is read whole: its template is hashed and stored in revisions exactly as served. */
export const DAEMONSET_FIELDS: FieldMask = { metadata: true, spec: true, status: true };

type DaemonSetObject = KubeObject & {
  spec?: {
    selector?: LabelSelector | null;
    template?: PodTemplate & Record<string, unknown>;
    updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } | null };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
  };
  status?: Partial<DaemonSetStatusView>;
};

export function daemonSetView(o: KubeObject): DaemonSetView {
  const d = o as DaemonSetObject;
  const m = d.metadata ?? {};
  const spec = d.spec ?? {};
  const st = d.status ?? {};
  const ru = spec.updateStrategy?.rollingUpdate;
  const updateStrategy: DaemonUpdateStrategy = spec.updateStrategy?.type === 'OnDelete'
    ? { type: 'OnDelete' }
    : { type: 'RollingUpdate', ...(ru?.maxUnavailable !== undefined ? { maxUnavailable: ru.maxUnavailable } : {}), ...(ru?.maxSurge !== undefined ? { maxSurge: ru.maxSurge } : {}) };
  const generation = m.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  return {
    ...revisionedWorkloadMeta(d, spec.selector),
    template: spec.template ?? { spec: {} },
    updateStrategy,
    minReadySeconds: spec.minReadySeconds ?? 0,
    revisionHistoryLimit: spec.revisionHistoryLimit ?? 10,
    ...(generation !== undefined && /^-?[0-9]+$/.test(generation) ? { templateGeneration: String(BigInt(generation)) } : {}),
    status: {
      currentNumberScheduled: st.currentNumberScheduled ?? 0,
      numberMisscheduled: st.numberMisscheduled ?? 0,
      desiredNumberScheduled: st.desiredNumberScheduled ?? 0,
      numberReady: st.numberReady ?? 0,
      ...(st.observedGeneration !== undefined ? { observedGeneration: st.observedGeneration } : {}),
      ...(st.updatedNumberScheduled !== undefined ? { updatedNumberScheduled: st.updatedNumberScheduled } : {}),
      ...(st.numberAvailable !== undefined ? { numberAvailable: st.numberAvailable } : {}),
      ...(st.numberUnavailable !== undefined ? { numberUnavailable: st.numberUnavailable } : {}),
      ...(st.collisionCount !== undefined ? { collisionCount: st.collisionCount } : {}),
    },
  };
}

/** The pod spec the node predicates read, from the DaemonSet's template. */
export function daemonPodSpec(ds: Pick<DaemonSetView, 'template'>): DaemonPodSpecView {
  return ds.template.spec as DaemonPodSpecView;
}

/** What daemonNodeView reads of a node: labels (in metadata) and taints. */
export const DAEMON_NODE_FIELDS: FieldMask = { metadata: true, spec: { taints: true } };

export function daemonNodeView(o: KubeObject): DaemonNodeView {
  return {
    name: o.metadata?.name ?? '',
    labels: o.metadata?.labels ?? {},
    taints: ((o.spec as { taints?: TaintView[] | null } | undefined)?.taints ?? []).map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect })),
  };
}

/** What daemonPodView reads of a pod. */
export const DAEMON_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: true } } },
  status: { phase: true, conditions: { type: true, status: true, lastTransitionTime: true } },
};

export function daemonPodView(o: KubeObject): DaemonPodView {
  const m = o.metadata ?? {};
  const spec = (o.spec ?? {}) as { nodeName?: string; affinity?: AffinityView | null };
  const st = (o.status ?? {}) as { phase?: string; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
  const ready = (st.conditions ?? []).find((c) => c.type === 'Ready');
  const ref = controllerRef(m.ownerReferences);
  const node = targetNodeName({ nodeName: spec.nodeName, affinity: spec.affinity });
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    labels: m.labels ?? {},
    ...(ref ? { controllerRef: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: true } } : {}),
    ...(node ? { node } : {}),
    scheduled: !!spec.nodeName,
    ...(m.labels?.[REVISION_HASH_LABEL] ? { hash: m.labels[REVISION_HASH_LABEL] } : {}),
    ...(m.labels?.[TEMPLATE_GENERATION_LABEL] ? { templateGeneration: m.labels[TEMPLATE_GENERATION_LABEL] } : {}),
    phase: st.phase ?? 'Pending',
    ready: ready?.status === 'True',
    ...(ready?.status === 'True' && ready.lastTransitionTime ? { readySince: ready.lastTransitionTime } : {}),
    creationTimestamp: m.creationTimestamp ?? '',
    deleting: !!m.deletionTimestamp,
  };
}

/** What revisionView reads of a ControllerRevision. */
export const REVISION_FIELDS: FieldMask = CONTROLLER_REVISION_FIELDS;

const daemonRefView = (ref: OwnerRef): OwnerRef => ({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: true });

export function revisionView(o: KubeObject): DaemonRevisionView {
  return controllerRevisionView(o, daemonRefView, REVISION_HASH_LABEL);
}
