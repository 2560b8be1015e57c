/**
 * Payloads of the resourcequota controller. What crosses the workflow boundary is quota-sized
 * (resource name -> quantity string maps); the namespace's objects stay in the observe activity.
 * The `*Like` shapes are the subsets of API JSON the evaluators in ./usage.ts read.
 */

/** resource name -> quantity string, as in spec.hard and status.used */
export type ResourceMap = Record<string, string>;

/** The kinds whose changes can move a quota's usage and that the informer watches for it. */
export const QUOTA_OBJECT_KINDS = ['pods', 'services', 'persistentvolumeclaims', 'configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'] as const;
export type QuotaObjectKind = (typeof QUOTA_OBJECT_KINDS)[number];

export interface ScopedResourceSelectorRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

/** spec of a ResourceQuota */
export interface QuotaSpecLike {
  hard?: ResourceMap;
  scopes?: string[];
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] } | null;
}

/** What the workflow knows of the quota it keeps: identity, version, and the maps it compares. */
export interface QuotaView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** spec.hard */
  hard: ResourceMap;
  /** status.hard, absent when never written */
  statusHard?: ResourceMap;
  /** status.used, absent when never written */
  statusUsed?: ResourceMap;
}

export interface ResourceRequirementsLike {
  requests?: ResourceMap | null;
  limits?: ResourceMap | null;
}

export interface ContainerLike {
  name: string;
  resources?: ResourceRequirementsLike | null;
  restartPolicy?: string;
}

export interface ContainerStatusLike {
  name: string;
  allocatedResources?: ResourceMap | null;
  resources?: ResourceRequirementsLike | null;
}

export interface PodAffinityTermLike {
  namespaces?: string[] | null;
  namespaceSelector?: unknown;
}

export interface PodAffinityLike {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTermLike[] | null;
  preferredDuringSchedulingIgnoredDuringExecution?: Array<{ podAffinityTerm?: PodAffinityTermLike | null }> | null;
}

export interface PodLike {
  metadata?: { name?: string; deletionTimestamp?: string | null; deletionGracePeriodSeconds?: number | null };
  spec?: {
    containers?: ContainerLike[] | null;
    initContainers?: ContainerLike[] | null;
    overhead?: ResourceMap | null;
    /** pod-level resources */
    resources?: ResourceRequirementsLike | null;
    activeDeadlineSeconds?: number | null;
    priorityClassName?: string;
    affinity?: { podAffinity?: PodAffinityLike | null; podAntiAffinity?: PodAffinityLike | null } | null;
  };
  status?: {
    phase?: string;
    qosClass?: string;
    conditions?: Array<{ type: string; status?: string; reason?: string }> | null;
    containerStatuses?: ContainerStatusLike[] | null;
    initContainerStatuses?: ContainerStatusLike[] | null;
  };
}

export interface ServiceLike {
  spec?: { type?: string; ports?: unknown[] | null };
}

export interface PvcLike {
  metadata?: { annotations?: Record<string, string> | null };
  spec?: { storageClassName?: string | null; resources?: { requests?: ResourceMap | null } | null };
  status?: { allocatedResources?: ResourceMap | null };
}

/**
 * What the observe activity read in the quota's namespace. An absent field was not read (not
 * needed, or not asked for this time): the resources it feeds are not recounted.
 */
export interface NamespaceObjects {
  pods?: PodLike[];
  services?: ServiceLike[];
  persistentvolumeclaims?: PvcLike[];
  /** numbers of objects by group-resource (`configmaps`, `deployments.apps`) for object-count quota */
  counts?: Record<string, number>;
}

export interface UsageResult {
  /** the recounted resources of the quota, canonical quantity strings */
  used: ResourceMap;
  /** evaluators that failed; their resources are left out of `used` */
  errors: string[];
  /**
   * when a counted pod passes the end of its deletion grace period and stops counting without any
   * event to say so, ms from `now`
   */
  recheckAfterMs?: number;
}
