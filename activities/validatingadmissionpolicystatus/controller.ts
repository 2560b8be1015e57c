import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { vapStatusWorkflow } from '../../workflows/validatingadmissionpolicystatus/workflow';
import { createVapStatusActivities } from './activities';
import { vapStatusRoutes } from './routes';

export const vapStatusController: ControllerDescriptor = {
  name: 'validatingadmissionpolicy-status-controller',
  short: 'vapstatus',
  serviceAccount: 'validatingadmissionpolicy-status-controller',
  concurrency: intFlag('concurrent-validating-admission-policy-status-syncs', 5,
    'The number of ValidatingAdmissionPolicyStatusController workers that are allowed to sync concurrently.'),
  workflows: [vapStatusWorkflow],
  activities: (ctx) => createVapStatusActivities(ctx),
  routes: vapStatusRoutes,
};
