import type { ControllerDescriptor } from '../../workers/descriptor';
import { taintEvictionWorkflow } from '../../workflows/taint-eviction/workflow';
import { createTaintEvictionActivities } from './activities';
import { taintEvictionRoutes } from './routes';

export const taintEvictionController: ControllerDescriptor = {
  name: 'taint-eviction-controller',
  short: 'taint-eviction',
  // upstream builds its client as node-controller, whose role allows the pod deletes and status patches
  serviceAccount: 'node-controller',
  // locked on in 1.35 (off, upstream's node lifecycle controller would evict by taints itself)
  requiredFeatureGates: ['SeparateTaintEvictionController'],
  // upstream's taint manager hashes work over 8 workers
  concurrency: 8,
  workflows: [taintEvictionWorkflow],
  activities: (ctx) => createTaintEvictionActivities(ctx),
  routes: taintEvictionRoutes,
};
