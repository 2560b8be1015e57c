import type { V1Pod } from '@kubernetes/client-node';
import {
  CLAIM_FINALIZER,
  POD_CLAIM_ANNOTATION,
  namedClaims,
  type ClaimPodView,
  type ClaimTemplateView,
  type ClaimView,
  type ConsumerRef,
  type PodClaimEntry,
} from '../../workflows/resourceclaim/logic';
import type { FieldMask } from '../informers/fields';
import type { StoreIndex } from '../informers/store';
import type { KubeObject } from '../kube/projections';

/** What claimPodView reads of a pod. */
export const CLAIM_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, resourceClaims: true },
  status: { phase: true, resourceClaimStatuses: true },
};

/** What claimView reads of a claim (the allocation only for its presence, but it is small). */
export const CLAIM_FIELDS: FieldMask = { metadata: true, status: { reservedFor: true, allocation: true } };

type ClaimObject = KubeObject & {
  status?: { reservedFor?: Array<{ apiGroup?: string; resource: string; name: string; uid: string }> | null; allocation?: unknown };
};

type TemplateObject = KubeObject & {
  spec?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } | null; spec?: Record<string, unknown> };
};

export function claimPodView(o: KubeObject): ClaimPodView {
  const p = o as V1Pod;
  const m = p.metadata ?? {};
  const claims: PodClaimEntry[] = (p.spec?.resourceClaims ?? []).map((c) => ({
    name: c.name,
    ...(c.resourceClaimName != null ? { resourceClaimName: c.resourceClaimName } : {}),
    ...(c.resourceClaimTemplateName != null ? { resourceClaimTemplateName: c.resourceClaimTemplateName } : {}),
  }));
  const statuses: Record<string, string | null> = {};
  for (const s of p.status?.resourceClaimStatuses ?? []) statuses[s.name] = s.resourceClaimName ?? null;
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    deleting: !!m.deletionTimestamp,
    nodeName: p.spec?.nodeName ?? '',
    phase: p.status?.phase ?? '',
    claims,
    statuses,
  };
}

export function claimView(o: KubeObject): ClaimView {
  const c = o as ClaimObject;
  const m = c.metadata ?? {};
  const reservedFor: ConsumerRef[] = (c.status?.reservedFor ?? []).map((r) => ({
    ...(r.apiGroup ? { apiGroup: r.apiGroup } : {}), resource: r.resource, name: r.name, uid: r.uid,
  }));
  const podClaimName = m.annotations?.[POD_CLAIM_ANNOTATION];
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    deleting: !!m.deletionTimestamp,
    controllerPods: (m.ownerReferences ?? [])
      .filter((r) => r.controller === true && r.apiVersion === 'v1' && r.kind === 'Pod')
      .map((r) => ({ name: r.name, uid: r.uid })),
    ...(podClaimName !== undefined ? { podClaimName } : {}),
    reservedFor,
    allocated: c.status?.allocation != null,
    finalizer: (m.finalizers ?? []).includes(CLAIM_FINALIZER),
  };
}

export function templateView(o: KubeObject): ClaimTemplateView {
  const t = o as TemplateObject;
  const meta = t.spec?.metadata ?? {};
  return {
    ...(meta.labels ? { labels: meta.labels } : {}),
    ...(meta.annotations ? { annotations: meta.annotations } : {}),
    spec: t.spec?.spec ?? {},
  };
}

/** upstream's pod-resource-claim-index: the claims a pod's entries name, as `namespace/name`. */
export const PODS_BY_RESOURCE_CLAIM: StoreIndex = {
  name: 'pod-resource-claim',
  keys: (o) => {
    const pod = claimPodView(o);
    return namedClaims(pod).map((n) => `${pod.namespace}/${n}`);
  },
};
