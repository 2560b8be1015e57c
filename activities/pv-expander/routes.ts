import type { RouteContext } from '../../workers/descriptor';
import { CONTROLLER, asksForMore, wantsExpansionSync } from '../../workflows/pv-expander/logic';
import { mergeExpansionEvents, pvExpanderWorkflow, pvExpanderWorkflowId } from '../../workflows/pv-expander/workflow';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { EXPANSION_CLAIM_FIELDS, expansionClaim } from './projections';

/**
 * Routes of the expand controller, as upstream's handlers queue claims: a bound claim when it is
 * listed, and when an update raises its request or its capacity. Its deletion is not sent
 * (upstream queues it, then finds nothing to do).
 */
export function pvExpanderRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  cache.watch(RESOURCES.persistentVolumeClaims, EXPANSION_CLAIM_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') return;
      const claim = expansionClaim(ev.obj);
      const before = ev.type === 'updated' && ev.source === 'watch' ? expansionClaim(ev.old) : undefined;
      // a claim that asks for no more than it has needs no workflow: upstream's sync of it returns at once
      if (!wantsExpansionSync(before, claim) || !asksForMore(claim)) return;
      signaller.queue({
        controller: CONTROLLER, workflow: pvExpanderWorkflow, kind: 'PersistentVolumeClaim', namespace: claim.namespace, name: claim.name, uid: claim.uid,
        args: { namespace: claim.namespace, name: claim.name, uid: claim.uid, tuning: input.tuning }, workflowId: pvExpanderWorkflowId(claim.namespace, claim.name),
      }, { claim }, mergeExpansionEvents);
    },
  });
  return {};
}
