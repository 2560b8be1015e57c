import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { resourceQuotaWorkflow } from '../../workflows/resourcequota/workflow';
import { createResourceQuotaActivities } from './activities';
import { RESOURCE_QUOTA_SYNC_PERIOD, quotaRoutes } from './routes';

export const resourceQuotaController: ControllerDescriptor = {
  name: 'resourcequota-controller',
  short: 'resourcequota',
  serviceAccount: 'resourcequota-controller',
  concurrency: intFlag('concurrent-resource-quota-syncs', 5, 'how many resource quotas may be recounted at the same time'),
  // each quota's run recounts every --resource-quota-sync-period
  periodicRuns: true,
  flags: [RESOURCE_QUOTA_SYNC_PERIOD],
  workflows: [resourceQuotaWorkflow],
  activities: (ctx) => createResourceQuotaActivities(ctx),
  routes: quotaRoutes,
};
