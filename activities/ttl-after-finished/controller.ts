import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { ttlAfterFinishedWorkflow } from '../../workflows/ttl-after-finished/workflow';
import { createTtlAfterFinishedActivities } from './activities';
import { ttlAfterFinishedRoutes } from './routes';

export const ttlAfterFinishedController: ControllerDescriptor = {
  name: 'ttl-after-finished-controller',
  short: 'ttl-after-finished',
  serviceAccount: 'ttl-after-finished-controller',
  concurrency: intFlag('concurrent-ttl-after-finished-syncs', 5, 'how many finished jobs may be cleaned up at the same time'),
  workflows: [ttlAfterFinishedWorkflow],
  activities: (ctx) => createTtlAfterFinishedActivities(ctx),
  routes: ttlAfterFinishedRoutes,
};
