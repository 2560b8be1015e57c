import { waitFor } from '../../../bench/lib/util';
import { exactly } from '../../checks';
import type { ChaosContext } from '../types';
import { conditionsView, eventReasons, get, hasCondition, list, makeNamespace, podTemplate, post, type Condition, type HostileItem, type Meta } from './item';

/**
 * A ReplicaSet of a million replicas in a namespace whose quota allows ten pods. Upstream makes
 * ten, then every create is refused: the ReplicaSet gets a ReplicaFailure condition (FailedCreate)
 * and Warning events, retries with backoff, and never makes an eleventh.
 */
const QUOTA_PODS = 10;
const REPLICAS = 1_000_000;
const NAME = 'million';
const nsOf = (ctx: ChaosContext) => `${ctx.ns}-quota`;
const rsPath = (ctx: ChaosContext) => `/apis/apps/v1/namespaces/${nsOf(ctx)}/replicasets/${NAME}`;

interface ReplicaSet { metadata: Meta; status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number; conditions?: Condition[] } }
interface Quota { status?: { hard?: Record<string, string>; used?: Record<string, string> } }
const pods = (ctx: ChaosContext) => list<{ metadata: Meta }>(ctx, `/api/v1/namespaces/${nsOf(ctx)}/pods`);

export const quotaStarved: HostileItem = {
  slug: 'quota-starved',
  what: `a ReplicaSet of ${REPLICAS} replicas under a quota of ${QUOTA_PODS} pods`,
  controllers: ['replicaset', 'resourcequota'],

  async prepare(ctx) {
    await makeNamespace(ctx, nsOf(ctx));
    await post(ctx, `/api/v1/namespaces/${nsOf(ctx)}/resourcequotas`, { metadata: { name: 'pods' }, spec: { hard: { pods: String(QUOTA_PODS) } } });
    // until the quota controller has written its status, admission refuses every pod for another reason
    await waitFor('the pods quota counted', async () => (await get<Quota>(ctx, `/api/v1/namespaces/${nsOf(ctx)}/resourcequotas/pods`))?.status?.hard?.pods !== undefined, 120_000, 250);
  },

  async act(ctx) {
    await post(ctx, `/apis/apps/v1/namespaces/${nsOf(ctx)}/replicasets`, {
      metadata: { name: NAME }, spec: { replicas: REPLICAS, selector: { matchLabels: { app: NAME } }, template: podTemplate({ app: NAME }) },
    });
  },

  async settled(ctx) {
    const rs = await get<ReplicaSet>(ctx, rsPath(ctx));
    return rs?.status?.readyReplicas === QUOTA_PODS && hasCondition(rs.status.conditions, 'ReplicaFailure')
      && (await pods(ctx)).length === QUOTA_PODS;
  },

  async view(ctx) {
    const rs = await get<ReplicaSet>(ctx, rsPath(ctx));
    return {
      pods: (await pods(ctx)).length,
      status: rs && { replicas: rs.status?.replicas, ready: rs.status?.readyReplicas, available: rs.status?.availableReplicas, conditions: conditionsView(rs.status?.conditions) },
      warnings: await eventReasons(ctx, nsOf(ctx), 'ReplicaSet', NAME, 'Warning'),
      quotaUsed: (await get<Quota>(ctx, `/api/v1/namespaces/${nsOf(ctx)}/resourcequotas/pods`))?.status?.used?.pods,
    };
  },

  async violations(ctx) {
    return exactly(`pods in ${nsOf(ctx)}`, QUOTA_PODS, (await pods(ctx)).length);
  },

  async cleanup(ctx) {
    await ctx.rest.request('DELETE', rsPath(ctx)).catch(() => undefined);
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${nsOf(ctx)}/pods`).catch(() => undefined);
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${nsOf(ctx)}`).catch(() => undefined);
  },
};
