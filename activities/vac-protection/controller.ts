import type { ControllerDescriptor } from '../../workers/descriptor';
import { vacProtectionWorkflow } from '../../workflows/vac-protection/workflow';
import { createVacProtectionActivities } from './activities';
import { vacProtectionRoutes } from './routes';

/**
 * Upstream starts it only with the VolumeAttributesClass feature gate on, which it is by default
 * in 1.35, and the API server of that version serves storage.k8s.io/v1 volumeattributesclasses by
 * default; `--feature-gates=VolumeAttributesClass=false` disables it here as there. Upstream gives
 * it no alias: `vac-protection` is only this build's short name.
 */
export const vacProtectionController: ControllerDescriptor = {
  name: 'volumeattributesclass-protection-controller',
  short: 'vac-protection',
  serviceAccount: 'volumeattributesclass-protection-controller',
  requiredFeatureGates: ['VolumeAttributesClass'],
  // upstream runs one worker and has no flag for it
  concurrency: 1,
  workflows: [vacProtectionWorkflow],
  activities: (ctx) => createVacProtectionActivities(ctx),
  routes: vacProtectionRoutes,
};
