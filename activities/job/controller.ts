import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { jobWorkflow } from '../../workflows/job/workflow';
import { jobOrphanPodWorkflow } from '../../workflows/job/orphan-pod';
import { createJobActivities } from './activities';
import { jobRoutes } from './routes';

export const jobController: ControllerDescriptor = {
  name: 'job-controller',
  short: 'job',
  serviceAccount: 'job-controller',
  concurrency: intFlag('concurrent-job-syncs', 5, 'how many jobs may reconcile at the same time'),
  workflows: [jobWorkflow, jobOrphanPodWorkflow],
  activities: (ctx) => createJobActivities(ctx),
  routes: jobRoutes,
};
