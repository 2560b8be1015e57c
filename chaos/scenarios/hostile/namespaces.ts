import { mergePatch } from '../../../bench/lib/workloads';
import type { ChaosContext } from '../types';
import { get, gone, hasCondition, list, makeNamespace, post, type Condition, type HostileItem, type Meta } from './item';

/**
 * Namespaces whose deletion cannot finish:
 * - one whose spec carries a finalizer nobody removes: upstream empties it, takes off its own
 *   `kubernetes` finalizer and leaves it Terminating;
 * - one holding a ConfigMap with a finalizer nobody removes: upstream deletes the rest, then reports
 *   NamespaceContentRemaining and NamespaceFinalizersRemaining and keeps checking back.
 */
const NEVER_FINALIZER = 'hostile.example.com/never';
const HOLD_FINALIZER = 'hostile.example.com/hold';
const names = (ctx: ChaosContext) => ({ never: `${ctx.ns}-never`, held: `${ctx.ns}-held` });

interface Namespace { metadata: Meta; spec?: { finalizers?: string[] }; status?: { phase?: string; conditions?: Condition[] } }
const cms = (ctx: ChaosContext, ns: string) => list<{ metadata: Meta }>(ctx, `/api/v1/namespaces/${ns}/configmaps`).catch(() => [] as Array<{ metadata: Meta }>);
const ns = (ctx: ChaosContext, name: string) => get<Namespace>(ctx, `/api/v1/namespaces/${name}`);

export const stuckNamespaces: HostileItem = {
  slug: 'stuck-namespaces',
  what: 'a namespace whose finalizer is never removed; one holding an object whose finalizer is never removed',
  controllers: ['namespace'],

  async prepare(ctx) {
    const n = names(ctx);
    await makeNamespace(ctx, n.never, { finalizers: ['kubernetes', NEVER_FINALIZER] });
    await post(ctx, `/api/v1/namespaces/${n.never}/configmaps`, { metadata: { name: 'content' }, data: { k: 'v' } });
    await makeNamespace(ctx, n.held);
    await post(ctx, `/api/v1/namespaces/${n.held}/configmaps`, { metadata: { name: 'content' }, data: { k: 'v' } });
    await post(ctx, `/api/v1/namespaces/${n.held}/configmaps`, { metadata: { name: 'held', finalizers: [HOLD_FINALIZER] }, data: { k: 'v' } });
  },

  async act(ctx) {
    const n = names(ctx);
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${n.never}`);
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${n.held}`);
  },

  async settled(ctx) {
    const n = names(ctx);
    const never = await ns(ctx, n.never);
    const held = await ns(ctx, n.held);
    return JSON.stringify(never?.spec?.finalizers) === JSON.stringify([NEVER_FINALIZER]) && (await cms(ctx, n.never)).length === 0
      && hasCondition(held?.status?.conditions, 'NamespaceFinalizersRemaining') && (await cms(ctx, n.held)).length === 1;
  },

  async view(ctx) {
    const n = names(ctx);
    const show = async (name: string) => {
      const x = await ns(ctx, name);
      return x && {
        phase: x.status?.phase, finalizers: x.spec?.finalizers,
        // these messages name resources and counts, not the run: a user reads them in `kubectl describe`
        conditions: (x.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })).sort((a, b) => a.type.localeCompare(b.type)),
        configMaps: (await cms(ctx, name)).map((c) => c.metadata.name).sort(),
      };
    };
    return { neverFinalized: await show(n.never), contentHeld: await show(n.held) };
  },

  async cleanup(ctx) {
    const n = names(ctx);
    await mergePatch(ctx.rest, `/api/v1/namespaces/${n.held}/configmaps/held`, { metadata: { finalizers: null } }).catch(gone);
    for (const name of [n.never, n.held]) {
      const x = await ns(ctx, name);
      if (x) await ctx.rest.request('PUT', `/api/v1/namespaces/${name}/finalize`, { body: { ...x, spec: { finalizers: [] } } }).catch(gone);
    }
  },
};
