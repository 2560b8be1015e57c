import type { ClaimView, ClassView, VolumeView } from './types';
import { ANN_DYNAMICALLY_PROVISIONED, ANN_MIGRATED_TO } from './types';

/*
 * The in-tree volume plugins upstream's PV controller is built with (host-path, nfs, fc, iscsi,
 * csi, portworx) and the in-tree provisioners whose work moved to CSI drivers. Only these decide
 * whether a provisioner or a deleter is "external": upstream asks its plugin manager, which knows
 * exactly this list, so the list is written out here.
 */

export const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';

const REGISTERED = new Set([HOST_PATH_PLUGIN, 'kubernetes.io/nfs', 'kubernetes.io/fc', 'kubernetes.io/iscsi', 'kubernetes.io/csi', 'kubernetes.io/portworx-volume']);

/** In-tree plugin name to the CSI driver its volumes migrated to; every one is migrated in 1.35. */
const MIGRATED: Readonly<Record<string, string>> = {
  'kubernetes.io/aws-ebs': 'ebs.csi.aws.com',
  'kubernetes.io/gce-pd': 'pd.csi.storage.gke.io',
  'kubernetes.io/azure-file': 'file.csi.azure.com',
  'kubernetes.io/azure-disk': 'disk.csi.azure.com',
  'kubernetes.io/cinder': 'cinder.csi.openstack.org',
  'kubernetes.io/vsphere-volume': 'csi.vsphere.vmware.com',
  'kubernetes.io/portworx-volume': 'pxd.portworx.com',
};

export function migratedDriver(plugin: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(MIGRATED, plugin) ? MIGRATED[plugin] : undefined;
}

/** How a claim of a class gets its volume made. */
export type ProvisioningRoute =
  | { kind: 'external'; provisioner: string }
  | { kind: 'host-path' }
  | { kind: 'failed'; message: string };

/** Upstream's findProvisionablePlugin, with the lister's not-found error for a missing class. */
export function provisioningRoute(className: string, cls: ClassView | undefined): ProvisioningRoute {
  if (!cls) return { kind: 'failed', message: `storageclass.storage.k8s.io "${className}" not found` };
  const migrated = migratedDriver(cls.provisioner);
  if (migrated) return { kind: 'external', provisioner: migrated };
  if (cls.provisioner === HOST_PATH_PLUGIN) return { kind: 'host-path' };
  if (!cls.provisioner.startsWith('kubernetes.io/')) return { kind: 'external', provisioner: cls.provisioner };
  if (REGISTERED.has(cls.provisioner)) return { kind: 'failed', message: 'no provisionable volume plugin matched' };
  return { kind: 'failed', message: `no volume plugin matched name: ${cls.provisioner}` };
}

/** What the host-path provisioner refuses before making anything; undefined when it may go on. */
export function hostPathProvisionRefusal(claim: ClaimView, cls: ClassView, enabled: boolean): { message: string; reschedule?: boolean; beforeAnnotating?: boolean } | undefined {
  if (claim.hasDataSource) {
    return { message: `plugin "${HOST_PATH_PLUGIN}" is not a CSI plugin. Only CSI plugin can provision a claim with a datasource`, beforeAnnotating: true };
  }
  if (cls.mountOptions.length > 0) {
    return { message: `Mount options are not supported by the provisioner but StorageClass "${cls.name}" has mount options [${cls.mountOptions.join(' ')}]` };
  }
  if (!enabled) return { message: `Failed to create provisioner: provisioning in volume plugin "${HOST_PATH_PLUGIN}" is disabled` };
  if (claim.volumeMode === 'Block') {
    return { message: `Failed to provision volume with StorageClass "${cls.name}": ${HOST_PATH_PLUGIN} does not support block volume provisioning`, reschedule: true };
  }
  return undefined;
}

/** How a released volume with the Delete policy goes. */
export type DeleterRoute =
  | { kind: 'external' }
  | { kind: 'host-path'; path: string }
  | { kind: 'failed'; message: string };

/** The host-path deleter: upstream's removes the directory only under a /tmp/ segment. */
function hostPathDeleter(v: VolumeView): DeleterRoute {
  if (v.hostPath === undefined) return { kind: 'failed', message: `failed to create deleter for volume "${v.name}": spec.PersistentVolumeSource.HostPath is nil` };
  // upstream's pattern is unanchored: any path with a /tmp/ segment followed by something
  if (!/\/tmp\/.+/.test(v.hostPath)) return { kind: 'failed', message: `host_path deleter only supports /tmp/.+ but received provided ${v.hostPath}` };
  return { kind: 'host-path', path: v.hostPath };
}

/**
 * Upstream's findDeletablePlugin and the deleter it makes, errors worded as its Events word
 * them: a plugin named by the provisioned-by annotation fails bare, one looked up by the volume's
 * source fails wrapped.
 */
export function deleterRoute(v: VolumeView): DeleterRoute {
  const provisionedBy = v.annotations[ANN_DYNAMICALLY_PROVISIONED];
  if (provisionedBy) {
    if (!provisionedBy.startsWith('kubernetes.io/')) return { kind: 'external' };
    if (provisionedBy === HOST_PATH_PLUGIN) return hostPathDeleter(v);
    // the portworx plugin talks to its own cluster; its CSI driver owns such volumes here
    if (provisionedBy === 'kubernetes.io/portworx-volume') return { kind: 'external' };
    if (REGISTERED.has(provisionedBy)) return { kind: 'failed', message: 'no deletable volume plugin matched' };
    return { kind: 'failed', message: `no volume plugin matched name: ${provisionedBy}` };
  }
  if (ANN_MIGRATED_TO in v.annotations) return { kind: 'external' };
  if (v.source === 'csi' || v.source === 'portworx') return { kind: 'external' };
  if (v.source === 'hostPath') return hostPathDeleter(v);
  const why = v.source === 'nfs' || v.source === 'fc' || v.source === 'iscsi' ? 'no deletable volume plugin matched' : 'no volume plugin matched';
  return { kind: 'failed', message: `error getting deleter volume plugin for volume "${v.name}": ${why}` };
}

/** Whether a volume has a recycler: host-path and nfs do, upstream runs a recycler pod for them. */
export function hasRecycler(v: VolumeView): boolean {
  return v.source === 'hostPath' || v.source === 'nfs';
}
