import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import { flagValue, intFlag } from '../../workers/flags';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { PodGcEvent, PodGcWorkflowInput, podGcWorkflow, podGcWorkflowId } from '../../workflows/podgc/workflow';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE } from '../../workflows/search-attributes';
import { createPodGcActivities } from './activities';

export const TERMINATED_POD_GC_THRESHOLD = intFlag(
  'terminated-pod-gc-threshold', 12500, 'terminated pods kept before the oldest are deleted; 0 keeps them all', { min: 0 },
);

/**
 * podgc is one periodic workflow, not one per object, so no watch event starts it: every replica
 * starts it if none has and hands it this replica's threshold, which a restarted deployment with a
 * changed flag thereby applies to the run already going.
 */
async function startPodGc(ctx: StartContext): Promise<void> {
  const threshold = flagValue(ctx.flags, TERMINATED_POD_GC_THRESHOLD);
  const settings = { terminatedPodThreshold: threshold };
  const args: PodGcWorkflowInput = { ...settings, tuning: ctx.tuning };
  const event: PodGcEvent = { settings };
  await ctx.client.workflow.signalWithStart(podGcWorkflow, {
    workflowId: podGcWorkflowId(ctx.baseTaskQueue),
    taskQueue: ctx.taskQueue,
    args: [args],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [event],
    staticSummary: `pod garbage collector (threshold ${threshold})`,
    typedSearchAttributes: [
      { key: SA_CONTROLLER, value: podGcController.short },
      { key: SA_KIND, value: 'Pod' },
      { key: SA_NAMESPACE, value: '' },
      { key: SA_NAME, value: '' },
    ],
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
