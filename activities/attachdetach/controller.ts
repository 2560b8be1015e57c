import type { ControllerDescriptor } from '../../workers/descriptor';
import { attachDetachWorkflow } from '../../workflows/attachdetach/workflow';
import { createAttachDetachActivities } from './activities';
import { ATTACH_DETACH_RECONCILE_SYNC_PERIOD, DISABLE_ATTACH_DETACH_RECONCILE_SYNC, DISABLE_FORCE_DETACH_ON_TIMEOUT, attachDetachRoutes } from './routes';

export const attachDetachController: ControllerDescriptor = {
  name: 'persistentvolume-attach-detach-controller',
  short: 'attachdetach',
  serviceAccount: 'attachdetach-controller',
  // upstream's one reconciler loop starts every attach and detach as its own goroutine, with no
  // flag to bound them; ten volumes' workflows at once per replica keeps to that spirit
  concurrency: 10,
  flags: [DISABLE_ATTACH_DETACH_RECONCILE_SYNC, ATTACH_DETACH_RECONCILE_SYNC_PERIOD, DISABLE_FORCE_DETACH_ON_TIMEOUT],
  workflows: [attachDetachWorkflow],
  activities: (ctx) => createAttachDetachActivities(ctx),
  routes: attachDetachRoutes,
};
