import type { StartContext } from './descriptor';
import { OBJECT_EVENT_SIGNAL } from '../workflows/runtime/object-loop';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE } from '../workflows/search-attributes';

/** A controller's one workflow per deployment (podgc, node lifecycle, the legacy token cleaner). */
export interface Singleton<A, E> {
  /** the descriptor's `short`: the KcmController search attribute */
  controller: string;
  workflow: (input: A) => Promise<void>;
  /** named after the deployment's --task-queue, so every replica of it finds the same run */
  workflowId: string;
  args: A;
  /** what this replica hands the run already going, usually its flags' settings */
  event: E;
  /** the kind of object it works on, for the Web UI's search */
  kind: string;
  staticSummary: string;
}

/**
 * No watch event starts a singleton, so every replica starts it at its own start if none runs and
 * signals it this replica's settings: a deployment restarted with changed flags thereby applies
 * them to the run already going.
 */
export async function startSingleton<A, E>(ctx: StartContext, s: Singleton<A, E>): Promise<void> {
  await ctx.client.workflow.signalWithStart(s.workflow, {
    workflowId: ctx.workflowIdPrefix + s.workflowId,
    taskQueue: ctx.taskQueue,
    args: [s.args],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [s.event],
    staticSummary: s.staticSummary,
    typedSearchAttributes: [
      { key: SA_CONTROLLER, value: s.controller },
      { key: SA_KIND, value: s.kind },
      { key: SA_NAMESPACE, value: '' },
      { key: SA_NAME, value: '' },
    ],
  });
}
