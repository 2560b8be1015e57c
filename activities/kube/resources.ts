/**
 * The resources this manager reads and writes, named once: group, version, plural and kind, and
 * the paths built from them. Routes, informers and activities name a resource by its entry here
 * instead of spelling its path.
 */
export interface ResourceType {
  /** '' for the core group */
  readonly group: string;
  readonly version: string;
  /** the plural, as in the URL */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

const core = (resource: string, kind: string, namespaced = true): ResourceType => ({ group: '', version: 'v1', resource, kind, namespaced });
const grouped = (group: string, version: string, resource: string, kind: string, namespaced = true): ResourceType =>
  ({ group, version, resource, kind, namespaced });

export const RESOURCES = {
  pods: core('pods', 'Pod'),
  services: core('services', 'Service'),
  endpoints: core('endpoints', 'Endpoints'),
  nodes: core('nodes', 'Node', false),
  namespaces: core('namespaces', 'Namespace', false),
  configMaps: core('configmaps', 'ConfigMap'),
  secrets: core('secrets', 'Secret'),
  serviceAccounts: core('serviceaccounts', 'ServiceAccount'),
  persistentVolumeClaims: core('persistentvolumeclaims', 'PersistentVolumeClaim'),
  persistentVolumes: core('persistentvolumes', 'PersistentVolume', false),
  replicationControllers: core('replicationcontrollers', 'ReplicationController'),
  resourceQuotas: core('resourcequotas', 'ResourceQuota'),
  events: core('events', 'Event'),
  replicaSets: grouped('apps', 'v1', 'replicasets', 'ReplicaSet'),
  deployments: grouped('apps', 'v1', 'deployments', 'Deployment'),
  statefulSets: grouped('apps', 'v1', 'statefulsets', 'StatefulSet'),
  daemonSets: grouped('apps', 'v1', 'daemonsets', 'DaemonSet'),
  controllerRevisions: grouped('apps', 'v1', 'controllerrevisions', 'ControllerRevision'),
  jobs: grouped('batch', 'v1', 'jobs', 'Job'),
  cronJobs: grouped('batch', 'v1', 'cronjobs', 'CronJob'),
  endpointSlices: grouped('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice'),
  podDisruptionBudgets: grouped('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget'),
  leases: grouped('coordination.k8s.io', 'v1', 'leases', 'Lease'),
  storageClasses: grouped('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false),
  volumeAttributesClasses: grouped('storage.k8s.io', 'v1', 'volumeattributesclasses', 'VolumeAttributesClass', false),
  volumeAttachments: grouped('storage.k8s.io', 'v1', 'volumeattachments', 'VolumeAttachment', false),
  csiDrivers: grouped('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', false),
  clusterRoles: grouped('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  certificateSigningRequests: grouped('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false),
  serviceCidrs: grouped('networking.k8s.io', 'v1', 'servicecidrs', 'ServiceCIDR', false),
  ipAddresses: grouped('networking.k8s.io', 'v1', 'ipaddresses', 'IPAddress', false),
  validatingAdmissionPolicies: grouped('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false),
  resourceClaims: grouped('resource.k8s.io', 'v1', 'resourceclaims', 'ResourceClaim'),
  resourceClaimTemplates: grouped('resource.k8s.io', 'v1', 'resourceclaimtemplates', 'ResourceClaimTemplate'),
  deviceClasses: grouped('resource.k8s.io', 'v1', 'deviceclasses', 'DeviceClass', false),
  resourceSlices: grouped('resource.k8s.io', 'v1', 'resourceslices', 'ResourceSlice', false),
  horizontalPodAutoscalers: grouped('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler'),
} as const satisfies Record<string, ResourceType>;

export const apiVersionOf = (r: Pick<ResourceType, 'group' | 'version'>): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** `/api/v1` or `/apis/<group>/<version>` */
export const groupVersionPath = (r: Pick<ResourceType, 'group' | 'version'>): string => (r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`);

/**
 * The collection (every namespace when `namespace` is absent), or one object when `name` is given.
 * Names and namespaces are URL-encoded here, once.
 */
export function resourcePath(r: ResourceType, namespace?: string, name?: string): string {
  const ns = r.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${groupVersionPath(r)}${ns}/${r.resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}
