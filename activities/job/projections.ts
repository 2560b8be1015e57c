import type { LabelSelector } from '../../workflows/common/meta';
import {
  JOB_TRACKING_FINALIZER,
  type CompletionMode,
  type ConditionLike,
  type ContainerStatusLike,
  type JobStatus,
  type PodFailurePolicy,
  type PodPhase,
  type PodReplacementPolicy,
  type SuccessPolicy,
} from '../../workflows/job/api';
import type { JobPod, JobView } from '../../workflows/job/types';
import { objectIdentity, type KubeObject } from '../kube/projections';
import type { FieldMask } from '../informers/fields';

const INT32_MAX = 2147483647;

interface JobSpecJson {
  parallelism?: number;
  completions?: number;
  completionMode?: CompletionMode;
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  activeDeadlineSeconds?: number;
  podFailurePolicy?: PodFailurePolicy;
  successPolicy?: SuccessPolicy;
  suspend?: boolean;
  podReplacementPolicy?: PodReplacementPolicy;
  selector?: LabelSelector;
  managedBy?: string;
  template?: { spec?: { restartPolicy?: string } };
}

/** What jobView reads of a Job: the spec but for the pod template, of which only the restart policy. */
export const JOB_VIEW_FIELDS: FieldMask = {
  metadata: true,
  spec: {
    parallelism: true, completions: true, completionMode: true, backoffLimit: true, backoffLimitPerIndex: true, maxFailedIndexes: true,
    activeDeadlineSeconds: true, podFailurePolicy: true, successPolicy: true, suspend: true, podReplacementPolicy: true, selector: true,
    managedBy: true, template: { spec: { restartPolicy: true } },
  },
  status: true,
};

/** A Job as the job controller reads it; the API's defaults are applied where the JSON lacks them. */
export function jobView(o: KubeObject): JobView {
  const spec = (o.spec ?? {}) as JobSpecJson;
  const m = o.metadata ?? {};
  const id = objectIdentity(o);
  return {
    namespace: id.namespace,
    name: id.name,
    uid: id.uid,
    resourceVersion: id.resourceVersion,
    generation: id.generation,
    creationTimestamp: m.creationTimestamp ?? '',
    ...(id.deletionTimestamp ? { deletionTimestamp: id.deletionTimestamp } : {}),
    labels: m.labels ?? {},
    parallelism: spec.parallelism ?? 1,
    ...(spec.completions !== undefined && spec.completions !== null ? { completions: spec.completions } : {}),
    completionMode: spec.completionMode ?? 'NonIndexed',
    backoffLimit: spec.backoffLimit ?? (spec.backoffLimitPerIndex !== undefined ? INT32_MAX : 6),
    ...opt('backoffLimitPerIndex', spec.backoffLimitPerIndex),
    ...opt('maxFailedIndexes', spec.maxFailedIndexes),
    ...opt('activeDeadlineSeconds', spec.activeDeadlineSeconds),
    ...opt('podFailurePolicy', spec.podFailurePolicy),
    ...opt('successPolicy', spec.successPolicy),
    suspend: spec.suspend === true,
    ...opt('podReplacementPolicy', spec.podReplacementPolicy),
    selector: spec.selector ?? {},
    ...opt('managedBy', spec.managedBy),
    restartPolicy: spec.template?.spec?.restartPolicy ?? 'Always',
    status: (o.status ?? {}) as JobStatus,
  };
}

function opt<K extends string, V>(key: K, v: V | undefined | null): Partial<Record<K, V>> {
  return v === undefined || v === null ? {} : ({ [key]: v } as Record<K, V>);
}

interface ContainerStatusJson {
  name: string;
  restartCount?: number;
  state?: { terminated?: { exitCode?: number; reason?: string; finishedAt?: string } };
}

function containerStatus(c: ContainerStatusJson): ContainerStatusLike {
  const t = c.state?.terminated;
  return t
    ? { name: c.name, terminated: { exitCode: t.exitCode ?? 0, ...(t.reason ? { reason: t.reason } : {}), ...(t.finishedAt ? { finishedAt: t.finishedAt } : {}) } }
    : { name: c.name };
}

const CONTAINER_STATUS_FIELDS: FieldMask = { name: true, restartCount: true, state: { terminated: true } };

/** What jobPod reads of a pod. */
export const JOB_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, initContainers: { name: true, restartPolicy: true } },
  status: { phase: true, conditions: true, containerStatuses: CONTAINER_STATUS_FIELDS, initContainerStatuses: CONTAINER_STATUS_FIELDS },
};

/** What the job controller reads of a pod. */
export function jobPod(o: KubeObject): JobPod {
  const m = (o.metadata ?? {}) as NonNullable<KubeObject['metadata']> & { finalizers?: string[]; deletionGracePeriodSeconds?: number };
  const status = (o.status ?? {}) as {
    phase?: PodPhase;
    conditions?: Array<ConditionLike>;
    containerStatuses?: ContainerStatusJson[];
    initContainerStatuses?: ContainerStatusJson[];
  };
  const spec = (o.spec ?? {}) as { nodeName?: string; initContainers?: Array<{ name: string; restartPolicy?: string }> };
  const sidecars = (spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name);
  const containers = status.containerStatuses ?? [];
  const inits = status.initContainerStatuses ?? [];
  const conditions = (status.conditions ?? []).map((c) => ({
    type: c.type, status: c.status,
    ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}), ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
  }));
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.deletionGracePeriodSeconds !== undefined ? { deletionGracePeriodSeconds: m.deletionGracePeriodSeconds } : {}),
    labels: m.labels ?? {},
    annotations: m.annotations ?? {},
    ownerReferences: (m.ownerReferences ?? []).map((r) => ({
      apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid,
      ...(r.controller !== undefined ? { controller: r.controller } : {}),
      ...(r.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: r.blockOwnerDeletion } : {}),
    })),
    hasTrackingFinalizer: (m.finalizers ?? []).includes(JOB_TRACKING_FINALIZER),
    phase: status.phase ?? 'Pending',
    conditions,
    containerStatuses: containers.map(containerStatus),
    initContainerStatuses: inits.map(containerStatus),
    ready: conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
    restartCount: Math.max(0, ...containers.map((c) => c.restartCount ?? 0)),
    sidecarRestartCount: Math.max(0, ...inits.filter((c) => sidecars.includes(c.name)).map((c) => c.restartCount ?? 0)),
    totalRestarts: [...containers, ...inits].reduce((n, c) => n + (c.restartCount ?? 0), 0),
    ...(sidecars.length ? { sidecarContainerNames: sidecars } : {}),
  };
}
