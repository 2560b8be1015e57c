import { cleanNamespace, releasePodFinalizers } from '../../../bench/lib/stack';
import { waitFor } from '../../../bench/lib/util';
import { deploymentComplete, mergePatch, type WorkloadStatus } from '../../../bench/lib/workloads';
import type { ChaosContext, ChaosScenario } from '../types';
import { crowdedService } from './crowd';
import { unreachableSchedules } from './cronjobs';
import { fatRevisions } from './fat-revisions';
import { fatTemplate } from './fat-template';
import { tenThousandIndexes } from './indexes';
import { conditionsView, get, post, podTemplate, type Condition, type HostileItem, type Meta } from './item';
import { stuckNamespaces } from './namespaces';
import { ownerReferences } from './owners';
import { quotaStarved } from './quota';
import { overlappingSelectors } from './selectors';

/** The corpus: valid objects a controller may choke on (docs/RELIABILITY.md lists them). */
export const HOSTILE_ITEMS: HostileItem[] = [
  overlappingSelectors, ownerReferences, quotaStarved, fatTemplate, fatRevisions, crowdedService, unreachableSchedules, tenThousandIndexes, stuckNamespaces,
];

/**
 * The canary: an ordinary Deployment scaled and rolled once the corpus is in. It converging proves
 * the hostile objects wedged no worker slot and starved no queue.
 */
const CANARY = 'canary';
const canaryImage = (n: number) => `registry.invalid/canary:${n}`;
type Deployment = WorkloadStatus & { metadata: Meta; spec: WorkloadStatus['spec'] & { template: { spec: { containers: Array<{ image: string }> } } }; status?: WorkloadStatus['status'] & { conditions?: Condition[] } };
const canaryPath = (ctx: ChaosContext) => `/apis/apps/v1/namespaces/${ctx.ns}/deployments/${CANARY}`;
const canaryAt = async (ctx: ChaosContext, replicas: number, image: number) => {
  const d = await get<Deployment>(ctx, canaryPath(ctx));
  return d !== undefined && d.spec.replicas === replicas && d.spec.template.spec.containers[0].image === canaryImage(image) && deploymentComplete(d);
};

async function unsettled(ctx: ChaosContext): Promise<string[]> {
  const out: string[] = [];
  for (const item of HOSTILE_ITEMS) if (!(await item.settled(ctx).catch(() => false))) out.push(item.slug);
  if (!(await canaryAt(ctx, 6, 2).catch(() => false))) out.push(CANARY);
  return out;
}

/** per pass (its namespace), the entries last reported unsettled */
const lastUnsettled = new Map<string, string>();

/**
 * The hostile corpus made at once, beside the canary. Exact at the end: every item in the end state
 * upstream reaches (its own checks say which), the canary scaled to 6 and rolled to image 2.
 */
export const hostileScenario: ChaosScenario = {
  slug: 'hostile',
  title: () => `${HOSTILE_ITEMS.length} kinds of hostile object beside a Deployment that must keep converging`,
  controllers: [...new Set(['deployment', 'replicaset', ...HOSTILE_ITEMS.flatMap((i) => i.controllers)])],

  async prepare(ctx) {
    await post(ctx, `/apis/apps/v1/namespaces/${ctx.ns}/deployments`, {
      metadata: { name: CANARY },
      spec: { replicas: 3, selector: { matchLabels: { app: CANARY } }, template: { ...podTemplate({ app: CANARY }), spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: canaryImage(1) }] } } },
    });
    await waitFor('the canary rolled out', () => canaryAt(ctx, 3, 1), 120_000, 250);
    for (const item of HOSTILE_ITEMS) await item.prepare?.(ctx);
  },

  async act(ctx) {
    for (const item of HOSTILE_ITEMS) await item.act(ctx);
    await mergePatch(ctx.rest, canaryPath(ctx), { spec: { replicas: 6, template: { spec: { containers: [{ name: 'app', image: canaryImage(2) }] } } } });
  },

  async converged(ctx) {
    const left = await unsettled(ctx);
    // which entries the pass still waits for, each time that changes: where a slow pass spent its time
    const said = left.join(', ');
    if (lastUnsettled.get(ctx.ns) !== said) {
      lastUnsettled.set(ctx.ns, said);
      ctx.log(`${ctx.ns}: ${left.length ? `waiting for ${said}` : 'every entry settled'}`);
    }
    return left.length === 0;
  },

  async outcome(ctx) {
    const d = await get<Deployment>(ctx, canaryPath(ctx));
    const views: Record<string, unknown> = {};
    for (const item of HOSTILE_ITEMS) views[item.slug] = await item.view(ctx);
    return { canary: d && { replicas: d.status?.replicas, updated: d.status?.updatedReplicas, available: d.status?.availableReplicas, conditions: conditionsView(d.status?.conditions) }, ...views };
  },

  async violations(ctx, audit) {
    const out = (await unsettled(ctx)).map((slug) => `${slug} never reached its end state`);
    for (const item of HOSTILE_ITEMS) out.push(...(await item.violations?.(ctx, audit)) ?? []);
    return out;
  },

  async cleanup(ctx) {
    for (const item of HOSTILE_ITEMS) await item.cleanup?.(ctx).catch((e: unknown) => ctx.log(`cleanup of ${item.slug} failed: ${String(e)}`));
    // no job controller may be running now: its tracking finalizers are taken off by hand
    await releasePodFinalizers(ctx.rest, ctx.ns);
    await cleanNamespace(ctx.rest, ctx.ns);
  },
};
