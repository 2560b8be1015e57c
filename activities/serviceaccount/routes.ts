import { ENSURED_SERVICE_ACCOUNTS, missingServiceAccounts } from '../../workflows/serviceaccount/logic';
import type { NamespaceAccountsEvent, ServiceAccountWorkflowInput } from '../../workflows/serviceaccount/workflow';
import { serviceAccountWorkflowId } from '../../workflows/serviceaccount/workflow';
import type { InformerInput, RouteFamily } from '../informers/family';
import { NAMESPACES_PATH, NamespacePhases } from '../informers/namespace-phases';
import type { Handler } from '../informers/reflector';
import { SetIndex } from '../informers/set-index';
import type { Signaller } from '../informers/signaller';
import { serviceAccountWorkflow } from '../../workflows/serviceaccount/workflow';

export const SERVICEACCOUNTS_PATH = '/api/v1/serviceaccounts';

/**
 * Routes of the serviceaccount controller: a namespace that is active and lacks an ensured
 * account (seen when the namespace is added, updated or listed, or when such an account is
 * deleted) starts that namespace's repair workflow. Nothing is signalled while nothing is owed.
 */
export function serviceAccountRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('serviceaccount')) return undefined;
  /** namespace -> the ensured accounts it holds */
  const present = new SetIndex<string, string>();
  let accountsListed = false;

  const check = (ns: string) => {
    if (!accountsListed) return;
    const have = [...present.get(ns)];
    const active = phases.isActive(ns);
    if (!missingServiceAccounts(active, have).length) return;
    const args: ServiceAccountWorkflowInput = { namespace: ns, tuning: input.tuning };
    const event: NamespaceAccountsEvent = { active, present: have };
    signaller.queue({ controller: 'serviceaccount', workflow: serviceAccountWorkflow, kind: 'Namespace', namespace: ns, name: ns, uid: '',
      args, workflowId: serviceAccountWorkflowId(ns) }, event, (_a, b) => b);
  };
  const phases = new NamespacePhases((ns) => check(ns));

  const setAccount = (ns: string, name: string, exists: boolean) => {
    if (!ENSURED_SERVICE_ACCOUNTS.includes(name)) return;
    if (exists) present.add(ns, name);
    else present.delete(ns, name);
  };

  const accounts: Handler = {
    relisted(objects) {
      present.clear();
      for (const o of objects) setAccount(o.metadata?.namespace ?? '', o.metadata?.name ?? '', true);
      accountsListed = true;
      // namespaces listed before the accounts were are judged now
      for (const ns of [...phases.activeNamespaces()]) check(ns);
    },
    event(type, o) {
      const ns = o.metadata?.namespace ?? '';
      setAccount(ns, o.metadata?.name ?? '', type !== 'DELETED');
      if (type === 'DELETED') check(ns);
    },
  };

  return {
    handlers: new Map<string, Handler>([[NAMESPACES_PATH, phases.handler], [SERVICEACCOUNTS_PATH, accounts]]),
    metadataOnly: new Set([SERVICEACCOUNTS_PATH]),
    sizes: () => ({ namespaces: phases.size }),
  };
}
