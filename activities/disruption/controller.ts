import type { ControllerDescriptor } from '../../workers/descriptor';
import { disruptionWorkflow, staleDisruptionTargetWorkflow } from '../../workflows/disruption/workflow';
import { createDisruptionActivities } from './activities';
import { disruptionRoutes } from './routes';

export const disruptionController: ControllerDescriptor = {
  name: 'disruption-controller',
  short: 'disruption',
  serviceAccount: 'disruption-controller',
  // upstream syncs budgets with a single worker and has no flag for it
  concurrency: 1,
  workflows: [disruptionWorkflow, staleDisruptionTargetWorkflow],
  activities: (ctx) => createDisruptionActivities(ctx),
  routes: disruptionRoutes,
};
