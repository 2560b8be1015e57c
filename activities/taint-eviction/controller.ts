import type { ControllerDescriptor } from '../../workers/descriptor';
import { taintEvictionWorkflow } from '../../workflows/taint-eviction/workflow';
import { createTaintEvictionActivities } from './activities';
import { taintEvictionRoutes } from './routes';

export const taintEvictionController: ControllerDescriptor = {
  name: 'taint-eviction-controller',
  short: 'taint-eviction',
  // upstream builds its client as node-controller, whose role allows the pod deletes and status patches
  serviceAccount: 'node-controller',
  // off: upstream's node lifecycle controller evicts by taints itself (not done here; docs/COMPATIBILITY.md)
  requiredFeatureGates: ['SeparateTaintEvictionController'],
  // upstream's taint manager hashes work over 8 workers
  concurrency: 8,
  workflows: [taintEvictionWorkflow],
  activities: (ctx) => createTaintEvictionActivities(ctx),
  routes: taintEvictionRoutes,
};
