import type { Client, WorkflowHandle } from '@temporalio/client';

/**
 * The first run of a workflow ID, the one that did the work. After a kill -9, the replica that
 * takes the watch over resumes it from the last position the killed one recorded; the events
 * replayed from there may start a second run of a finished object's workflow, which finds the
 * work done and ends, answering the state query with that (for example `already-issued` instead of
 * `issued`). Undefined while visibility has not listed the ID yet.
 */
export async function firstRun(client: Client, workflowId: string): Promise<WorkflowHandle | undefined> {
  const runs: Array<{ runId: string; start: number }> = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push({ runId: wf.runId, start: wf.startTime.getTime() });
  const first = runs.sort((a, b) => a.start - b.start)[0];
  return first && client.workflow.getHandle(workflowId, first.runId);
}
