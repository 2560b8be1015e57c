// Every workflow type the worker registers. A new controller adds its workflow here.
//
// Each workflow gets its own instance of every module it loads (the SDK's sandbox keeps a module
// cache per workflow), and a cached workflow keeps them for as long as it stays cached. Importing
// every controller here made each of thousands of ReplicaSet workflows hold the modules of all
// forty controllers. So each export only names its function, and loads its controller's modules
// on the first call, inside the workflow that runs it. The require() paths are literal, so the
// bundler still finds and bundles each one.

/** A workflow function that loads its module when a workflow of its type first runs. */
function loadOnCall<M, K extends keyof M & string>(load: () => M, name: K): M[K] {
  const call = (...args: unknown[]): unknown => (load()[name] as (...a: unknown[]) => unknown)(...args);
  // the SDK finds a workflow by its export's key; the name is for stack traces and the registry test
  Object.defineProperty(call, 'name', { value: name });
  return call as M[K];
}

export const replicaOwnerWorkflow = loadOnCall(() => require('./replicaset/workflow') as typeof import('./replicaset/workflow'), 'replicaOwnerWorkflow');
export const deploymentWorkflow = loadOnCall(() => require('./deployment/workflow') as typeof import('./deployment/workflow'), 'deploymentWorkflow');
export const garbageCollectorWorkflow = loadOnCall(() => require('./gc/workflow') as typeof import('./gc/workflow'), 'garbageCollectorWorkflow');
export const serviceAccountWorkflow = loadOnCall(() => require('./serviceaccount/workflow') as typeof import('./serviceaccount/workflow'), 'serviceAccountWorkflow');
export const rootCaWorkflow = loadOnCall(() => require('./root-ca-cert-publisher/workflow') as typeof import('./root-ca-cert-publisher/workflow'), 'rootCaWorkflow');
export const clusterRoleAggregationWorkflow = loadOnCall(() => require('./clusterrole-aggregation/workflow') as typeof import('./clusterrole-aggregation/workflow'), 'clusterRoleAggregationWorkflow');
export const tokenSecretWorkflow = loadOnCall(() => require('./serviceaccount-token/workflow') as typeof import('./serviceaccount-token/workflow'), 'tokenSecretWorkflow');
export const resourceQuotaWorkflow = loadOnCall(() => require('./resourcequota/workflow') as typeof import('./resourcequota/workflow'), 'resourceQuotaWorkflow');
export const namespaceWorkflow = loadOnCall(() => require('./namespace/workflow') as typeof import('./namespace/workflow'), 'namespaceWorkflow');
export const endpointSliceMirroringWorkflow = loadOnCall(() => require('./endpointslicemirroring/workflow') as typeof import('./endpointslicemirroring/workflow'), 'endpointSliceMirroringWorkflow');
export const endpointsWorkflow = loadOnCall(() => require('./endpoints/workflow') as typeof import('./endpoints/workflow'), 'endpointsWorkflow');
export const endpointSliceWorkflow = loadOnCall(() => require('./endpointslice/workflow') as typeof import('./endpointslice/workflow'), 'endpointSliceWorkflow');
export const cronJobWorkflow = loadOnCall(() => require('./cronjob/workflow') as typeof import('./cronjob/workflow'), 'cronJobWorkflow');
export const jobWorkflow = loadOnCall(() => require('./job/workflow') as typeof import('./job/workflow'), 'jobWorkflow');
export const jobOrphanPodWorkflow = loadOnCall(() => require('./job/orphan-pod') as typeof import('./job/orphan-pod'), 'jobOrphanPodWorkflow');
export const ttlAfterFinishedWorkflow = loadOnCall(() => require('./ttl-after-finished/workflow') as typeof import('./ttl-after-finished/workflow'), 'ttlAfterFinishedWorkflow');
export const podGcWorkflow = loadOnCall(() => require('./podgc/workflow') as typeof import('./podgc/workflow'), 'podGcWorkflow');
export const taintEvictionWorkflow = loadOnCall(() => require('./taint-eviction/workflow') as typeof import('./taint-eviction/workflow'), 'taintEvictionWorkflow');
export const disruptionWorkflow = loadOnCall(() => require('./disruption/workflow') as typeof import('./disruption/workflow'), 'disruptionWorkflow');
export const staleDisruptionTargetWorkflow = loadOnCall(() => require('./disruption/workflow') as typeof import('./disruption/workflow'), 'staleDisruptionTargetWorkflow');
export const daemonSetWorkflow = loadOnCall(() => require('./daemonset/workflow') as typeof import('./daemonset/workflow'), 'daemonSetWorkflow');
export const statefulSetWorkflow = loadOnCall(() => require('./statefulset/workflow') as typeof import('./statefulset/workflow'), 'statefulSetWorkflow');
export const ttlWorkflow = loadOnCall(() => require('./ttl/workflow') as typeof import('./ttl/workflow'), 'ttlWorkflow');
export const nodeLifecycleWorkflow = loadOnCall(() => require('./node-lifecycle/workflow') as typeof import('./node-lifecycle/workflow'), 'nodeLifecycleWorkflow');
export const pvClaimWorkflow = loadOnCall(() => require('./pv-binder/workflow') as typeof import('./pv-binder/workflow'), 'pvClaimWorkflow');
export const pvVolumeWorkflow = loadOnCall(() => require('./pv-binder/workflow') as typeof import('./pv-binder/workflow'), 'pvVolumeWorkflow');
export const pvExpanderWorkflow = loadOnCall(() => require('./pv-expander/workflow') as typeof import('./pv-expander/workflow'), 'pvExpanderWorkflow');
export const pvcProtectionWorkflow = loadOnCall(() => require('./pvc-protection/workflow') as typeof import('./pvc-protection/workflow'), 'pvcProtectionWorkflow');
export const pvProtectionWorkflow = loadOnCall(() => require('./pv-protection/workflow') as typeof import('./pv-protection/workflow'), 'pvProtectionWorkflow');
export const vacProtectionWorkflow = loadOnCall(() => require('./vac-protection/workflow') as typeof import('./vac-protection/workflow'), 'vacProtectionWorkflow');
export const ephemeralVolumeWorkflow = loadOnCall(() => require('./ephemeral-volume/workflow') as typeof import('./ephemeral-volume/workflow'), 'ephemeralVolumeWorkflow');
export const attachDetachWorkflow = loadOnCall(() => require('./attachdetach/workflow') as typeof import('./attachdetach/workflow'), 'attachDetachWorkflow');
export const csrCleanerWorkflow = loadOnCall(() => require('./csrcleaner/workflow') as typeof import('./csrcleaner/workflow'), 'csrCleanerWorkflow');
export const csrApprovingWorkflow = loadOnCall(() => require('./csrapproving/workflow') as typeof import('./csrapproving/workflow'), 'csrApprovingWorkflow');
export const csrSigningWorkflow = loadOnCall(() => require('./csrsigning/workflow') as typeof import('./csrsigning/workflow'), 'csrSigningWorkflow');
export const tokenCleanerWorkflow = loadOnCall(() => require('./tokencleaner/workflow') as typeof import('./tokencleaner/workflow'), 'tokenCleanerWorkflow');
export const bootstrapSignerWorkflow = loadOnCall(() => require('./bootstrapsigner/workflow') as typeof import('./bootstrapsigner/workflow'), 'bootstrapSignerWorkflow');
export const legacyTokenCleanerWorkflow = loadOnCall(() => require('./legacy-token-cleaner/workflow') as typeof import('./legacy-token-cleaner/workflow'), 'legacyTokenCleanerWorkflow');
export const serviceCidrWorkflow = loadOnCall(() => require('./servicecidr/workflow') as typeof import('./servicecidr/workflow'), 'serviceCidrWorkflow');
export const vapStatusWorkflow = loadOnCall(() => require('./validatingadmissionpolicystatus/workflow') as typeof import('./validatingadmissionpolicystatus/workflow'), 'vapStatusWorkflow');
export const resourceClaimPodWorkflow = loadOnCall(() => require('./resourceclaim/workflow') as typeof import('./resourceclaim/workflow'), 'resourceClaimPodWorkflow');
export const resourceClaimWorkflow = loadOnCall(() => require('./resourceclaim/workflow') as typeof import('./resourceclaim/workflow'), 'resourceClaimWorkflow');
export const hpaWorkflow = loadOnCall(() => require('./hpa/workflow') as typeof import('./hpa/workflow'), 'hpaWorkflow');
export const informerWorkflow = loadOnCall(() => require('./informer') as typeof import('./informer'), 'informerWorkflow');
export const shadowLedgerWorkflow = loadOnCall(() => require('./shadow/ledger') as typeof import('./shadow/ledger'), 'shadowLedgerWorkflow');
