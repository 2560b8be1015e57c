import { mergeNamespaceEvents, namespaceWorkflowId } from '../../workflows/namespace/workflow';
import type { NamespaceEvent, NamespaceWorkflowInput } from '../../workflows/namespace/workflow';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { NAMESPACES_PATH } from '../informers/namespace-phases';
import { durationFlag, flagGiven } from '../../workers/flags';
import { namespaceWorkflow } from '../../workflows/namespace/workflow';

export const NAMESPACE_SYNC_PERIOD = durationFlag('namespace-sync-period', '5m', 'how often a terminating namespace is looked at again');


interface Terminating {
  name: string;
  uid: string;
  /** spec.finalizers, joined: a change there is worth a look, a status change (our own writes) is not */
  finalizers: string;
}

function terminating(o: KubeObject): Terminating | undefined {
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
export function namespaceRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('namespace')) return undefined;
  const seen = new Map<string, Terminating>(); // by uid

  const queue = (ns: Terminating, relist: boolean) => {
    const args: NamespaceWorkflowInput = { name: ns.name, uid: ns.uid, syncMs: flagGiven(input.flags, NAMESPACE_SYNC_PERIOD), tuning: input.tuning };
    const event: NamespaceEvent = relist ? { uid: ns.uid, relist: true } : { uid: ns.uid };
    signaller.queue({ controller: 'namespace', workflow: namespaceWorkflow, kind: 'Namespace', namespace: '', name: ns.name, uid: ns.uid, args,
      workflowId: namespaceWorkflowId(ns.name) }, event, mergeNamespaceEvents);
  };

  const handler: Handler = {
    relisted(objects) {
      seen.clear();
      for (const o of objects) {
        const ns = terminating(o);
        if (!ns) continue;
        seen.set(ns.uid, ns);
        queue(ns, true);
      }
    },
    event(type, o) {
      const uid = o.metadata?.uid ?? '';
      const ns = type === 'DELETED' ? undefined : terminating(o);
      if (!ns) {
        // gone, or not being deleted: a waiting workflow finds out at its next look
        seen.delete(uid);
        return;
      }
      const before = seen.get(uid);
      seen.set(uid, ns);
      if (!before || before.finalizers !== ns.finalizers) queue(ns, false);
    },
  };

  return {
    handlers: new Map<string, Handler>([[NAMESPACES_PATH, handler]]),
    sizes: () => ({ terminatingNamespaces: seen.size }),
  };
}
