import { VAC_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import { pvClassNames, pvcClassNames, type PvVacFields, type PvcVacFields, type VacView } from '../../workflows/vac-protection/logic';
import type { FieldMask } from '../informers/fields';
import type { StoreIndex } from '../informers/store';
import type { KubeObject } from '../kube/projections';

/** What vacView reads of a class: its metadata. */
export const VAC_FIELDS: FieldMask = { metadata: true };

/** What pvcClassNames reads of a claim. */
export const PVC_CLASS_FIELDS: FieldMask = {
  metadata: true,
  spec: { volumeAttributesClassName: true },
  status: { currentVolumeAttributesClassName: true, modifyVolumeStatus: { targetVolumeAttributesClassName: true } },
};

/** What pvClassNames reads of a volume. */
export const PV_CLASS_FIELDS: FieldMask = { metadata: true, spec: { volumeAttributesClassName: true } };

export function vacView(o: KubeObject): VacView {
  const m = o.metadata ?? {};
  return {
    namespace: '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    deleting: !!m.deletionTimestamp,
    protected: (m.finalizers ?? []).includes(VAC_PROTECTION_FINALIZER),
  };
}

export const classesOfPvc = (o: KubeObject) => pvcClassNames(o as PvcVacFields);
export const classesOfPv = (o: KubeObject) => pvClassNames(o as PvVacFields);

/** Claims by every class they name (upstream's volumeAttributesClassName index on claims). */
export const PVCS_BY_CLASS: StoreIndex = { name: 'pvc-by-vac', keys: classesOfPvc };

/** Volumes by their class. */
export const PVS_BY_CLASS: StoreIndex = { name: 'pv-by-vac', keys: classesOfPv };
