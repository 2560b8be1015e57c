// Every workflow type the worker registers. A new controller adds its workflow here.
export { replicaOwnerWorkflow } from './replicaset/workflow';
export { deploymentWorkflow } from './deployment/workflow';
export { garbageCollectorWorkflow } from './gc/workflow';
export { informerWorkflow } from './informer';
