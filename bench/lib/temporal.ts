import { Client, Connection } from '@temporalio/client';
import { informerWorkflowIdOf } from '../../workflows/informer';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';

export interface TemporalHandle {
  client: Client;
  close(): Promise<void>;
}

export async function connectTemporal(address: string): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection }), close: () => connection.close() };
}

/**
 * Events written so far by every run on a task queue. A closed run's length comes from the
 * visibility store; an open run's from describe, because visibility records of open runs are not
 * refreshed on every event. The difference of two calls is what a window wrote.
 */
export async function historyEvents(client: Client, taskQueue: string): Promise<number> {
  let sum = 0;
  const open: Array<{ workflowId: string; runId: string }> = [];
  for await (const w of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
    if (w.status.name === 'RUNNING') open.push({ workflowId: w.workflowId, runId: w.runId });
    else sum += w.historyLength;
  }
  // a handful at a time: hundreds of describes at once would be the load we measure
  for (let i = 0; i < open.length; i += 20) {
    const lens = await Promise.all(open.slice(i, i + 20).map(async (o) => {
      try {
        const d = await client.workflow.getHandle(o.workflowId, o.runId).describe();
        return d.historyLength;
      } catch {
        return 0;
      }
    }));
    sum += lens.reduce((a, b) => a + b, 0);
  }
  return sum;
}

/** The pid of the replica running the watch activity (worker identity is `<host>-<pid>`). */
export async function informerHolderPid(client: Client, taskQueue: string): Promise<number | undefined> {
  const id = await informerWorkflowIdOf(client, taskQueue);
  if (!id) return undefined;
  const d = await client.workflow.getHandle(id).describe();
  const identity = d.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '';
  const pid = Number(/-(\d+)$/.exec(identity)?.[1]);
  return Number.isFinite(pid) ? pid : undefined;
}

/** Once no manager polls a bench task queue any more, its open runs (the informer above all) only linger: end them. */
export async function terminateQueue(client: Client, taskQueue: string): Promise<void> {
  for await (const w of client.workflow.list({ query: `${deploymentQueuesQuery(taskQueue)} AND ExecutionStatus = "Running"` })) {
    await client.workflow.getHandle(w.workflowId, w.runId).terminate('benchmark finished').catch(() => undefined);
  }
}
