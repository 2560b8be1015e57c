import { compareQuantities, tryParseQuantity } from '../common/quantity';
import { migratedDriver } from '../pv-binder/plugins';

/*
 * What upstream's expand controller does with a bound claim asking for more than it has, in 1.35:
 * no in-tree plugin it is built with expands volumes in the controller any more, so a claim is
 * either left to the CSI resizer of the in-tree plugin it migrated from (annotated with that
 * resizer) or to an external controller, with a Normal ExternalExpanding Event either way.
 */

export const CONTROLLER = 'persistentvolume-expander';
/** the component upstream's recorder names on this controller's Events */
export const EVENT_COMPONENT = 'volume_expand';
export const ANN_RESIZER = 'volume.kubernetes.io/storage-resizer';
export const ANN_PRE_RESIZE_CAPACITY = 'volume.alpha.kubernetes.io/pre-resize-capacity';

/** The in-tree plugin behind each migratable volume source, as csi-translation-lib recognises a PV. */
export const MIGRATABLE_SOURCES: Readonly<Record<string, string>> = {
  awsElasticBlockStore: 'kubernetes.io/aws-ebs',
  gcePersistentDisk: 'kubernetes.io/gce-pd',
  azureDisk: 'kubernetes.io/azure-disk',
  azureFile: 'kubernetes.io/azure-file',
  cinder: 'kubernetes.io/cinder',
  vsphereVolume: 'kubernetes.io/vsphere-volume',
  portworxVolume: 'kubernetes.io/portworx-volume',
};

export interface ExpansionClaim {
  namespace: string;
  name: string;
  uid: string;
  phase?: string;
  volumeName: string;
  /** spec.resources.requests.storage */
  request?: string;
  /** status.capacity.storage */
  capacity?: string;
  annotations: Record<string, string>;
  /** the claim's resourceVersion: which change of it an event reports */
  resourceVersion?: string;
}

export interface ExpansionVolume {
  name: string;
  claimRef?: { namespace: string; uid: string };
  annotations: Record<string, string>;
  /** the in-tree plugin of its source, when that source is one upstream migrates to CSI */
  inTreePlugin?: string;
}

export type ExpansionPlan =
  | { kind: 'none'; why: string }
  | { kind: 'error'; error: string }
  | { kind: 'external'; message: string }
  | { kind: 'migrated'; message: string; resizer: string };

const grows = (request: string | undefined, capacity: string | undefined): boolean => {
  const r = tryParseQuantity(request);
  const c = tryParseQuantity(capacity) ?? tryParseQuantity('0')!;
  return !!r && compareQuantities(r, c) > 0;
};

/** The claim's request is above its capacity. */
export function asksForMore(c: ExpansionClaim): boolean {
  return grows(c.request, c.capacity);
}

/** Upstream's enqueue rule: a bound claim on add, or on an update that raised its request or its capacity. */
export function wantsExpansionSync(before: ExpansionClaim | undefined, after: ExpansionClaim): boolean {
  if (after.phase !== 'Bound') return false;
  if (!before) return true;
  return grows(after.request, before.request) || grows(after.capacity, before.capacity);
}

/** Upstream's syncHandler for a claim and the volume it names (undefined: the read failed). */
export function planExpansion(c: ExpansionClaim, v: ExpansionVolume | undefined): ExpansionPlan {
  if (!v) return { kind: 'error', error: `failed to get PV "${c.volumeName}"` };
  if (!v.claimRef || v.claimRef.namespace !== c.namespace || v.claimRef.uid !== c.uid) {
    return { kind: 'error', error: `persistent Volume is not bound to PVC being updated : ${c.namespace}/${c.name}` };
  }
  if (!grows(c.request, c.capacity) && !(ANN_PRE_RESIZE_CAPACITY in v.annotations)) return { kind: 'none', why: 'the claim asks for no more than it has' };
  if (v.inTreePlugin) {
    const driver = migratedDriver(v.inTreePlugin)!;
    return { kind: 'migrated', resizer: driver, message: `CSI migration enabled for ${v.inTreePlugin}; waiting for external resizer to expand the pvc` };
  }
  return { kind: 'external', message: 'waiting for an external controller to expand this PVC' };
}

/**
 * Whether an event's claim change is newer than the one reported. The watch's resourceVersions
 * are etcd revisions (the informer's positions rely on it too), so an older or equal one was
 * sent before; one that is not a number is compared as is.
 */
export function changedSince(event: string, reported: string): boolean {
  return /^\d+$/.test(event) && /^\d+$/.test(reported) ? BigInt(event) > BigInt(reported) : event !== reported;
}
