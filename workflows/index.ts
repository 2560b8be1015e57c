// Every workflow type the worker registers. A new controller adds its workflow here.
export { replicaOwnerWorkflow } from './replicaset/workflow';
export { deploymentWorkflow } from './deployment/workflow';
export { garbageCollectorWorkflow } from './gc/workflow';
export { serviceAccountWorkflow } from './serviceaccount/workflow';
export { rootCaWorkflow } from './root-ca-cert-publisher/workflow';
export { clusterRoleAggregationWorkflow } from './clusterrole-aggregation/workflow';
export { tokenSecretWorkflow } from './serviceaccount-token/workflow';
export { resourceQuotaWorkflow } from './resourcequota/workflow';
export { namespaceWorkflow } from './namespace/workflow';
export { endpointSliceMirroringWorkflow } from './endpointslicemirroring/workflow';
export { endpointsWorkflow } from './endpoints/workflow';
export { endpointSliceWorkflow } from './endpointslice/workflow';
export { cronJobWorkflow } from './cronjob/workflow';
export { jobWorkflow } from './job/workflow';
export { ttlAfterFinishedWorkflow } from './ttl-after-finished/workflow';
export { podGcWorkflow } from './podgc/workflow';
export { informerWorkflow } from './informer';
