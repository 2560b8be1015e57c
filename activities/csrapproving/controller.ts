import type { ControllerDescriptor } from '../../workers/descriptor';
import { csrApprovingWorkflow } from '../../workflows/csrapproving/workflow';
import { createCsrApprovingActivities } from './activities';
import { csrApprovingRoutes } from './routes';

export const csrApprovingController: ControllerDescriptor = {
  name: 'certificatesigningrequest-approving-controller',
  short: 'csrapproving',
  // upstream's client name: system:controller:certificate-controller may create SubjectAccessReviews and approve
  serviceAccount: 'certificate-controller',
  // upstream runs five workers
  concurrency: 5,
  workflows: [csrApprovingWorkflow],
  activities: (ctx) => createCsrApprovingActivities(ctx),
  routes: csrApprovingRoutes,
};
