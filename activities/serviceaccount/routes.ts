import { ENSURED_SERVICE_ACCOUNTS, missingServiceAccounts } from '../../workflows/serviceaccount/logic';
import type { NamespaceAccountsEvent, ServiceAccountWorkflowInput } from '../../workflows/serviceaccount/workflow';
import { serviceAccountWorkflowId } from '../../workflows/serviceaccount/workflow';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import { METADATA, type FieldMask } from '../informers/fields';
import { NamespacePhases } from '../informers/namespace-phases';
import type { RouteContext } from '../../workers/descriptor';
import { serviceAccountWorkflow } from '../../workflows/serviceaccount/workflow';

/** Which accounts a namespace holds is all this controller reads of them: their names. */
export const SERVICE_ACCOUNT_NAME_FIELDS: FieldMask = METADATA;

/**
 * Routes of the serviceaccount controller: a namespace that is active and lacks an ensured
 * account (seen when the namespace is added, updated or listed, or when such an account is
 * deleted) starts that namespace's repair workflow. Nothing is signalled while nothing is owed.
 */
export function serviceAccountRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('serviceaccount')) return undefined;
  // registered before the namespaces, whose listener reads it; its own listener comes last (below)
  const accounts = cache.watch(RESOURCES.serviceAccounts, SERVICE_ACCOUNT_NAME_FIELDS);

  const check = (ns: string, active: boolean) => {
    // until the accounts are listed every namespace would look empty
    if (!accounts.synced) return;
    const have = ENSURED_SERVICE_ACCOUNTS.filter((name) => accounts.getByName(ns, name) !== undefined);
    if (!missingServiceAccounts(active, have).length) return;
    const args: ServiceAccountWorkflowInput = { namespace: ns, tuning: input.tuning };
    const event: NamespaceAccountsEvent = { active, present: have };
    signaller.queue({ controller: 'serviceaccount', workflow: serviceAccountWorkflow, kind: 'Namespace', namespace: ns, name: ns, uid: '',
      args, workflowId: serviceAccountWorkflowId(ns) }, event, (_a, b) => b);
  };
  const phases = NamespacePhases.watch(cache, check);

  accounts.subscribe({
    onEvent(ev) {
      // a (re)list is judged as a whole once it is in (below); a watch only takes accounts away by deleting them
      if (ev.source !== 'watch' || ev.type !== 'deleted') return;
      const ns = ev.old.metadata?.namespace ?? '';
      check(ns, phases.isActive(ns));
    },
    onListed() {
      // namespaces listed before the accounts were, and accounts gone during a watch gap, are judged now
      for (const ns of [...phases.activeNamespaces()]) check(ns, true);
    },
  });

  return {};
}
