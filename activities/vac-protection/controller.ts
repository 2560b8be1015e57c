import type { ControllerDescriptor } from '../../workers/descriptor';
import { vacProtectionWorkflow } from '../../workflows/vac-protection/workflow';
import { createVacProtectionActivities } from './activities';
import { vacProtectionRoutes } from './routes';

/**
 * Upstream starts it only with the VolumeAttributesClass feature gate on, which it is by default
 * in 1.35 (GA since 1.34), and the API server of that version serves storage.k8s.io/v1
 * volumeattributesclasses by default. This build has no feature gates, so it always runs when
 * enabled. Upstream gives it no alias: `vac-protection` is only this build's short name.
 */
export const vacProtectionController: ControllerDescriptor = {
  name: 'volumeattributesclass-protection-controller',
  short: 'vac-protection',
  serviceAccount: 'volumeattributesclass-protection-controller',
  // upstream runs one worker and has no flag for it
  concurrency: 1,
  workflows: [vacProtectionWorkflow],
  activities: (ctx) => createVacProtectionActivities(ctx),
  routes: vacProtectionRoutes,
};
