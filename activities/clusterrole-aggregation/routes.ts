import { ClusterRoleView, PolicyRule, aggregateRules, sameRules, sourcesOf } from '../../workflows/clusterrole-aggregation/logic';
import type { AggregationEvent, AggregationWorkflowInput } from '../../workflows/clusterrole-aggregation/workflow';
import { aggregationWorkflowId } from '../../workflows/clusterrole-aggregation/workflow';
import type { LabelSelector } from '../../workflows/replicaset/types';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { clusterRoleAggregationWorkflow } from '../../workflows/clusterrole-aggregation/workflow';

export const CLUSTERROLES_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

interface Role extends ClusterRoleView {
  uid: string;
  selectors?: LabelSelector[];
}

type ClusterRoleObject = KubeObject & { rules?: PolicyRule[]; aggregationRule?: { clusterRoleSelectors?: LabelSelector[] } };

function roleOf(o: ClusterRoleObject): Role {
  const selectors = o.aggregationRule ? o.aggregationRule.clusterRoleSelectors ?? [] : undefined;
  return { name: o.metadata?.name ?? '', uid: o.metadata?.uid ?? '', labels: o.metadata?.labels ?? {}, rules: o.rules ?? [], ...(selectors ? { selectors } : {}) };
}

/**
 * Routes of clusterrole-aggregation. Upstream requeues every aggregated role on any ClusterRole
 * change, since it keeps no dependency graph; here the same check runs against the watch's
 * cache, and only a role whose rules differ from the union of its sources is signalled, with
 * those sources, so the workflow decides without reading anything.
 */
export function aggregationRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('clusterrole-aggregation')) return undefined;
  const roles = new Map<string, Role>();
  let listed = false;

  const checkAll = () => {
    if (!listed) return;
    const all = [...roles.values()];
    for (const r of all) {
      if (!r.selectors) continue;
      if (sameRules(aggregateRules(r.name, r.selectors, all), r.rules)) continue;
      const sources = sourcesOf(r.name, r.selectors, all).map(({ name, labels, rules }) => ({ name, labels, rules }));
      const args: AggregationWorkflowInput = { name: r.name, tuning: input.tuning };
      const event: AggregationEvent = { uid: r.uid, selectors: r.selectors, rules: r.rules, sources };
      signaller.queue({ controller: 'clusterrole-aggregation', workflow: clusterRoleAggregationWorkflow, kind: 'ClusterRole', namespace: '', name: r.name,
        uid: r.uid, args, workflowId: aggregationWorkflowId(r.name) }, event, (_a, b) => b);
    }
  };

  const handler: Handler = {
    relisted(objects) {
      roles.clear();
      for (const o of objects) {
        const r = roleOf(o);
        roles.set(r.name, r);
      }
      listed = true;
      checkAll();
    },
    event(type, o) {
      const r = roleOf(o);
      if (type === 'DELETED') roles.delete(r.name);
      else roles.set(r.name, r);
      checkAll();
    },
  };

  return { handlers: new Map([[CLUSTERROLES_PATH, handler]]), sizes: () => ({ clusterRoles: roles.size }) };
}
