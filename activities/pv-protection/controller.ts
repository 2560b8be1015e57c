import type { ControllerDescriptor } from '../../workers/descriptor';
import { pvProtectionWorkflow } from '../../workflows/pv-protection/workflow';
import { createPvProtectionActivities } from './activities';
import { pvProtectionRoutes } from './routes';

export const pvProtectionController: ControllerDescriptor = {
  name: 'persistentvolume-protection-controller',
  short: 'pv-protection',
  serviceAccount: 'pv-protection-controller',
  // upstream runs one worker and has no flag for it
  concurrency: 1,
  workflows: [pvProtectionWorkflow],
  activities: (ctx) => createPvProtectionActivities(ctx),
  routes: pvProtectionRoutes,
};
