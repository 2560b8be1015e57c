import type { FieldMask } from '../informers/fields';
import type { LabelSelector } from '../../workflows/common/meta';
import { WHOLE_OBJECT } from '../informers/local-reads';
import type { KubeObject } from '../kube/projections';
import {
  ANN_BETA_DEFAULT_CLASS,
  ANN_DEFAULT_CLASS,
  type ClaimView,
  type ClassView,
  type ObjectMetaJson,
  type PersistentVolumeClaimJson,
  type PersistentVolumeJson,
  type VolumeSourceKind,
  type VolumeView,
} from '../../workflows/pv-binder/types';

/** A StorageClass as the API's JSON, what the binder reads of it. */
interface StorageClassJson {
  metadata?: ObjectMetaJson;
  provisioner?: string;
  volumeBindingMode?: string;
  reclaimPolicy?: string;
  mountOptions?: string[];
}

/** What the binder reads of a pod, as the API's JSON. */
interface ContainerStatusJson {
  state?: { running?: unknown; waiting?: unknown; terminated?: unknown };
}
interface PodJson {
  metadata?: ObjectMetaJson;
  spec?: { nodeName?: string; volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName: string }; ephemeral?: unknown }> };
  status?: { phase?: string; containerStatuses?: ContainerStatusJson[]; initContainerStatuses?: ContainerStatusJson[]; ephemeralContainerStatuses?: ContainerStatusJson[] };
}

/** Claims and volumes are kept whole: the binder puts them back whole (its role grants update, not patch). */
export const CLAIM_FIELDS: FieldMask = WHOLE_OBJECT;
export const VOLUME_FIELDS: FieldMask = WHOLE_OBJECT;
export const CLASS_FIELDS: FieldMask = { metadata: true, provisioner: true, volumeBindingMode: true, reclaimPolicy: true, mountOptions: true };
/** What the binder reads of pods: which claims they use, where they run and whether they are done. */
export const BINDER_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { nodeName: true, volumes: true },
  status: { phase: true, containerStatuses: { state: true }, initContainerStatuses: { state: true }, ephemeralContainerStatuses: { state: true } },
};

export function claimView(o: KubeObject): ClaimView {
  const c = o as PersistentVolumeClaimJson;
  const m = c.metadata ?? {};
  const s = c.spec ?? {};
  const st = c.status ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    annotations: { ...m.annotations },
    ...(s.storageClassName != null ? { storageClassName: s.storageClassName } : {}),
    volumeName: s.volumeName ?? '',
    accessModes: [...(s.accessModes ?? [])],
    ...(s.resources?.requests?.storage != null ? { request: String(s.resources.requests.storage) } : {}),
    ...(s.selector ? { selector: s.selector as LabelSelector } : {}),
    ...(s.volumeMode ? { volumeMode: s.volumeMode } : {}),
    ...(s.volumeAttributesClassName ? { volumeAttributesClassName: s.volumeAttributesClassName } : {}),
    hasDataSource: !!(s.dataSource || s.dataSourceRef),
    ...(st.phase ? { phase: st.phase } : {}),
    ...(st.capacity?.storage != null ? { statusCapacity: String(st.capacity.storage) } : {}),
    ...(st.accessModes ? { statusAccessModes: [...st.accessModes] } : {}),
    ...(st.currentVolumeAttributesClassName ? { currentVolumeAttributesClassName: st.currentVolumeAttributesClassName } : {}),
    deleting: !!m.deletionTimestamp,
  };
}

function sourceOf(s: NonNullable<PersistentVolumeJson['spec']>): VolumeSourceKind {
  if (s.hostPath) return 'hostPath';
  if (s.nfs) return 'nfs';
  if (s.csi) return 'csi';
  if (s.local) return 'local';
  if (s.fc) return 'fc';
  if (s.iscsi) return 'iscsi';
  if (s.portworxVolume) return 'portworx';
  return 'other';
}

export function volumeView(o: KubeObject): VolumeView {
  const v = o as PersistentVolumeJson;
  const m = v.metadata ?? {};
  const s = v.spec ?? {};
  const st = v.status ?? {};
  const ref = s.claimRef;
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    annotations: { ...m.annotations },
    labels: { ...m.labels },
    finalizers: [...(m.finalizers ?? [])],
    storageClassName: s.storageClassName ?? '',
    ...(s.capacity?.storage != null ? { capacity: String(s.capacity.storage) } : {}),
    accessModes: [...(s.accessModes ?? [])],
    ...(s.volumeMode ? { volumeMode: s.volumeMode } : {}),
    ...(s.volumeAttributesClassName ? { volumeAttributesClassName: s.volumeAttributesClassName } : {}),
    ...(ref ? { claimRef: { namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid ?? '' } } : {}),
    reclaimPolicy: s.persistentVolumeReclaimPolicy ?? '',
    ...(st.phase ? { phase: st.phase } : {}),
    ...(st.message ? { message: st.message } : {}),
    deleting: !!m.deletionTimestamp,
    source: sourceOf(s),
    ...(s.hostPath ? { hostPath: s.hostPath.path } : {}),
    ...(s.nfs ? { nfs: { server: s.nfs.server, path: s.nfs.path } } : {}),
  };
}

export function classView(o: KubeObject): ClassView {
  const c = o as StorageClassJson;
  const m = c.metadata ?? {};
  const ann = m.annotations ?? {};
  return {
    name: m.name ?? '',
    provisioner: c.provisioner ?? '',
    ...(c.volumeBindingMode ? { volumeBindingMode: c.volumeBindingMode } : {}),
    ...(c.reclaimPolicy ? { reclaimPolicy: c.reclaimPolicy } : {}),
    mountOptions: [...(c.mountOptions ?? [])],
    isDefault: ann[ANN_DEFAULT_CLASS] === 'true' || ann[ANN_BETA_DEFAULT_CLASS] === 'true',
    creationTimestamp: m.creationTimestamp ?? '',
  };
}

/** The claim keys (namespace/name) a pod uses: its claims, and the claims of its ephemeral volumes. */
export function podClaimKeys(o: KubeObject): string[] {
  const p = o as PodJson;
  const ns = p.metadata?.namespace ?? '';
  const keys: string[] = [];
  for (const v of p.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim) keys.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    else if (v.ephemeral) keys.push(`${ns}/${p.metadata?.name ?? ''}-${v.name}`);
  }
  return keys;
}

const notRunning = (statuses: ContainerStatusJson[] | undefined) => (statuses ?? []).every((s) => !!s.state?.terminated || !!s.state?.waiting);

/** upstream's IsPodTerminated: finished, or being deleted with nothing left running */
export function podTerminated(o: KubeObject): boolean {
  const p = o as PodJson;
  const st = p.status ?? {};
  if (st.phase === 'Failed' || st.phase === 'Succeeded') return true;
  return !!p.metadata?.deletionTimestamp && notRunning(st.initContainerStatuses) && notRunning(st.containerStatuses) && notRunning(st.ephemeralContainerStatuses);
}

/** The default class upstream's GetDefaultClass picks: the newest, then by name. */
export function newestDefaultClass(classes: readonly ClassView[]): string | undefined {
  const d = classes.filter((c) => c.isDefault).sort((a, b) =>
    a.creationTimestamp === b.creationTimestamp ? (a.name < b.name ? -1 : 1) : a.creationTimestamp > b.creationTimestamp ? -1 : 1);
  return d[0]?.name;
}
