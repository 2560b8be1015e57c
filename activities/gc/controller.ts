import type { ControllerDescriptor } from '../../workers/descriptor';
import { intFlag } from '../../workers/flags';
import { garbageCollectorWorkflow } from '../../workflows/gc/workflow';
import { createGcActivities } from './activities';
import { gcRoutes } from './routes';

export const garbageCollectorController: ControllerDescriptor = {
  name: 'garbage-collector-controller',
  short: 'garbagecollector',
  serviceAccount: 'generic-garbage-collector',
  // upstream: each collected object costs two calls, so the collector's client gets twice the QPS
  clientRate: { qps: 2 },
  concurrency: intFlag('concurrent-gc-syncs', 20, 'how many objects the garbage collector may process at the same time'),
  workflows: [garbageCollectorWorkflow],
  activities: (ctx) => createGcActivities(ctx),
  routes: gcRoutes,
};
