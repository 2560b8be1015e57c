import type { V1PersistentVolumeClaimSpec, V1PersistentVolumeSpec } from '@kubernetes/client-node';
import type { LabelSelector } from '../common/meta';

/*
 * What the persistent volume binder reads of claims, volumes and classes: compact projections
 * that ride in signals and activity results, never whole objects.
 */

export const CONTROLLER = 'persistentvolume-binder';
/** the component upstream's recorder names on this controller's Events */
export const EVENT_COMPONENT = 'persistentvolume-controller';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_PRE_RESIZE_CAPACITY = 'volume.alpha.kubernetes.io/pre-resize-capacity';
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
/** the in-tree deletion finalizer upstream keeps on dynamically provisioned in-tree volumes */
export const FINALIZER_IN_TREE_DELETION = 'kubernetes.io/pv-controller';
/** the external provisioner's deletion finalizer, removed from in-tree volumes */
export const FINALIZER_EXTERNAL_DELETION = 'external-provisioner.volume.kubernetes.io/finalizer';

export type ClaimPhase = 'Pending' | 'Bound' | 'Lost';
export type VolumePhase = 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';

export interface ClaimView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  annotations: Record<string, string>;
  /** spec.storageClassName; absent when unset (null and absent are the same to the binder) */
  storageClassName?: string;
  /** spec.volumeName, '' when unset */
  volumeName: string;
  accessModes: string[];
  /** spec.resources.requests.storage, as written */
  request?: string;
  selector?: LabelSelector;
  volumeMode?: string;
  volumeAttributesClassName?: string;
  /** spec.dataSource or dataSourceRef is set: only CSI provisioners may provision from it */
  hasDataSource: boolean;
  phase?: string;
  /** status.capacity.storage */
  statusCapacity?: string;
  statusAccessModes?: string[];
  currentVolumeAttributesClassName?: string;
  deleting: boolean;
}

export type VolumeSourceKind = 'hostPath' | 'nfs' | 'csi' | 'local' | 'fc' | 'iscsi' | 'portworx' | 'other';

export interface ClaimRef {
  namespace: string;
  name: string;
  /** '' when pre-bound by name only */
  uid: string;
}

export interface VolumeView {
  name: string;
  uid: string;
  resourceVersion: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
  finalizers: string[];
  storageClassName: string;
  /** spec.capacity.storage, as written */
  capacity?: string;
  accessModes: string[];
  volumeMode?: string;
  volumeAttributesClassName?: string;
  claimRef?: ClaimRef;
  reclaimPolicy: string;
  phase?: string;
  message?: string;
  deleting: boolean;
  source: VolumeSourceKind;
  /** spec.hostPath.path, for the host-path deleter and recycler */
  hostPath?: string;
  /** spec.nfs, for the NFS recycler */
  nfs?: { server: string; path: string };
}

export interface ClassView {
  name: string;
  provisioner: string;
  /** absent only on objects the API server did not default */
  volumeBindingMode?: string;
  reclaimPolicy?: string;
  mountOptions: string[];
  isDefault: boolean;
  creationTimestamp: string;
}

/** A claim's event as the watch reports it: the claim as it stands, or that it is gone. */
export interface ClaimEvent {
  claim?: ClaimView;
  gone?: boolean;
  /** a volume the claim named changed or went away: observe again */
  nudge?: boolean;
}

export interface VolumeEvent {
  volume?: VolumeView;
  gone?: boolean;
  /** the claim the volume points at changed or went away: observe again */
  nudge?: boolean;
}

export interface BinderEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/*
 * Claims and volumes as the API's JSON: client-node's spec models are exact (they hold no
 * timestamps); metadata and status are written out, their times being RFC 3339 strings here.
 */
export interface ObjectMetaJson {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface PersistentVolumeJson {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaJson;
  spec?: V1PersistentVolumeSpec;
  status?: { phase?: string; message?: string; reason?: string; lastPhaseTransitionTime?: string };
}

export interface PersistentVolumeClaimJson {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaJson;
  spec?: V1PersistentVolumeClaimSpec;
  status?: {
    phase?: string;
    accessModes?: string[];
    capacity?: Record<string, string>;
    currentVolumeAttributesClassName?: string;
    /** conditions, resize and modify statuses: kept as read, never edited here */
    [other: string]: unknown;
  };
}
