import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import type { NodeLifecycleEvent } from '../../workflows/node-lifecycle/types';
import { NodeLifecycleWorkflowInput, nodeLifecycleWorkflow, nodeLifecycleWorkflowId } from '../../workflows/node-lifecycle/workflow';
import { startSingleton } from '../../workers/singleton';
import { createNodeLifecycleActivities } from './activities';
import { nodeLifecycleRoutes } from './routes';
import { NODE_LIFECYCLE_FLAGS, nodeLifecycleSettings } from './settings';

/** One workflow per deployment holds the zones' states and queues. */
async function startNodeLifecycle(ctx: StartContext): Promise<void> {
  const settings = nodeLifecycleSettings(ctx.flags);
  const args: NodeLifecycleWorkflowInput = { settings, tuning: ctx.tuning };
  const event: NodeLifecycleEvent = { settings };
  await startSingleton(ctx, {
    controller: nodeLifecycleController.short,
    workflow: nodeLifecycleWorkflow,
    workflowId: nodeLifecycleWorkflowId(ctx.baseTaskQueue),
    args,
    event,
    kind: 'Node',
    staticSummary: 'node lifecycle controller: node health, zone states, NoExecute tainting',
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
