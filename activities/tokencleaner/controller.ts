import type { ControllerDescriptor } from '../../workers/descriptor';
import { tokenCleanerWorkflow } from '../../workflows/tokencleaner/workflow';
import { createTokenCleanerActivities } from './activities';
import { tokenCleanerRoutes } from './routes';

export const tokenCleanerController: ControllerDescriptor = {
  name: 'token-cleaner-controller',
  short: 'tokencleaner',
  // upstream's client name; its Role system:controller:token-cleaner is in kube-system
  serviceAccount: 'token-cleaner',
  // upstream runs one worker
  concurrency: 1,
  workflows: [tokenCleanerWorkflow],
  activities: (ctx) => createTokenCleanerActivities(ctx),
  routes: tokenCleanerRoutes,
};
