import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { SA_NAME, SA_NAMESPACE, SA_UID } from '../../workflows/search-attributes';
import type { GoneSweep } from './family';

/** An open workflow of one object, as visibility lists it. */
export interface OpenObjectWorkflow {
  workflowId: string;
  namespace: string;
  name: string;
  uid?: string;
}

/** The open workflows whose object `listed` does not have (by namespace and name). */
export function missingFromList(open: readonly OpenObjectWorkflow[], listed: (namespace: string, name: string) => boolean): OpenObjectWorkflow[] {
  return open.filter((w) => !listed(w.namespace, w.name));
}

/** The visibility query for one controller's open workflows of one kind, on one deployment's task queues. */
export function openWorkflowsQuery(controller: string, kind: string, baseTaskQueue: string): string {
  return `KcmController = ${JSON.stringify(controller)} AND KcmKind = ${JSON.stringify(kind)} AND ExecutionStatus = "Running" AND ${deploymentQueuesQuery(baseTaskQueue)}`;
}

/** One object's path in a collection's (`/apis/apps/v1/replicasets` -> `/apis/apps/v1/namespaces/a/replicasets/web`). */
export function objectPathIn(collection: string, namespace: string, name: string): string {
  const base = collection.replace(/\?.*$/, '');
  const cut = base.lastIndexOf('/');
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base.slice(0, cut)}${ns}${base.slice(cut)}/${encodeURIComponent(name)}`;
}

/**
 * One sweep (see GoneSweep): the controller's open workflows whose object the synced store lacks,
 * and the API server confirms gone (`stillThere` false), are sent the sweep's signal. Returns how
 * many were told. The confirmation matters after a resumed watch: its store starts at the last
 * holder's position, older than some open workflows' objects until the watch has caught up.
 * Visibility is eventually consistent, so a workflow started in the last moments may be missed: its
 * own signal started it, so its object existed then and a later deletion reaches it through the
 * watch.
 */
export async function sweepGone(client: Client, baseTaskQueue: string, sweep: GoneSweep, log: Logger, signal: AbortSignal,
  stillThere: (path: string) => Promise<boolean>): Promise<number> {
  const open: OpenObjectWorkflow[] = [];
  for await (const w of client.workflow.list({ query: openWorkflowsQuery(sweep.controller, sweep.kind, baseTaskQueue) })) {
    if (signal.aborted) return 0;
    const name = w.typedSearchAttributes.get(SA_NAME);
    // singletons (a fixed ID per deployment) name no object
    if (!name) continue;
    open.push({ workflowId: w.workflowId, namespace: w.typedSearchAttributes.get(SA_NAMESPACE) ?? '', name, uid: w.typedSearchAttributes.get(SA_UID) });
  }
  const missing = missingFromList(open, (namespace, name) => sweep.store.getByName(namespace, name) !== undefined);
  let told = 0;
  for (const w of missing) {
    if (signal.aborted) break;
    if (await stillThere(objectPathIn(sweep.store.path, w.namespace, w.name))) continue;
    told++;
    try {
      await client.workflow.getHandle(w.workflowId).signal(OBJECT_EVENT_SIGNAL, sweep.reobserve(w.uid));
      log.info({ controller: sweep.controller, key: w.namespace ? `${w.namespace}/${w.name}` : w.name }, 'object missing from the first list: its workflow told');
    } catch (e) {
      // it ended meanwhile: nothing left to tell
      if (!(e instanceof WorkflowNotFoundError)) throw e;
    }
  }
  return told;
}
