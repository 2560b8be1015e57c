import type { ControllerDescriptor } from '../../workers/descriptor';
import { resourceClaimPodWorkflow, resourceClaimWorkflow } from '../../workflows/resourceclaim/workflow';
import { createResourceClaimActivities } from './activities';
import { resourceClaimRoutes } from './routes';

export const resourceClaimController: ControllerDescriptor = {
  name: 'resourceclaim-controller',
  short: 'resourceclaim',
  serviceAccount: 'resource-claim-controller',
  // GA and locked on in 1.35, but the descriptor says what upstream's does
  requiredFeatureGates: ['DynamicResourceAllocation'],
  // upstream runs 50 workers and has no flag for them
  concurrency: 50,
  workflows: [resourceClaimPodWorkflow, resourceClaimWorkflow],
  activities: (ctx) => createResourceClaimActivities({ rest: ctx.rest, reader: ctx.reader, logger: ctx.logger, recordEvent: ctx.recordEvent, flags: ctx.flags }),
  routes: resourceClaimRoutes,
};
