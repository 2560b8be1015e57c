import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { daemonSetWorkflow } from '../../workflows/daemonset/workflow';
import { createDaemonSetActivities } from './activities';
import { daemonSetRoutes } from './routes';

export const daemonSetController: ControllerDescriptor = {
  name: 'daemonset-controller',
  short: 'daemonset',
  serviceAccount: 'daemon-set-controller',
  concurrency: intFlag('concurrent-daemonset-syncs', 2, 'how many DaemonSets may be synced at the same time'),
  workflows: [daemonSetWorkflow],
  activities: (ctx) => createDaemonSetActivities(ctx),
  routes: daemonSetRoutes,
};
