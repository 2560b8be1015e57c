import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { CONTROLLER } from '../../workflows/ttl/logic';
import { TtlEvent, ttlWorkflowId, TtlWorkflowInput, mergeTtlEvents, ttlWorkflow } from '../../workflows/ttl/workflow';
import { TTL_NODE_FIELDS, ttlAnnotationOf } from './activities';

/**
 * Routes of the TTL controller: the node count whenever a node comes or goes, and a node's
 * annotation when it appears or the annotation changes. A node's other updates (heartbeats, most
 * of its traffic) send nothing: they change neither the count nor what the node says.
 */
export function ttlRoutes({ input, signaller, cache, baseTaskQueue }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (event: TtlEvent) => {
    const args: TtlWorkflowInput = { tuning: input.tuning };
    signaller.queue({ controller: CONTROLLER, workflow: ttlWorkflow, kind: 'Node', namespace: '', name: '', uid: '', args, workflowId: ttlWorkflowId(baseTaskQueue) },
      event, mergeTtlEvents);
  };

  const nodes = cache.watch(RESOURCES.nodes, TTL_NODE_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') {
        queue({ count: nodes.size, nodesGone: [ev.old.metadata?.name ?? ''] });
        return;
      }
      const name = ev.obj.metadata?.name ?? '';
      const value = ttlAnnotationOf(ev.obj);
      if (ev.type === 'added') {
        queue({ count: nodes.size, nodes: [[name, value]] });
        return;
      }
      // a relist re-sends every node, so a workflow that lost track is set right
      if (ev.source === 'watch' && ttlAnnotationOf(ev.old) === value) return;
      queue({ count: nodes.size, nodes: [[name, value]] });
    },
  });

  return {};
}
