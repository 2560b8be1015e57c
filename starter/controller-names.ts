/**
 * Controller names as kube-controller-manager v1.35.4 knows them, so that a `--controllers` value
 * written for upstream means the same thing here. temporal-kcm implements only some of these; the
 * rest are still accepted so that a KCM command line can be reused unchanged.
 */

/**
 * Controllers KCM registers but never starts itself: they belong to cloud-controller-manager.
 * Upstream still accepts their names in `--controllers`, so we do too.
 */
export const CLOUD_PROVIDER_CONTROLLERS: readonly string[] = Object.freeze([
  'cloud-node-lifecycle-controller',
  'node-route-controller',
  'service-lb-controller',
]);

/** Every name upstream accepts in `--controllers` (without a leading `-`), sorted like `KnownControllers()`. */
export const ALL_CONTROLLERS: readonly string[] = Object.freeze(
  [
    'bootstrap-signer-controller',
    'certificatesigningrequest-approving-controller',
    'certificatesigningrequest-cleaner-controller',
    'certificatesigningrequest-signing-controller',
    'clusterrole-aggregation-controller',
    'cronjob-controller',
    'daemonset-controller',
    'deployment-controller',
    'device-taint-eviction-controller',
    'disruption-controller',
    'endpoints-controller',
    'endpointslice-controller',
    'endpointslice-mirroring-controller',
    'ephemeral-volume-controller',
    'garbage-collector-controller',
    'horizontal-pod-autoscaler-controller',
    'job-controller',
    'kube-apiserver-serving-clustertrustbundle-publisher-controller',
    'legacy-serviceaccount-token-cleaner-controller',
    'namespace-controller',
    'node-ipam-controller',
    'node-lifecycle-controller',
    'persistentvolume-attach-detach-controller',
    'persistentvolume-binder-controller',
    'persistentvolume-expander-controller',
    'persistentvolume-protection-controller',
    'persistentvolumeclaim-protection-controller',
    'pod-garbage-collector-controller',
    'podcertificaterequest-cleaner-controller',
    'replicaset-controller',
    'replicationcontroller-controller',
    'resourceclaim-controller',
    'resourcequota-controller',
    'root-ca-certificate-publisher-controller',
    'selinux-warning-controller',
    'service-cidr-controller',
    'serviceaccount-controller',
    'serviceaccount-token-controller',
    'statefulset-controller',
    'storage-version-migrator-controller',
    'storageversion-garbage-collector-controller',
    'taint-eviction-controller',
    'token-cleaner-controller',
    'ttl-after-finished-controller',
    'ttl-controller',
    'validatingadmissionpolicy-status-controller',
    'volumeattributesclass-protection-controller',
    ...CLOUD_PROVIDER_CONTROLLERS,
  ].sort(),
);

/** Off unless named explicitly; `*` does not turn these on. */
export const DISABLED_BY_DEFAULT: readonly string[] = Object.freeze([
  'bootstrap-signer-controller',
  'selinux-warning-controller',
  'token-cleaner-controller',
]);

/**
 * Pre-1.30 names (alias → canonical name). Upstream promises never to drop these, so old
 * command lines keep working; feature-gated alpha controllers deliberately have none.
 */
export const ALIASES: Readonly<Record<string, string>> = Object.freeze({
  attachdetach: 'persistentvolume-attach-detach-controller',
  bootstrapsigner: 'bootstrap-signer-controller',
  'cloud-node-lifecycle': 'cloud-node-lifecycle-controller',
  'clusterrole-aggregation': 'clusterrole-aggregation-controller',
  cronjob: 'cronjob-controller',
  csrapproving: 'certificatesigningrequest-approving-controller',
  csrcleaner: 'certificatesigningrequest-cleaner-controller',
  csrsigning: 'certificatesigningrequest-signing-controller',
  daemonset: 'daemonset-controller',
  deployment: 'deployment-controller',
  disruption: 'disruption-controller',
  endpoint: 'endpoints-controller',
  endpointslice: 'endpointslice-controller',
  endpointslicemirroring: 'endpointslice-mirroring-controller',
  'ephemeral-volume': 'ephemeral-volume-controller',
  garbagecollector: 'garbage-collector-controller',
  horizontalpodautoscaling: 'horizontal-pod-autoscaler-controller',
  job: 'job-controller',
  'legacy-service-account-token-cleaner': 'legacy-serviceaccount-token-cleaner-controller',
  namespace: 'namespace-controller',
  nodeipam: 'node-ipam-controller',
  nodelifecycle: 'node-lifecycle-controller',
  'persistentvolume-binder': 'persistentvolume-binder-controller',
  'persistentvolume-expander': 'persistentvolume-expander-controller',
  podgc: 'pod-garbage-collector-controller',
  'pv-protection': 'persistentvolume-protection-controller',
  'pvc-protection': 'persistentvolumeclaim-protection-controller',
  replicaset: 'replicaset-controller',
  replicationcontroller: 'replicationcontroller-controller',
  'resource-claim-controller': 'resourceclaim-controller',
  resourcequota: 'resourcequota-controller',
  'root-ca-cert-publisher': 'root-ca-certificate-publisher-controller',
  route: 'node-route-controller',
  service: 'service-lb-controller',
  serviceaccount: 'serviceaccount-controller',
  'serviceaccount-token': 'serviceaccount-token-controller',
  statefulset: 'statefulset-controller',
  'storage-version-gc': 'storageversion-garbage-collector-controller',
  svm: 'storage-version-migrator-controller',
  tokencleaner: 'token-cleaner-controller',
  ttl: 'ttl-controller',
  'ttl-after-finished': 'ttl-after-finished-controller',
});

const known = new Set(ALL_CONTROLLERS);
const disabledByDefault = new Set(DISABLED_BY_DEFAULT);

/** The canonical name for a controller name or alias, or undefined if upstream would not know it. */
export function canonicalControllerName(name: string): string | undefined {
  const canonical = Object.prototype.hasOwnProperty.call(ALIASES, name) ? ALIASES[name] : name;
  return known.has(canonical) ? canonical : undefined;
}

/** Raised for names upstream would reject; lists every bad name at once so one run shows them all. */
export class UnknownControllerError extends Error {
  constructor(readonly names: readonly string[]) {
    super(names.map((n) => `${JSON.stringify(n)} is not in the list of known controllers`).join('; '));
    this.name = 'UnknownControllerError';
  }
}

/**
 * Which controllers a `--controllers` list turns on, as canonical names.
 *
 * Same rules as upstream: for each controller the first entry that names it decides (`foo` on,
 * `-foo` off), so `foo,-foo` leaves foo on; a controller nobody names is on only if the list
 * contains `*` and it is not disabled by default; an empty list turns nothing on.
 */
export function resolveEnabledControllers(spec: readonly string[]): Set<string> {
  const unknown: string[] = [];
  const decided = new Map<string, boolean>();
  let star = false;
  for (const entry of spec) {
    if (entry === '*') {
      star = true;
      continue;
    }
    const off = entry.startsWith('-');
    const bare = off ? entry.slice(1) : entry;
    const canonical = canonicalControllerName(bare);
    if (canonical === undefined) {
      unknown.push(bare);
      continue;
    }
    if (!decided.has(canonical)) decided.set(canonical, !off);
  }
  if (unknown.length) throw new UnknownControllerError(unknown);

  const enabled = new Set<string>();
  for (const name of ALL_CONTROLLERS) {
    const explicit = decided.get(name);
    if (explicit ?? (star && !disabledByDefault.has(name))) enabled.add(name);
  }
  return enabled;
}
