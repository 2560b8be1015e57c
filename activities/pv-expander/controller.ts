import type { ControllerDescriptor } from '../../workers/descriptor';
import { pvExpanderWorkflow } from '../../workflows/pv-expander/workflow';
import { createPvExpanderActivities } from './activities';
import { pvExpanderRoutes } from './routes';

export const pvExpanderController: ControllerDescriptor = {
  name: 'persistentvolume-expander-controller',
  short: 'persistentvolume-expander',
  serviceAccount: 'expand-controller',
  // upstream's defaultWorkerCount, without a flag
  concurrency: 10,
  workflows: [pvExpanderWorkflow],
  activities: (ctx) => createPvExpanderActivities(ctx),
  routes: pvExpanderRoutes,
};
