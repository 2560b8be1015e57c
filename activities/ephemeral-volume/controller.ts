import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { ephemeralVolumeWorkflow } from '../../workflows/ephemeral-volume/workflow';
import { createEphemeralVolumeActivities } from './activities';
import { ephemeralVolumeRoutes } from './routes';

export const ephemeralVolumeController: ControllerDescriptor = {
  name: 'ephemeral-volume-controller',
  short: 'ephemeral-volume',
  serviceAccount: 'ephemeral-volume-controller',
  concurrency: intFlag('concurrent-ephemeralvolume-syncs', 5, 'how many pods may have their ephemeral volume claims created at the same time'),
  workflows: [ephemeralVolumeWorkflow],
  activities: (ctx) => createEphemeralVolumeActivities(ctx),
  routes: ephemeralVolumeRoutes,
};
