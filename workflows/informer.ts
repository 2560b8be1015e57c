import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { InformerActivities, InformerInput } from '../activities/informers';

/** Fixed workflow ID per task queue: starting it from every replica is how it stays single. */
export function informerWorkflowId(taskQueue: string): string {
  return `temporal-kcm/${taskQueue}/informers`;
}

export interface InformerWorkflowInput extends InformerInput {
  heartbeatTimeoutMs: number;
}

/**
 * Keeps the cluster-wide list+watch running on exactly one worker. The activity only ends by
 * failing (its worker died: heartbeat timeout) and is then retried on another worker, forever.
 */
export async function informerWorkflow(input: InformerWorkflowInput): Promise<void> {
  const { runInformers } = proxyActivities<InformerActivities>({
    startToCloseTimeout: '3650 days',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5 seconds' },
  });
  await runInformers(input);
  // it returned (its worker shut down cleanly): start over with a fresh history
  await continueAsNew<typeof informerWorkflow>(input);
}
