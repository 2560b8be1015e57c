import type { ControllerDescriptor } from '../../workers/descriptor';
import { serviceAccountWorkflow } from '../../workflows/serviceaccount/workflow';
import { createServiceAccountActivities } from './activities';
import { serviceAccountRoutes } from './routes';

export const serviceAccountController: ControllerDescriptor = {
  name: 'serviceaccount-controller',
  short: 'serviceaccount',
  serviceAccount: 'service-account-controller',
  // upstream runs it with one worker and no flag
  concurrency: 1,
  workflows: [serviceAccountWorkflow],
  activities: (ctx) => createServiceAccountActivities(ctx),
  routes: serviceAccountRoutes,
};
