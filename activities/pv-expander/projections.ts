import type { PersistentVolumeClaimJson } from '../../workflows/pv-binder/types';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import type { ExpansionClaim } from '../../workflows/pv-expander/logic';

/** What the expander reads of a claim: its size asked and had, its phase and volume. */
export const EXPANSION_CLAIM_FIELDS: FieldMask = {
  metadata: true,
  spec: { volumeName: true, resources: { requests: true } },
  status: { phase: true, capacity: true },
};

export function expansionClaim(o: KubeObject): ExpansionClaim {
  const c = o as PersistentVolumeClaimJson;
  const m = c.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    ...(c.status?.phase ? { phase: c.status.phase } : {}),
    volumeName: c.spec?.volumeName ?? '',
    ...(c.spec?.resources?.requests?.storage != null ? { request: String(c.spec.resources.requests.storage) } : {}),
    ...(c.status?.capacity?.storage != null ? { capacity: String(c.status.capacity.storage) } : {}),
    annotations: { ...m.annotations },
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
  };
}
