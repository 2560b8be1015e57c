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

/** A resource path split into its parts: `/api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]]` or `/apis/G/V/...`. */
export interface ResourcePathParts {
  /** `/api/v1` or `/apis/<group>/<version>` */
  groupVersion: string;
  group: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** the query string, without its `?` */
  query: string;
}

/** The parts of a resource path, or undefined for a discovery path (`/api`, `/apis/apps/v1`, ...). */
export function parseResourcePath(path: string): ResourcePathParts | undefined {
  const q = path.indexOf('?');
  const query = q >= 0 ? path.slice(q + 1) : '';
  const segs = (q >= 0 ? path.slice(0, q) : path).split('/').filter(Boolean).map(decodeURIComponent);
  let gv: string;
  let group: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) {
    gv = `/api/${segs[1]}`;
    group = '';
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 3) {
    gv = `/apis/${segs[1]}/${segs[2]}`;
    group = segs[1];
    rest = segs.slice(3);
  } else {
    return undefined;
  }
  if (rest.length === 0) return undefined;
  // `namespaces/NS/RESOURCE...` is namespaced; `namespaces[/NS[/status|finalize]]` is the Namespace resource itself
  const namespaced = rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize';
  const [namespace, resource, name, subresource] = namespaced ? rest.slice(1) : [undefined, ...rest];
  if (resource === undefined) return undefined;
  return { groupVersion: gv, group, ...(namespace !== undefined ? { namespace } : {}), resource, ...(name !== undefined ? { name } : {}), ...(subresource !== undefined ? { subresource } : {}), query };
}

const KIND_OF_PATH = new Map(Object.values(RESOURCES).map((r) => [resourcePath(r), r.kind]));

/** The kind of a known resource by its path across namespaces (a store's path); undefined for a discovered one. */
export function kindOfPath(path: string): string | undefined {
  return KIND_OF_PATH.get(path);
}
