import type { ControllerDescriptor } from '../../workers/descriptor';
import { pvcProtectionWorkflow } from '../../workflows/pvc-protection/workflow';
import { createPvcProtectionActivities } from './activities';
import { pvcProtectionRoutes } from './routes';

export const pvcProtectionController: ControllerDescriptor = {
  name: 'persistentvolumeclaim-protection-controller',
  short: 'pvc-protection',
  serviceAccount: 'pvc-protection-controller',
  // upstream runs one namespace worker and has no flag for it
  concurrency: 1,
  workflows: [pvcProtectionWorkflow],
  activities: (ctx) => createPvcProtectionActivities(ctx),
  routes: pvcProtectionRoutes,
};
