import { createHash } from 'node:crypto';
import type { V1AttachedVolume, V1CSIDriverSpec, V1NodeCondition, V1Taint, V1VolumeAttachmentSpec } from '@kubernetes/client-node';
import { csiUniqueName, parseCsiUniqueName } from '../../workflows/attachdetach/logic';
import { ANN_CONTROLLER_MANAGED_ATTACH, TAINT_OUT_OF_SERVICE, type AttachableVolume, type AttachmentView, type NodeView } from '../../workflows/attachdetach/types';
import type { FieldMask } from '../informers/fields';
import type { StoreIndex } from '../informers/store';
import type { KubeObject } from '../kube/projections';
import type { ObjectMetaJson, PersistentVolumeClaimJson, PersistentVolumeJson } from '../../workflows/pv-binder/types';

/*
 * What the attach/detach controller reads of pods, claims, volumes, nodes, VolumeAttachments and
 * CSIDrivers, and the pure views its routes and activities share.
 */

export const ATTACH_CLAIM_FIELDS: FieldMask = { metadata: true, spec: { volumeName: true }, status: { phase: true } };
export const ATTACH_VOLUME_FIELDS: FieldMask = {
  metadata: true,
  spec: { claimRef: true, accessModes: true, csi: true, awsElasticBlockStore: true, gcePersistentDisk: true, azureDisk: true, cinder: true },
};
export const ATTACH_NODE_FIELDS: FieldMask = {
  metadata: true,
  spec: { taints: true },
  status: { conditions: true, volumesAttached: true, volumesInUse: true },
};
export const ATTACHMENT_FIELDS: FieldMask = { metadata: true, spec: true, status: { attached: true, attachError: true, detachError: true } };
export const CSI_DRIVER_FIELDS: FieldMask = { metadata: true, spec: { attachRequired: true } };

/*
 * The API's JSON of what is read here: client-node's models where they hold no timestamp (its
 * models carry Dates where the JSON has RFC 3339 strings), fields written out elsewhere.
 */
/** A VolumeAttachment as the cache holds it (a pruned copy may lack fields the model requires). */
type AttachmentObject = KubeObject & {
  spec?: Partial<V1VolumeAttachmentSpec>;
  status?: { attached?: boolean; attachError?: { message?: string }; detachError?: { message?: string } };
};
/** A Node: its taints, its Ready condition's status and the volumes its status lists. */
export interface NodeJson {
  metadata?: ObjectMetaJson;
  spec?: { taints?: Array<Pick<V1Taint, 'key' | 'effect'>> };
  status?: { conditions?: Array<Pick<V1NodeCondition, 'type' | 'status'>>; volumesAttached?: V1AttachedVolume[]; volumesInUse?: string[] };
}
type CsiDriverJson = { metadata?: ObjectMetaJson; spec?: V1CSIDriverSpec };

/** upstream's CSI attachment name: `csi-` and the SHA-256 of handle, driver and node, in hex */
export function attachmentName(handle: string, driver: string, node: string): string {
  return `csi-${createHash('sha256').update(`${handle}${driver}${node}`).digest('hex')}`;
}

/** The CSI drivers the in-tree plugins upstream migrates to CSI attach through (csi-translation-lib). */
export const MIGRATED_DRIVERS = {
  awsElasticBlockStore: 'ebs.csi.aws.com',
  gcePersistentDisk: 'pd.csi.storage.gke.io',
  azureDisk: 'disk.csi.azure.com',
  cinder: 'cinder.csi.openstack.org',
} as const;

const AWS_VOLUME_ID = /^vol-[^/]*$/;
const ZONE_LABELS = ['failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone'];

/** upstream's translation of an AWS EBS volume ID (`aws://<zone>/vol-…` or `vol-…`) to the CSI handle */
function ebsHandle(volumeID: string): string | undefined {
  if (!volumeID.startsWith('aws://')) return volumeID;
  const id = volumeID.slice('aws://'.length).split('/').slice(1).join('/').replace(/^\/+|\/+$/g, '');
  return AWS_VOLUME_ID.test(id) ? id : undefined;
}

/** upstream's GCE PD handle: zonal by the volume's zone label, regional by its zones, else unspecified */
function gcePdHandle(pv: PersistentVolumeJson, pdName: string): string | undefined {
  const labels = pv.metadata?.labels ?? {};
  const zoneLabel = labels[ZONE_LABELS[0]] || labels[ZONE_LABELS[1]] || '';
  const zones = zoneLabel.split('__');
  if (zones.length === 1 && zones[0]) return `projects/UNSPECIFIED/zones/${zones[0]}/disks/${pdName}`;
  if (zones.length > 1) {
    const regions = new Set(zones.map((z) => z.slice(0, z.lastIndexOf('-'))));
    if (regions.size !== 1 || zones.some((z) => z.lastIndexOf('-') < 0)) return undefined;
    return `projects/UNSPECIFIED/regions/${[...regions][0]}/disks/${pdName}`;
  }
  return `projects/UNSPECIFIED/zones/UNSPECIFIED/disks/${pdName}`;
}

/** The CSI driver and handle a volume attaches by: its CSI source, or its migrated in-tree source translated. */
export function attachSource(pv: PersistentVolumeJson): { driver: string; handle: string } | undefined {
  const s = pv.spec;
  if (!s) return undefined;
  if (s.csi) return { driver: s.csi.driver, handle: s.csi.volumeHandle };
  if (s.awsElasticBlockStore) {
    const handle = ebsHandle(s.awsElasticBlockStore.volumeID);
    return handle === undefined ? undefined : { driver: MIGRATED_DRIVERS.awsElasticBlockStore, handle };
  }
  if (s.gcePersistentDisk) {
    const handle = gcePdHandle(pv, s.gcePersistentDisk.pdName);
    return handle === undefined ? undefined : { driver: MIGRATED_DRIVERS.gcePersistentDisk, handle };
  }
  if (s.azureDisk) return { driver: MIGRATED_DRIVERS.azureDisk, handle: s.azureDisk.diskURI };
  if (s.cinder) return { driver: MIGRATED_DRIVERS.cinder, handle: s.cinder.volumeID };
  return undefined;
}

/** A PersistentVolume as something to attach (its driver's attachRequired not yet considered). */
export function attachableVolume(o: KubeObject): AttachableVolume | undefined {
  const pv = o as PersistentVolumeJson;
  const src = attachSource(pv);
  if (!src) return undefined;
  const modes = pv.spec?.accessModes ?? [];
  return {
    uniqueName: csiUniqueName(src.driver, src.handle),
    driver: src.driver,
    handle: src.handle,
    pvName: pv.metadata?.name ?? '',
    multiAttach: modes.length === 0 || modes.includes('ReadWriteMany') || modes.includes('ReadOnlyMany'),
  };
}

/** Volumes by unique name: the watch finds the PersistentVolume behind a name the nodes report. */
export const VOLUMES_BY_UNIQUE_NAME: StoreIndex = {
  name: 'attachdetach/unique-name',
  keys: (o) => {
    const v = attachableVolume(o);
    return v ? [v.uniqueName] : [];
  },
};

/** Nodes by the unique names their status reports attached. */
export const NODES_BY_ATTACHED_VOLUME: StoreIndex = {
  name: 'attachdetach/attached-volume',
  keys: (o) => attachedNames(o),
};

/** VolumeAttachments by their PersistentVolume. */
export const ATTACHMENTS_BY_VOLUME: StoreIndex = {
  name: 'attachdetach/volume',
  keys: (o) => {
    const pv = (o as AttachmentObject).spec?.source?.persistentVolumeName;
    return pv ? [pv] : [];
  },
};

export const attachedNames = (o: KubeObject): string[] => ((o as NodeJson).status?.volumesAttached ?? []).map((v) => v.name);
export const inUseNames = (o: KubeObject): string[] => (o as NodeJson).status?.volumesInUse ?? [];
export const managedNode = (o: KubeObject | undefined): boolean => !!o && (o.metadata?.annotations ?? {})[ANN_CONTROLLER_MANAGED_ATTACH] !== undefined;

export function nodeReady(o: KubeObject): boolean {
  return ((o as NodeJson).status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function nodeView(o: KubeObject | undefined, uniqueName: string): NodeView {
  if (!o) return { exists: false, ready: false, outOfService: false, inUse: false, reported: false };
  return {
    exists: true,
    ready: nodeReady(o),
    outOfService: ((o as NodeJson).spec?.taints ?? []).some((t) => t.key === TAINT_OUT_OF_SERVICE),
    inUse: inUseNames(o).includes(uniqueName),
    reported: attachedNames(o).includes(uniqueName),
  };
}

export function attachmentView(o: KubeObject): AttachmentView {
  const va = o as AttachmentObject;
  return {
    name: va.metadata?.name ?? '',
    attached: !!va.status?.attached,
    ...(va.status?.attachError?.message !== undefined ? { attachError: va.status.attachError.message } : {}),
    ...(va.status?.detachError?.message !== undefined ? { detachError: va.status.detachError.message } : {}),
    deleting: !!va.metadata?.deletionTimestamp,
  };
}

/** The VolumeAttachment is this volume's on its node: named as the CSI attacher names it. */
export function attachmentOf(o: KubeObject, uniqueName: string): string | undefined {
  const va = o as AttachmentObject;
  const parsed = parseCsiUniqueName(uniqueName);
  const node = va.spec?.nodeName ?? '';
  if (!parsed || va.spec?.attacher !== parsed.driver) return undefined;
  return va.metadata?.name === attachmentName(parsed.handle, parsed.driver, node) ? node : undefined;
}

/** A CSIDriver that says its volumes need no attach (upstream's skipAttach). */
export const skipsAttach = (o: KubeObject | undefined): boolean => (o as CsiDriverJson | undefined)?.spec?.attachRequired === false;

/** The claim is bound, to this volume, which names it back (upstream's getPVCFromCache and getPVSpecFromCache). */
export function claimBoundTo(c: KubeObject | undefined, pv: KubeObject | undefined): boolean {
  const claim = c as PersistentVolumeClaimJson | undefined;
  const volume = pv as PersistentVolumeJson | undefined;
  if (!claim || !volume || claim.status?.phase !== 'Bound' || !claim.spec?.volumeName) return false;
  return claim.spec.volumeName === volume.metadata?.name && volume.spec?.claimRef?.uid === claim.metadata?.uid;
}
