import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { cronJobWorkflow } from '../../workflows/cronjob/workflow';
import { createCronJobActivities } from './activities';
import { cronJobRoutes } from './routes';

export const cronJobController: ControllerDescriptor = {
  name: 'cronjob-controller',
  short: 'cronjob',
  serviceAccount: 'cronjob-controller',
  concurrency: intFlag('concurrent-cron-job-syncs', 5, 'how many cron jobs may reconcile at the same time'),
  // each CronJob's run wakes at its schedule's times
  periodicRuns: true,
  workflows: [cronJobWorkflow],
  activities: (ctx) => createCronJobActivities(ctx),
  routes: cronJobRoutes,
};
