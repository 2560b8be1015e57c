import type { Logger } from 'pino';
import type { PolicyRule } from '../../workflows/clusterrole-aggregation/logic';
import { apiCall } from '../kube/failures';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller';

export interface ApplyAggregatedRulesRequest {
  name: string;
  rules: PolicyRule[];
  reason: string;
}

/**
 * Server-side apply of the rules alone, forced, under upstream's field manager: applying the same
 * rules twice is a no-op, and the role's other fields stay whoever's they are.
 */
export function createAggregationActivities(deps: { rest: KubeRest; logger: Logger }) {
  return {
    async applyAggregatedRules(req: ApplyAggregatedRulesRequest): Promise<{ resourceVersion: string }> {
      return apiCall(async () => {
        const r = await deps.rest.request<{ metadata?: { resourceVersion?: string } }>(
          'PATCH',
          `${resourcePath(RESOURCES.clusterRoles, undefined, req.name)}?fieldManager=${AGGREGATION_FIELD_MANAGER}&force=true`,
          {
            body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: req.name }, rules: req.rules },
            contentType: 'application/apply-patch+yaml',
          },
        );
        deps.logger.info({ controller: 'clusterrole-aggregation', key: req.name, reason: req.reason, rules: req.rules.length }, 'aggregated cluster role');
        return { resourceVersion: r.body.metadata?.resourceVersion ?? '' };
      });
    },
  };
}

export type AggregationActivities = ReturnType<typeof createAggregationActivities>;
