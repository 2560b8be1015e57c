import { condition, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReplicaActivities } from '../../../activities/replicaset/activities';
import { replicaOwnerWorkflow as current, ReplicaOwnerWorkflowInput } from '../../../workflows/replicaset/workflow';

/**
 * A deliberately incompatible edit of the ReplicaSet workflow, for replay tests. Once a run's
 * history has grown past CHANGED_AFTER_EVENTS it observes its owner one extra time, an activity
 * that histories written by the real code never scheduled. It diverges mid-run rather than on
 * the first task because that is what a careless real change looks like, and it proves the
 * replay command locates the task instead of blaming the start.
 */
export const CHANGED_AFTER_EVENTS = 10;

const io = proxyActivities<ReplicaActivities>({ startToCloseTimeout: '1 minute' });

export async function replicaOwnerWorkflow(input: ReplicaOwnerWorkflowInput): Promise<void> {
  void (async () => {
    await condition(() => workflowInfo().historyLength > CHANGED_AFTER_EVENTS);
    await io.observeReplicaOwner({ kind: input.kind, namespace: input.namespace, name: input.name });
  })();
  await current(input);
}
