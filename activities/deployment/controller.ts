import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { deploymentWorkflow } from '../../workflows/deployment/workflow';
import { createDeploymentActivities } from './activities';
import { deploymentRoutes, deploymentSignalGate } from './routes';

export const deploymentController: ControllerDescriptor = {
  name: 'deployment-controller',
  short: 'deployment',
  serviceAccount: 'deployment-controller',
  concurrency: intFlag('concurrent-deployment-syncs', 5, 'how many deployments may reconcile at the same time'),
  workflows: [deploymentWorkflow],
  activities: (ctx) => createDeploymentActivities(ctx),
  routes: deploymentRoutes,
  signalGate: deploymentSignalGate,
};
