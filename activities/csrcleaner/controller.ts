import type { ControllerDescriptor } from '../../workers/descriptor';
import { csrCleanerWorkflow } from '../../workflows/csrcleaner/workflow';
import { createCsrCleanerActivities } from './activities';
import { csrCleanerRoutes } from './routes';

export const csrCleanerController: ControllerDescriptor = {
  name: 'certificatesigningrequest-cleaner-controller',
  short: 'csrcleaner',
  // upstream builds its client as "certificate-controller", the signer's and approver's account too
  serviceAccount: 'certificate-controller',
  // upstream runs one polling worker
  concurrency: 1,
  workflows: [csrCleanerWorkflow],
  activities: (ctx) => createCsrCleanerActivities(ctx),
  routes: csrCleanerRoutes,
};
