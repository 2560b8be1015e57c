import type { ControllerDescriptor } from '../../workers/descriptor';
import { clusterRoleAggregationWorkflow } from '../../workflows/clusterrole-aggregation/workflow';
import { createAggregationActivities } from './activities';
import { aggregationRoutes } from './routes';

export const clusterRoleAggregationController: ControllerDescriptor = {
  name: 'clusterrole-aggregation-controller',
  short: 'clusterrole-aggregation',
  serviceAccount: 'clusterrole-aggregation-controller',
  // upstream starts five workers and has no flag for it
  concurrency: 5,
  workflows: [clusterRoleAggregationWorkflow],
  activities: (ctx) => createAggregationActivities(ctx),
  routes: aggregationRoutes,
};
