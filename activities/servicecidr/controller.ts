import type { ControllerDescriptor } from '../../workers/descriptor';
import { serviceCidrWorkflow } from '../../workflows/servicecidr/workflow';
import { createServiceCidrActivities } from './activities';
import { serviceCidrRoutes } from './routes';

export const serviceCidrController: ControllerDescriptor = {
  name: 'service-cidr-controller',
  short: 'servicecidr',
  serviceAccount: 'service-cidrs-controller',
  // GA and locked on in 1.35: --feature-gates cannot turn it off, but the descriptor says what upstream's does
  requiredFeatureGates: ['MultiCIDRServiceAllocator'],
  // upstream runs five workers and has no flag for them
  concurrency: 5,
  workflows: [serviceCidrWorkflow],
  activities: (ctx) => createServiceCidrActivities(ctx),
  routes: serviceCidrRoutes,
};
