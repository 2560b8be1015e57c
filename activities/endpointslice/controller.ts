import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { endpointSliceWorkflow } from '../../workflows/endpointslice/workflow';
import { MAX_ENDPOINTS_PER_SLICE, serviceEndpointsRoutes } from '../service-endpoints/routes';
import { createEndpointSliceActivities } from './activities';

export const endpointSliceController: ControllerDescriptor = {
  name: 'endpointslice-controller',
  short: 'endpointslice',
  serviceAccount: 'endpointslice-controller',
  concurrency: intFlag('concurrent-service-endpoint-syncs', 5, "how many services' EndpointSlices may be written at the same time"),
  flags: [MAX_ENDPOINTS_PER_SLICE],
  workflows: [endpointSliceWorkflow],
  activities: (ctx) => createEndpointSliceActivities(ctx),
  routes: serviceEndpointsRoutes,
};
