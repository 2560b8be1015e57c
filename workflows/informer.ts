import { CancellationScope, condition, continueAsNew, defineSignal, isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { InformerActivities, InformerInput } from '../activities/informers';

/** Fixed workflow ID per task queue: starting it from every replica is how it stays single. */
export function informerWorkflowId(taskQueue: string): string {
  return `temporal-kcm/${taskQueue}/informers`;
}

export interface InformerWorkflowInput extends InformerInput {
  heartbeatTimeoutMs: number;
}

/**
 * Every replica sends its configuration when it starts. The newest wins: after an upgrade that
 * enables another controller, the watch restarts with it instead of keeping the first replica's.
 */
export const configureInformersSignal = defineSignal<[InformerWorkflowInput]>('kcm.configureInformers');

const sameConfig = (a: InformerWorkflowInput, b: InformerWorkflowInput) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Keeps the cluster-wide list+watch running on exactly one worker. The activity only ends by
 * failing (its worker died: heartbeat timeout) and is then retried on another worker, forever;
 * a new configuration cancels it and starts it again with that configuration.
 */
export async function informerWorkflow(input: InformerWorkflowInput): Promise<void> {
  let config = input;
  let changed = false;
  setHandler(configureInformersSignal, (next) => {
    if (!sameConfig(next, config)) {
      config = next;
      changed = true;
    }
  });

  for (;;) {
    changed = false;
    const { runInformers } = proxyActivities<InformerActivities>({
      startToCloseTimeout: '3650 days',
      heartbeatTimeout: config.heartbeatTimeoutMs,
      retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5 seconds' },
    });
    const scope = new CancellationScope();
    const running = scope.run(() => runInformers(config));
    running.catch(() => undefined); // a cancelled run is expected when the configuration changes
    await Promise.race([running.then(() => undefined, (e: unknown) => { if (!isCancellation(e)) throw e; }), condition(() => changed)]);
    if (changed) {
      scope.cancel();
      if (workflowInfo().historyLength > 1000) await continueAsNew<typeof informerWorkflow>(config);
      continue;
    }
    // it returned (its worker shut down cleanly): start over with a fresh history
    await continueAsNew<typeof informerWorkflow>(config);
  }
}
