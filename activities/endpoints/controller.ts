import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { endpointsWorkflow } from '../../workflows/endpoints/workflow';
import { serviceEndpointsRoutes } from '../service-endpoints/routes';
import { createEndpointsActivities } from './activities';

export const endpointsController: ControllerDescriptor = {
  name: 'endpoints-controller',
  short: 'endpoint',
  serviceAccount: 'endpoint-controller',
  concurrency: intFlag('concurrent-endpoint-syncs', 5, "how many services' Endpoints may be written at the same time"),
  workflows: [endpointsWorkflow],
  activities: (ctx) => createEndpointsActivities(ctx),
  routes: serviceEndpointsRoutes,
};
