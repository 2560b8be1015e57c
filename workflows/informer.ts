import { CancellationScope, condition, continueAsNew, defineSignal, isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { InformerActivities, InformerInput } from '../activities/informers';
import { informerSetKey, joinedSetKey } from './runtime/task-queues';
import { boundedWorkflowId } from './runtime/workflow-ids';
import { WATCH_RETRY } from './runtime/activity-options';

/**
 * Fixed workflow ID per task queue and set of controllers: starting it from every replica that runs
 * that set is how it stays single. Replicas started with different --controllers each get the
 * informer of their own set.
 */
export function informerWorkflowId(taskQueue: string, controllers: readonly string[]): string {
  return boundedWorkflowId(`temporal-kcm/${taskQueue}/informers/${informerSetKey(controllers)}`);
}

/**
 * IDs an earlier build gave this set's informer: the one informer of every controller, and the
 * set's names joined in full (which a SQL-persisted Temporal refuses once the set is long).
 */
export function earlierInformerWorkflowIds(taskQueue: string, controllers: readonly string[]): string[] {
  const joined = `temporal-kcm/${taskQueue}/informers/${joinedSetKey(controllers)}`;
  return [legacyInformerWorkflowId(taskQueue), ...(joined !== informerWorkflowId(taskQueue, controllers) ? [joined] : [])];
}

/** The running informer of a deployment's base queue, whatever its set of controllers (the first found). */
export async function informerWorkflowIdOf(client: { workflow: { list(o: { query: string }): AsyncIterable<{ workflowId: string }> } }, taskQueue: string): Promise<string | undefined> {
  for await (const w of client.workflow.list({ query: `WorkflowType = 'informerWorkflow' AND TaskQueue = ${JSON.stringify(taskQueue)} AND ExecutionStatus = 'Running'` })) return w.workflowId;
  return undefined;
}

/** The one informer of every controller, before informers were kept per set of controllers. */
export function legacyInformerWorkflowId(taskQueue: string): string {
  return `temporal-kcm/${taskQueue}/informers`;
}

export interface InformerWorkflowInput extends InformerInput {
  heartbeatTimeoutMs: number;
  /** where the watch activity runs: the queue only replicas of this set of controllers poll (absent: the workflow's own) */
  activityTaskQueue?: string;
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
      ...(config.activityTaskQueue ? { taskQueue: config.activityTaskQueue } : {}),
      startToCloseTimeout: '3650 days',
      heartbeatTimeout: config.heartbeatTimeoutMs,
      retry: WATCH_RETRY,
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
