import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { namespaceWorkflow } from '../../workflows/namespace/workflow';
import { createNamespaceActivities } from './activities';
import { NAMESPACE_SYNC_PERIOD, namespaceRoutes } from './routes';

export const namespaceController: ControllerDescriptor = {
  name: 'namespace-controller',
  short: 'namespace',
  serviceAccount: 'namespace-controller',
  // upstream: emptying a namespace is many discovery reads and deletes, so its client gets 20x the QPS and 100x the burst
  clientRate: { qps: 20, burst: 100 },
  concurrency: intFlag('concurrent-namespace-syncs', 10, 'how many namespaces may be emptied at the same time'),
  flags: [NAMESPACE_SYNC_PERIOD],
  workflows: [namespaceWorkflow],
  activities: (ctx) => createNamespaceActivities(ctx),
  routes: namespaceRoutes,
};
