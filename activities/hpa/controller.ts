import type { ControllerDescriptor } from '../../workers/descriptor';
import { hpaWorkflow } from '../../workflows/hpa/workflow';
import { createHpaActivities } from './activities';
import { hpaRoutes } from './routes';
import { CONCURRENT_HPA_SYNCS, HPA_FLAGS } from './settings';

export const hpaController: ControllerDescriptor = {
  name: 'horizontal-pod-autoscaler-controller',
  short: 'hpa',
  serviceAccount: 'horizontal-pod-autoscaler',
  concurrency: CONCURRENT_HPA_SYNCS,
  // each HPA's run wakes every --horizontal-pod-autoscaler-sync-period
  periodicRuns: true,
  flags: HPA_FLAGS,
  workflows: [hpaWorkflow],
  activities: (ctx) => createHpaActivities({ rest: ctx.rest, reader: ctx.reader, logger: ctx.logger, recordEvent: ctx.recordEvent, flags: ctx.flags }),
  routes: hpaRoutes,
};
