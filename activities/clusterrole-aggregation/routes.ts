import { aggregateRules, sameRules, sourcesOf, type ClusterRoleView, type PolicyRule } from '../../workflows/clusterrole-aggregation/logic';
import type { AggregationEvent, AggregationWorkflowInput } from '../../workflows/clusterrole-aggregation/workflow';
import { aggregationWorkflowId } from '../../workflows/clusterrole-aggregation/workflow';
import type { LabelSelector } from '../../workflows/common/meta';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import type { FieldMask } from '../informers/fields';
import type { RouteContext } from '../../workers/descriptor';
import { clusterRoleAggregationWorkflow } from '../../workflows/clusterrole-aggregation/workflow';

export interface AggregationRole extends ClusterRoleView {
  uid: string;
  /** absent when the role does not aggregate */
  selectors?: LabelSelector[];
}

type ClusterRoleObject = KubeObject & { rules?: PolicyRule[]; aggregationRule?: { clusterRoleSelectors?: LabelSelector[] } };

/** What roleOf reads of a ClusterRole. */
export const CLUSTER_ROLE_FIELDS: FieldMask = { metadata: true, rules: true, aggregationRule: { clusterRoleSelectors: true } };

export function roleOf(o: KubeObject): AggregationRole {
  const r = o as ClusterRoleObject;
  const selectors = r.aggregationRule ? r.aggregationRule.clusterRoleSelectors ?? [] : undefined;
  return { name: r.metadata?.name ?? '', uid: r.metadata?.uid ?? '', labels: r.metadata?.labels ?? {}, rules: r.rules ?? [], ...(selectors ? { selectors } : {}) };
}

/**
 * Routes of clusterrole-aggregation. Upstream requeues every aggregated role on any ClusterRole
 * change, since it keeps no dependency graph; here the same check runs against the shared store,
 * and only a role whose rules differ from the union of its sources is signalled, with those
 * sources, so the workflow decides without reading anything.
 */
export function aggregationRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('clusterrole-aggregation')) return undefined;
  // subscribed below, once checkAll can read it (a store already listed calls back at once)
  const roles = cache.watch(RESOURCES.clusterRoles, CLUSTER_ROLE_FIELDS);

  /** every role as of the last check: what each aggregated role is checked against (any change of a role checks them all again) */
  let all: ReturnType<typeof roleOf>[] = [];
  // each aggregated role on its own: one the route throws on leaves the others checked
  const eachRole = roles.eachObject((o) => {
    const r = roleOf(o);
    if (!r.selectors) return;
    if (sameRules(aggregateRules(r.name, r.selectors, all), r.rules)) return;
    const sources = sourcesOf(r.name, r.selectors, all).map(({ name, labels, rules }) => ({ name, labels, rules }));
    const args: AggregationWorkflowInput = { name: r.name, tuning: input.tuning };
    const event: AggregationEvent = { uid: r.uid, selectors: r.selectors, rules: r.rules, sources };
    signaller.queue({ controller: 'clusterrole-aggregation', workflow: clusterRoleAggregationWorkflow, kind: 'ClusterRole', namespace: '', name: r.name,
      uid: r.uid, args, workflowId: aggregationWorkflowId(r.name) }, event, (_a, b) => b);
  });
  const checkAll = () => {
    if (!roles.synced) return;
    all = [...roles.list()].map(roleOf);
    eachRole();
  };

  roles.subscribe({
    onEvent(ev) {
      // a (re)list is checked once, as a whole, when it is in
      if (ev.source === 'watch') checkAll();
    },
    onListed: checkAll,
  });

  return {};
}
