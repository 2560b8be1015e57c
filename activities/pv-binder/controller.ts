import type { ControllerDescriptor } from '../../workers/descriptor';
import { pvClaimWorkflow, pvVolumeWorkflow } from '../../workflows/pv-binder/workflow';
import { createPvBinderActivities } from './activities';
import { RECYCLER_FLAGS, recyclerConfigs } from './recycler';
import { ENABLE_DYNAMIC_PROVISIONING, ENABLE_HOSTPATH_PROVISIONER, FLEX_VOLUME_PLUGIN_DIR, PV_CLAIM_BINDER_SYNC_PERIOD, pvBinderRoutes } from './routes';

export const pvBinderController: ControllerDescriptor = {
  name: 'persistentvolume-binder-controller',
  short: 'persistentvolume-binder',
  serviceAccount: 'persistent-volume-binder',
  // upstream runs one claim worker and one volume worker, and has no flag for them
  concurrency: 2,
  // each volume's and claim's run wakes every --pvclaimbinder-sync-period
  periodicRuns: true,
  flags: [PV_CLAIM_BINDER_SYNC_PERIOD, ...RECYCLER_FLAGS, ENABLE_HOSTPATH_PROVISIONER, ENABLE_DYNAMIC_PROVISIONING, FLEX_VOLUME_PLUGIN_DIR],
  workflows: [pvClaimWorkflow, pvVolumeWorkflow],
  activities: (ctx) => createPvBinderActivities(ctx),
  routes: pvBinderRoutes,
  // upstream stops when a recycler template file cannot be read or has no volume
  precondition({ flags }) {
    try {
      recyclerConfigs(flags);
      return undefined;
    } catch (e) {
      return { fatal: true, message: `failed to probe volume plugins when starting persistentvolume controller: ${(e as Error).message}` };
    }
  },
};
