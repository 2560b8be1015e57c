import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { PODS_BY_NODE } from '../informers/indexes';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { CONTROLLER, podKey, sameTaints, sameTolerations, type TaintView } from '../../workflows/taint-eviction/logic';
import {
  TaintEvictionEvent,
  TaintEvictionWorkflowInput,
  mergeTaintEvictionEvents,
  taintEvictionWorkflow,
  taintEvictionWorkflowId,
} from '../../workflows/taint-eviction/workflow';
import { EVICTION_NODE_FIELDS, EVICTION_POD_FIELDS, evictionPodView, nodeNoExecuteTaints, podNodeName } from './activities';


/**
 * Routes of the taint eviction controller, as upstream's node and pod handlers enqueue: a node
 * whose NoExecute taints change sends its workflow the taints and every pod bound to it; a pod
 * bound to a node with NoExecute taints sends its node's workflow what changed of it. Nothing is
 * sent for a node without NoExecute taints unless it just lost them (its countdowns are cancelled).
 */
export function taintEvictionRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (node: string, uid: string, event: TaintEvictionEvent) => {
    const args: TaintEvictionWorkflowInput = { node, tuning: input.tuning };
    signaller.queue({ controller: CONTROLLER, workflow: taintEvictionWorkflow, kind: 'Node', namespace: '', name: node, uid, args,
      workflowId: taintEvictionWorkflowId(node) }, { ...event, at: Date.now() }, mergeTaintEvictionEvents, true);
  };

  const pods = cache.watch(RESOURCES.pods, EVICTION_POD_FIELDS);
  pods.addIndex(PODS_BY_NODE);
  /** a tainted node's workflow gets the taints and every pod bound to the node */
  const sendNode = (n: KubeObject, taints: TaintView[]) => {
    const name = n.metadata?.name ?? '';
    queue(name, n.metadata?.uid ?? '', { node: { uid: n.metadata?.uid ?? '', taints, pods: pods.byIndex(PODS_BY_NODE, name).map(evictionPodView) } });
  };
  /**
   * Once both nodes and pods are listed (and after every later list of either), every tainted node
   * hears its pods afresh. Not before: a node event carries the node's whole pod set, and one sent
   * while the pods are still being listed would cancel the countdowns of pods not listed yet (a
   * restarted replica did, and started a running toleration over).
   */
  const relistAll = () => {
    if (pods.synced && nodes.synced) eachTainted();
  };
  const nodes = cache.watch(RESOURCES.nodes, EVICTION_NODE_FIELDS);
  // each node on its own: one the route throws on leaves the others their pods
  const eachTainted = nodes.eachObject((n) => {
    const taints = nodeNoExecuteTaints(n);
    if (taints.length) sendNode(n, taints);
  });
  nodes.subscribe({
    onListed: relistAll,
    onEvent(ev) {
      if (ev.type === 'deleted') {
        if (nodeNoExecuteTaints(ev.old).length) queue(ev.old.metadata?.name ?? '', ev.old.metadata?.uid ?? '', { nodeGone: true });
        return;
      }
      // lists end in relistAll
      if (ev.source !== 'watch' || !pods.synced) return;
      const taints = nodeNoExecuteTaints(ev.obj);
      const before = ev.type === 'updated' ? nodeNoExecuteTaints(ev.old) : [];
      if (ev.type === 'updated' && sameTaints(before, taints)) return;
      // an untainted node has no countdowns to cancel unless it had taints a moment ago
      if (taints.length === 0 && before.length === 0) return;
      sendNode(ev.obj, taints);
    },
  });

  const taintedNode = (name: string) => {
    const n = name ? nodes.getByName('', name) : undefined;
    return n && nodeNoExecuteTaints(n).length ? n : undefined;
  };

  pods.subscribe({
    onListed: relistAll,
    onEvent(ev) {
      // lists end in relistAll
      if (ev.source !== 'watch' || !nodes.synced) return;
      if (ev.type === 'deleted') {
        const n = taintedNode(podNodeName(ev.old));
        if (n) queue(n.metadata?.name ?? '', n.metadata?.uid ?? '', { podsDeleted: [podKey(evictionPodView(ev.old))] });
        return;
      }
      const n = taintedNode(podNodeName(ev.obj));
      if (!n) return;
      if (ev.type === 'updated' && podNodeName(ev.old) === podNodeName(ev.obj)
        && sameTolerations(evictionPodView(ev.old).tolerations, evictionPodView(ev.obj).tolerations)) return;
      queue(n.metadata?.name ?? '', n.metadata?.uid ?? '', { pods: [evictionPodView(ev.obj)] });
    },
  });

  // a Node gone while no watch ran: told of its deletion as the watch would have told it
  return { sweeps: [{ controller: CONTROLLER, kind: 'Node', store: nodes, reobserve: () => ({ nodeGone: true, at: Date.now() } satisfies TaintEvictionEvent) }] };
}
