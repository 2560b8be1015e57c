import { workflowInfo } from '@temporalio/workflow';

/** A workflow with nothing to do but prove a real Worker ran it on the dev server. */
export async function smokeWorkflow(name: string): Promise<string> {
  return `reconciled ${name} in ${workflowInfo().workflowId}`;
}
