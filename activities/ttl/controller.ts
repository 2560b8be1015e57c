import type { ControllerDescriptor } from '../../workers/descriptor';
import { ttlWorkflow } from '../../workflows/ttl/workflow';
import { createTtlActivities } from './activities';
import { ttlRoutes } from './routes';

export const ttlController: ControllerDescriptor = {
  name: 'ttl-controller',
  short: 'ttl',
  serviceAccount: 'ttl-controller',
  // one workflow for the cluster; its activity patches five nodes at a time, as upstream's five workers do
  concurrency: 1,
  workflows: [ttlWorkflow],
  activities: (ctx) => createTtlActivities(ctx),
  routes: ttlRoutes,
};
