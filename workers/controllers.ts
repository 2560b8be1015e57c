/**
 * The controllers this build implements, by upstream's canonical --controllers name. The short
 * name is the first segment of their workflow IDs (`replicaset/<ns>/<name>`) and the value of
 * the KcmController search attribute; `serviceAccount` is the kube-system account whose
 * system:controller:* role bounds it under --use-service-account-credentials (none: it always
 * runs with the manager's own credentials, as upstream's token controller does).
 */
export const IMPLEMENTED_CONTROLLERS = {
  'replicaset-controller': { short: 'replicaset', serviceAccount: 'replicaset-controller' },
  'replicationcontroller-controller': { short: 'replicationcontroller', serviceAccount: 'replication-controller' },
  'deployment-controller': { short: 'deployment', serviceAccount: 'deployment-controller' },
  'garbage-collector-controller': { short: 'garbagecollector', serviceAccount: 'generic-garbage-collector' },
  'namespace-controller': { short: 'namespace', serviceAccount: 'namespace-controller' },
  'serviceaccount-controller': { short: 'serviceaccount', serviceAccount: 'service-account-controller' },
  'serviceaccount-token-controller': { short: 'serviceaccount-token', serviceAccount: undefined },
  'root-ca-certificate-publisher-controller': { short: 'root-ca-cert-publisher', serviceAccount: 'root-ca-cert-publisher' },
  'clusterrole-aggregation-controller': { short: 'clusterrole-aggregation', serviceAccount: 'clusterrole-aggregation-controller' },
  'resourcequota-controller': { short: 'resourcequota', serviceAccount: 'resourcequota-controller' },
  'endpoints-controller': { short: 'endpoint', serviceAccount: 'endpoint-controller' },
  'endpointslice-controller': { short: 'endpointslice', serviceAccount: 'endpointslice-controller' },
  'endpointslice-mirroring-controller': { short: 'endpointslicemirroring', serviceAccount: 'endpointslicemirroring-controller' },
  'job-controller': { short: 'job', serviceAccount: 'job-controller' },
  'cronjob-controller': { short: 'cronjob', serviceAccount: 'cronjob-controller' },
  'ttl-after-finished-controller': { short: 'ttl-after-finished', serviceAccount: 'ttl-after-finished-controller' },
  'pod-garbage-collector-controller': { short: 'podgc', serviceAccount: 'pod-garbage-collector' },
} as const satisfies Record<string, { short: string; serviceAccount: string | undefined }>;

export type ImplementedController = keyof typeof IMPLEMENTED_CONTROLLERS;

export function implementedOf(enabled: Iterable<string>): ImplementedController[] {
  return [...enabled].filter((c): c is ImplementedController => c in IMPLEMENTED_CONTROLLERS);
}

export function notImplemented(enabled: Iterable<string>): string[] {
  return [...enabled].filter((c) => !(c in IMPLEMENTED_CONTROLLERS)).sort();
}
