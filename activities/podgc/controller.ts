import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import { flagValue, intFlag } from '../../workers/flags';
import { PodGcEvent, PodGcWorkflowInput, podGcWorkflow, podGcWorkflowId } from '../../workflows/podgc/workflow';
import { startSingleton } from '../../workers/singleton';
import { createPodGcActivities } from './activities';

export const TERMINATED_POD_GC_THRESHOLD = intFlag(
  'terminated-pod-gc-threshold', 12500, 'terminated pods kept before the oldest are deleted; 0 keeps them all', { min: 0 },
);

/** podgc is one periodic workflow per deployment, not one per object. */
async function startPodGc(ctx: StartContext): Promise<void> {
  const threshold = flagValue(ctx.flags, TERMINATED_POD_GC_THRESHOLD);
  const settings = { terminatedPodThreshold: threshold };
  const args: PodGcWorkflowInput = { ...settings, tuning: ctx.tuning };
  const event: PodGcEvent = { settings };
  await startSingleton(ctx, {
    controller: podGcController.short,
    workflow: podGcWorkflow,
    workflowId: podGcWorkflowId(ctx.baseTaskQueue),
    args,
    event,
    kind: 'Pod',
    staticSummary: `pod garbage collector (threshold ${threshold})`,
  });
}

export const podGcController: ControllerDescriptor = {
  name: 'pod-garbage-collector-controller',
  short: 'podgc',
  serviceAccount: 'pod-garbage-collector',
  concurrency: 1,
  flags: [TERMINATED_POD_GC_THRESHOLD],
  workflows: [podGcWorkflow],
  activities: (ctx) => createPodGcActivities(ctx),
  start: startPodGc,
};
