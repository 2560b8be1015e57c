import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { parseTime } from '../../workflows/replicaset/logic';
import { DISRUPTION_TARGET, type DisruptionTargetView } from '../../workflows/disruption/logic';
import type { IntOrPercent, LabelSelector, PdbCondition, PdbPodView, PdbStatus, PdbView, StaleConditionPod } from '../../workflows/disruption/types';

/** What pdbView reads of a PodDisruptionBudget. */
export const PDB_FIELDS: FieldMask = { metadata: true, spec: true, status: true };

type PdbObject = KubeObject & {
  spec?: { selector?: LabelSelector | null; minAvailable?: IntOrPercent | null; maxUnavailable?: IntOrPercent | null };
  status?: Partial<PdbStatus> & { conditions?: PdbCondition[] | null; disruptedPods?: Record<string, string> | null };
};

export function pdbView(o: KubeObject): PdbView {
  const b = o as PdbObject;
  const m = b.metadata ?? {};
  const st = b.status ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    generation: m.generation ?? 0,
    selector: b.spec?.selector ?? null,
    ...(b.spec?.minAvailable != null ? { minAvailable: b.spec.minAvailable } : {}),
    ...(b.spec?.maxUnavailable != null ? { maxUnavailable: b.spec.maxUnavailable } : {}),
    status: {
      ...(st.observedGeneration ? { observedGeneration: st.observedGeneration } : {}),
      ...(st.disruptedPods && Object.keys(st.disruptedPods).length ? { disruptedPods: { ...st.disruptedPods } } : {}),
      disruptionsAllowed: st.disruptionsAllowed ?? 0,
      currentHealthy: st.currentHealthy ?? 0,
      desiredHealthy: st.desiredHealthy ?? 0,
      expectedPods: st.expectedPods ?? 0,
      ...(st.conditions?.length ? { conditions: st.conditions.map((c) => ({ ...c })) } : {}),
    },
  };
}

type PodConditions = Array<{ type: string; status: string; reason?: string; lastTransitionTime?: string }>;

/** What the disruption routes read of a pod: labels and owners (in metadata), readiness, the DisruptionTarget mark, the phase. */
export const DISRUPTION_POD_FIELDS: FieldMask = {
  metadata: true,
  status: { phase: true, conditions: { type: true, status: true, reason: true, lastTransitionTime: true } },
};

const conditionsOf = (o: KubeObject) => ((o.status as { conditions?: PodConditions } | undefined)?.conditions ?? []);

export function pdbPodView(o: KubeObject): PdbPodView {
  const m = o.metadata ?? {};
  const ref = controllerRef(m.ownerReferences);
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    deleting: !!m.deletionTimestamp,
    ready: conditionsOf(o).some((c) => c.type === 'Ready' && c.status === 'True'),
    ...(ref ? { controllerRef: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid } } : {}),
  };
}

export function disruptionTargetView(o: KubeObject): DisruptionTargetView {
  const c = conditionsOf(o).find((x) => x.type === DISRUPTION_TARGET);
  return {
    deleting: !!o.metadata?.deletionTimestamp,
    phase: (o.status as { phase?: string } | undefined)?.phase,
    ...(c ? { condition: { status: c.status, reason: c.reason, lastTransitionTime: c.lastTransitionTime } } : {}),
  };
}

export function staleConditionPod(o: KubeObject): StaleConditionPod {
  const m = o.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    since: parseTime(disruptionTargetView(o).condition?.lastTransitionTime) ?? 0,
  };
}

/** What the scale finders read of a workload from the shared cache: its identity, controller and replicas. */
export const SCALE_FIELDS: FieldMask = { metadata: true, spec: { replicas: true } };
