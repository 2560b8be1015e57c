import { cleanNamespace } from '../../bench/lib/stack';
import { CHAOS_SECRET_VALUE } from '../histories';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

/** objects in the namespace: ConfigMaps, Secrets and Services in equal shares */
const size = (mode: ChaosMode) => (mode === 'full' ? 2000 : 300);
const KINDS = [
  { path: 'configmaps', body: (name: string) => ({ metadata: { name }, data: { k: 'v' } }) },
  // each Secret holds the run's secret value, which no history or log may show (chaos/histories.ts)
  { path: 'secrets', body: (name: string) => ({ metadata: { name }, stringData: { k: CHAOS_SECRET_VALUE } }) },
  { path: 'services', body: (name: string) => ({ metadata: { name }, spec: { ports: [{ port: 80 }], clusterIP: 'None' } }) },
];

interface Namespace { status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason?: string }> } }
const getNamespace = (ctx: ChaosContext) => ctx.rest.request<Namespace>('GET', `/api/v1/namespaces/${ctx.ns}`).then((r) => r.body, () => undefined);

/**
 * A namespace of 2000 objects (300 quick) deleted: the namespace controller deletes everything in
 * it and then the namespace. Exact at the end: the namespace is gone, as it is under upstream.
 */
export const namespaceScenario: ChaosScenario = {
  slug: 'namespace',
  title: (mode) => `a namespace deletion of ${size(mode)} objects`,
  controllers: ['namespace'],

  async prepare(ctx) {
    const n = size(ctx.mode);
    const queue = Array.from({ length: n }, (_, i) => ({ kind: KINDS[i % KINDS.length], name: `o-${i}` }));
    // a few writers at once: 2000 objects one by one would take longer than the scenario itself
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let o = queue.shift(); o; o = queue.shift()) {
        await ctx.rest.request('POST', `/api/v1/namespaces/${ctx.ns}/${o.kind.path}`, { body: o.kind.body(o.name) });
      }
    }));
  },

  async act(ctx) {
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}`);
  },

  converged: async (ctx) => (await getNamespace(ctx)) === undefined,

  outcome: async (ctx) => ({ namespaceExists: (await getNamespace(ctx)) !== undefined }),

  async violations(ctx) {
    const left = await getNamespace(ctx);
    if (!left) return [];
    const stuck = (left.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => `${c.type} (${c.reason ?? ''})`);
    return [`the namespace is still there, ${left.status?.phase ?? 'no phase'}${stuck.length ? `: ${stuck.join(', ')}` : ''}`];
  },

  cleanup: (ctx) => cleanNamespace(ctx.rest, ctx.ns),
};
