import type { KubeObject } from '../../activities/kube/projections';
import { waitFor } from '../../bench/lib/util';
import { mergePatch } from '../../bench/lib/workloads';
import { exactly } from '../../chaos/checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from '../../chaos/scenarios/types';

const NAME = 'keep';
const size = (mode: ChaosMode) => (mode === 'full' ? { from: 20, to: 30 } : { from: 4, to: 6 });

const rsPath = (ctx: ChaosContext) => `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/${NAME}`;
const podPath = (ctx: ChaosContext, name: string) => `/api/v1/namespaces/${ctx.ns}/pods/${name}`;
const allPods = async (ctx: ChaosContext) =>
  (await ctx.rest.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods`)).body.items.filter((p) => !p.metadata?.deletionTimestamp);
const ownedPods = async (ctx: ChaosContext) => (await allPods(ctx)).filter((p) => (p.metadata?.ownerReferences ?? []).some((o) => o.controller));
const ownerExists = (ctx: ChaosContext) => ctx.rest.request('GET', rsPath(ctx)).then(() => true, () => false);
const relabel = (ctx: ChaosContext, pod: string, app: string) => mergePatch(ctx.rest, podPath(ctx, pod), { metadata: { labels: { app } } });

/**
 * A bare ReplicaSet's life around its pods: scaled up; one pod relabelled out of its selector
 * (released, and replaced) and back in (adopted again, and the surplus deleted); then the
 * ReplicaSet deleted with propagationPolicy Orphan, so the garbage collector takes the owner
 * reference off every pod and the orphan finalizer off the owner.
 */
export const adoptionScenario: ChaosScenario = {
  slug: 'adoption',
  title: (mode) => `a ReplicaSet of ${size(mode).from} to ${size(mode).to} pods releasing, adopting and orphaning them`,
  controllers: ['replicaset', 'garbagecollector'],

  async prepare(ctx) {
    const { from } = size(ctx.mode);
    await ctx.rest.request('POST', `/apis/apps/v1/namespaces/${ctx.ns}/replicasets`, { body: {
      metadata: { name: NAME },
      spec: {
        replicas: from,
        selector: { matchLabels: { app: NAME } },
        template: { metadata: { labels: { app: NAME } }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'registry.invalid/keep:1' }] } },
      },
    } });
    await waitFor(`${NAME} at ${from} pods`, async () => (await ownedPods(ctx)).length === from, 120_000, 250);
  },

  async act(ctx) {
    const { to } = size(ctx.mode);
    await mergePatch(ctx.rest, rsPath(ctx), { spec: { replicas: to } });
    await waitFor(`${NAME} at ${to} pods`, async () => (await ownedPods(ctx)).length === to, 120_000, 250);
    const [loose] = (await ownedPods(ctx)).map((p) => p.metadata!.name!).sort();
    await relabel(ctx, loose, 'loose');
    // released (the owner reference gone) and replaced
    await waitFor(`${loose} released and replaced`, async () => {
      const pods = await allPods(ctx);
      const p = pods.find((x) => x.metadata?.name === loose);
      return !(p?.metadata?.ownerReferences ?? []).length && pods.filter((x) => x.metadata?.labels?.app === NAME).length === to;
    }, 120_000, 250);
    await relabel(ctx, loose, NAME);
    // adopted again: one too many, so one goes
    await waitFor(`${loose} adopted and the surplus deleted`, async () => (await ownedPods(ctx)).length === to && (await allPods(ctx)).length === to, 120_000, 250);
    await ctx.rest.request('DELETE', rsPath(ctx), { body: { propagationPolicy: 'Orphan' } });
  },

  async converged(ctx) {
    return !(await ownerExists(ctx)) && (await allPods(ctx)).every((p) => !(p.metadata?.ownerReferences ?? []).length);
  },

  async outcome(ctx) {
    return { ownerExists: await ownerExists(ctx), pods: (await allPods(ctx)).length, owned: (await ownedPods(ctx)).length };
  },

  async violations(ctx) {
    return [
      ...exactly('pods left, orphaned', size(ctx.mode).to, (await allPods(ctx)).length),
      ...exactly('pods still owned', 0, (await ownedPods(ctx)).length),
      ...(await ownerExists(ctx) ? ['the ReplicaSet is still there'] : []),
    ];
  },

  async cleanup(ctx) {
    await ctx.rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods`, { body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
  },
};
