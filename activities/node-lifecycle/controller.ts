import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import type { NodeLifecycleEvent } from '../../workflows/node-lifecycle/types';
import { NodeLifecycleWorkflowInput, nodeLifecycleWorkflow, nodeLifecycleWorkflowId } from '../../workflows/node-lifecycle/workflow';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE } from '../../workflows/search-attributes';
import { createNodeLifecycleActivities } from './activities';
import { nodeLifecycleRoutes } from './routes';
import { NODE_LIFECYCLE_FLAGS, nodeLifecycleSettings } from './settings';

/**
 * Every replica hands the running workflow its flags at start (starting it if none runs), so a
 * deployment restarted with other grace periods or rates applies them to the run already going.
 */
async function startNodeLifecycle(ctx: StartContext): Promise<void> {
  const settings = nodeLifecycleSettings(ctx.flags);
  const args: NodeLifecycleWorkflowInput = { settings, tuning: ctx.tuning };
  const event: NodeLifecycleEvent = { settings };
  await ctx.client.workflow.signalWithStart(nodeLifecycleWorkflow, {
    workflowId: nodeLifecycleWorkflowId(ctx.baseTaskQueue),
    taskQueue: ctx.taskQueue,
    args: [args],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [event],
    staticSummary: 'node lifecycle controller: node health, zone states, NoExecute tainting',
    typedSearchAttributes: [
      { key: SA_CONTROLLER, value: nodeLifecycleController.short },
      { key: SA_KIND, value: 'Node' },
      { key: SA_NAMESPACE, value: '' },
      { key: SA_NAME, value: '' },
    ],
  });
}

export const nodeLifecycleController: ControllerDescriptor = {
  name: 'node-lifecycle-controller',
  short: 'nodelifecycle',
  // upstream builds its client as node-controller
  serviceAccount: 'node-controller',
  // one workflow for the cluster; its activities work through nodes 8 at a time, as upstream's workers
  concurrency: 1,
  flags: NODE_LIFECYCLE_FLAGS,
  workflows: [nodeLifecycleWorkflow],
  activities: (ctx) => createNodeLifecycleActivities(ctx),
  routes: nodeLifecycleRoutes,
  start: startNodeLifecycle,
};
