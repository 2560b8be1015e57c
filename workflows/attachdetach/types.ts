/*
 * Payloads of the attach/detach controller. One workflow per attachable volume, named by the
 * volume's unique name as upstream's caches key it (`kubernetes.io/csi/<driver>^<handle>`), holds
 * that volume's actual state of the world: which nodes it is attached to, what is under way, and
 * since when a detach waits. The desired state comes from the watch with every signal.
 */

export const CONTROLLER = 'attachdetach';
/** the event source upstream's recorder names */
export const EVENT_COMPONENT = 'attachdetach-controller';
/** the node annotation a kubelet sets when it leaves attaching to the controller */
export const ANN_CONTROLLER_MANAGED_ATTACH = 'volumes.kubernetes.io/controller-managed-attach-detach';
/** the taint of the non-graceful node shutdown: volumes detach without waiting for unmount */
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** the CSI plugin's name, the prefix of every unique volume name it makes */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';

/** A volume the CSI attacher can attach, as the watch resolved it from a bound PersistentVolume. */
export interface AttachableVolume {
  uniqueName: string;
  driver: string;
  handle: string;
  /** the PersistentVolume: the VolumeAttachment's source, and the name upstream's messages give */
  pvName: string;
  /** upstream's IsMultiAttachAllowed: ReadWriteMany or ReadOnlyMany, or no access mode at all */
  multiAttach: boolean;
}

export interface ScheduledPod {
  namespace: string;
  name: string;
  uid: string;
}

/** A node the volume should be attached to, and the pods there that use it. */
export interface DesiredNode {
  node: string;
  pods: ScheduledPod[];
}

/** What the watch sends: the volume and where it is wanted, as its caches see them now. */
export interface AttachDetachEvent {
  /** absent when no bound PersistentVolume names the volume any more (it can only be detached) */
  volume?: AttachableVolume;
  desired: DesiredNode[];
  /** the periodic sync found an attachment a node reports without an attached VolumeAttachment */
  verify?: boolean;
}

/** A VolumeAttachment of this volume, as the observation found it. */
export interface AttachmentView {
  name: string;
  attached: boolean;
  /** status.attachError.message, when the attacher reported one */
  attachError?: string;
  detachError?: string;
  deleting: boolean;
}

/** A node, as far as this volume is concerned. */
export interface NodeView {
  exists: boolean;
  ready: boolean;
  outOfService: boolean;
  /** the kubelet lists the volume in status.volumesInUse: it is mounted there */
  inUse: boolean;
  /** status.volumesAttached lists the volume */
  reported: boolean;
}

export interface AttachmentObservation {
  /** every node asked about, and every node reporting the volume attached */
  nodes: Record<string, NodeView>;
  /** this volume's VolumeAttachments, by node */
  attachments: Record<string, AttachmentView>;
}

/** One node of the volume's actual state (upstream's nodeAttachedTo, plus the operation under way). */
export interface NodeAttachment {
  /** attached for certain; false: uncertain (an attach or detach that may have half happened) */
  confirmed: boolean;
  /** when a detach was first wanted (workflow time, ms), for the force-detach timeout */
  detachRequestedAt?: number;
  /** an attach or detach sent, waiting for the attacher, until the deadline */
  op?: { kind: 'attach' | 'detach'; deadline: number };
  /**
   * consecutive failed operations of one kind, and when the next of that kind may start (upstream's
   * exponential backoff, which holds back only an operation of the same name)
   */
  failures: number;
  retryAt?: number;
  failedOp?: 'attach' | 'detach';
}

export interface AttachDetachSettings {
  /** upstream's ReconcilerMaxWaitForUnmountDuration (6 min) */
  maxWaitForUnmountMs: number;
  /** --disable-force-detach-on-timeout */
  disableForceDetachOnTimeout: boolean;
}
