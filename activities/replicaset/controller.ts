import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';
import { createReplicaActivities } from './activities';
import { replicaOwnerSignalGate, replicaRoutes } from './routes';

/** Each kind's activities write with its own controller's credentials, whichever queue runs them. */
const replicaEngineActivities: ControllerDescriptor['activities'] = (ctx) =>
  createReplicaActivities({
    logger: ctx.logger,
    local: ctx.local,
    clientFor: (kind) => ctx.depsOf(kind === 'ReplicaSet' ? replicaSetController.name : replicationControllerController.name),
  });

export const replicaSetController: ControllerDescriptor = {
  name: 'replicaset-controller',
  short: 'replicaset',
  serviceAccount: 'replicaset-controller',
  concurrency: intFlag('concurrent-replicaset-syncs', 5, 'how many replica sets may reconcile at the same time'),
  workflows: [replicaOwnerWorkflow],
  activities: replicaEngineActivities,
  // one engine serves both owner kinds, as upstream's ReplicaSetController does: one factory for both
  routes: replicaRoutes,
  signalGate: replicaOwnerSignalGate,
};

export const replicationControllerController: ControllerDescriptor = {
  name: 'replicationcontroller-controller',
  short: 'replicationcontroller',
  serviceAccount: 'replication-controller',
  // upstream registers this one as concurrent_rc_syncs and relies on pflag turning _ into -
  concurrency: intFlag('concurrent-rc-syncs', 5, 'how many replication controllers may reconcile at the same time'),
  workflows: [replicaOwnerWorkflow],
  activities: replicaEngineActivities,
  // one engine serves both owner kinds, as upstream's ReplicaSetController does: one factory for both
  routes: replicaRoutes,
  signalGate: replicaOwnerSignalGate,
};
