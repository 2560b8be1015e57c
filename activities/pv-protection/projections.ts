import { PV_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import type { PvView } from '../../workflows/pv-protection/logic';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';

/** What pvView reads of a volume: its metadata (finalizers, deletion) and its phase. */
export const PV_PROTECTION_FIELDS: FieldMask = { metadata: true, status: { phase: true } };

export function pvView(o: KubeObject): PvView {
  const m = o.metadata ?? {};
  const phase = (o.status as { phase?: string } | undefined)?.phase;
  return {
    namespace: '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    deleting: !!m.deletionTimestamp,
    protected: (m.finalizers ?? []).includes(PV_PROTECTION_FINALIZER),
    phase: phase ?? '',
  };
}
