import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { endpointSliceMirroringWorkflow } from '../../workflows/endpointslicemirroring/workflow';
import { createMirroringActivities } from './activities';
import { MIRRORING_MAX_ENDPOINTS_PER_SUBSET, mirroringRoutes } from './routes';

export const endpointSliceMirroringController: ControllerDescriptor = {
  name: 'endpointslice-mirroring-controller',
  short: 'endpointslicemirroring',
  serviceAccount: 'endpointslicemirroring-controller',
  concurrency: intFlag('mirroring-concurrent-service-endpoint-syncs', 5, "how many services' custom Endpoints may be mirrored at the same time"),
  flags: [MIRRORING_MAX_ENDPOINTS_PER_SUBSET],
  workflows: [endpointSliceMirroringWorkflow],
  activities: (ctx) => createMirroringActivities(ctx),
  routes: mirroringRoutes,
};
