import { mergeNamespaceEvents, namespaceWorkflowId } from '../../workflows/namespace/workflow';
import type { NamespaceEvent, NamespaceWorkflowInput } from '../../workflows/namespace/workflow';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import type { FieldMask } from '../informers/fields';
import type { RouteFamily } from '../informers/family';
import type { RouteContext } from '../../workers/descriptor';
import { durationFlag, flagGiven } from '../../workers/flags';
import { namespaceWorkflow } from '../../workflows/namespace/workflow';

export const NAMESPACE_SYNC_PERIOD = durationFlag('namespace-sync-period', '5m', 'how often a terminating namespace is looked at again');

export interface Terminating {
  name: string;
  uid: string;
  /** spec.finalizers, joined: a change there is worth a look, a status change (our own writes) is not */
  finalizers: string;
}

/** What terminating reads of a namespace: its identity, whether it is being deleted, and its finalizers. */
export const TERMINATING_FIELDS: FieldMask = { metadata: true, spec: { finalizers: true } };

/** A namespace being deleted, as the routes compare it; undefined for one that is not. */
export function terminating(o: KubeObject): Terminating | undefined {
  const m = o.metadata ?? {};
  if (!m.deletionTimestamp || !m.name || !m.uid) return undefined;
  const spec = (o.spec ?? {}) as { finalizers?: string[] };
  return { name: m.name, uid: m.uid, finalizers: (spec.finalizers ?? []).join(',') };
}

/**
 * Routes of the namespace controller, as upstream's handlers enqueue keys: a namespace is sent to
 * its workflow only once it is being deleted, when it is first seen so and after every relist.
 * Later updates that only touch its status (the workflow's own condition writes) are not sent:
 * the workflow keeps its own timers while it waits for content to go.
 */
export function namespaceRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('namespace')) return undefined;

  const queue = (ns: Terminating, relist: boolean) => {
    const args: NamespaceWorkflowInput = { name: ns.name, uid: ns.uid, syncMs: flagGiven(input.flags, NAMESPACE_SYNC_PERIOD), tuning: input.tuning };
    const event: NamespaceEvent = relist ? { uid: ns.uid, relist: true } : { uid: ns.uid };
    signaller.queue({ controller: 'namespace', workflow: namespaceWorkflow, kind: 'Namespace', namespace: '', name: ns.name, uid: ns.uid, args,
      workflowId: namespaceWorkflowId(ns.name) }, event, mergeNamespaceEvents);
  };

  cache.watch(RESOURCES.namespaces, TERMINATING_FIELDS, {
    onEvent(ev) {
      // gone, or not being deleted: a waiting workflow finds out at its next look
      if (ev.type === 'deleted') return;
      const ns = terminating(ev.obj);
      if (!ns) return;
      // a list (the first, or after a watch gap) has every terminating namespace look again
      if (ev.source !== 'watch') {
        queue(ns, true);
        return;
      }
      const before = ev.type === 'updated' ? terminating(ev.old) : undefined;
      if (!before || before.finalizers !== ns.finalizers) queue(ns, false);
    },
  });

  return {};
}
