import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { statefulSetWorkflow } from '../../workflows/statefulset/workflow';
import { createStatefulSetActivities } from './activities';
import { statefulSetRoutes } from './routes';

export const statefulSetController: ControllerDescriptor = {
  name: 'statefulset-controller',
  short: 'statefulset',
  serviceAccount: 'statefulset-controller',
  concurrency: intFlag('concurrent-statefulset-syncs', 5, 'how many StatefulSets may be synced at the same time'),
  workflows: [statefulSetWorkflow],
  activities: (ctx) => createStatefulSetActivities(ctx),
  routes: statefulSetRoutes,
};
