import type { KubeObject } from '../../activities/kube/projections';
import { cleanNamespace } from '../../bench/lib/stack';
import { waitFor } from '../../bench/lib/util';
import { exactly, podsDeleted } from '../checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

const NAME = 'owner';
const size = (mode: ChaosMode) => (mode === 'full' ? 200 : 50);

const rsPath = (ctx: ChaosContext) => `/apis/apps/v1/namespaces/${ctx.ns}/replicasets/${NAME}`;
const pods = async (ctx: ChaosContext) =>
  (await ctx.rest.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`)).body.items;
const ownerExists = (ctx: ChaosContext) => ctx.rest.request('GET', rsPath(ctx)).then(() => true, () => false);

/**
 * A ReplicaSet of 200 pods (50 quick) deleted with propagationPolicy Foreground: the garbage
 * collector deletes every dependent, then takes the foregroundDeletion finalizer off the owner.
 * Exact at the end: the owner and every pod gone, each pod deleted by the collector. A second
 * DELETE of a pod already terminating is not counted against either: upstream's collector sends
 * one too when its graph has not yet seen the first take effect (9 of 50 pods in one run).
 */
export const foregroundScenario: ChaosScenario = {
  slug: 'foreground',
  title: (mode) => `a ${size(mode)}-dependent foreground deletion`,
  controllers: ['replicaset', 'garbagecollector'],

  async prepare(ctx) {
    const replicas = size(ctx.mode);
    await ctx.rest.request('POST', `/apis/apps/v1/namespaces/${ctx.ns}/replicasets`, {
      body: {
        metadata: { name: NAME },
        spec: {
          replicas,
          selector: { matchLabels: { app: NAME } },
          // each pod takes 2 s to go once deleted, as a kubelet's graceful stop would: the owner
          // waits on its dependents for a while, so the kills land while it does
          template: {
            metadata: { labels: { app: NAME }, annotations: { 'kwok.temporal-kcm.dev/termination-delay-ms': '2000' } },
            spec: { containers: [{ name: 'app', image: 'registry.invalid/owner:1' }], terminationGracePeriodSeconds: 2 },
          },
        },
      },
    });
    await waitFor(`${NAME} at ${replicas} pods`, async () => (await pods(ctx)).filter((p) => !p.metadata?.deletionTimestamp).length === replicas, 300_000, 500);
  },

  async act(ctx) {
    await ctx.rest.request('DELETE', rsPath(ctx), { body: { propagationPolicy: 'Foreground' } });
  },

  async converged(ctx) {
    return !(await ownerExists(ctx)) && (await pods(ctx)).length === 0;
  },

  async outcome(ctx) {
    return { ownerExists: await ownerExists(ctx), pods: (await pods(ctx)).length };
  },

  async violations(ctx, audit) {
    return [
      ...exactly('pods deleted by the controllers', size(ctx.mode), podsDeleted(audit, ctx.ns).size),
      ...exactly('pods left', 0, (await pods(ctx)).length),
      ...(await ownerExists(ctx) ? ['the owner is still there'] : []),
    ];
  },

  cleanup: (ctx) => cleanNamespace(ctx.rest, ctx.ns),
};
