import { duplicates } from '../../checks';
import type { ChaosContext } from '../types';
import { conditionsView, get, hasCondition, list, post, podTemplate, type Condition, type HostileItem, type Meta } from './item';

/**
 * An Indexed Job of 10,000 completions with a backoff limit per index, whose pods all fail:
 * every failed index is failed for good at once, and past maxFailedIndexes the whole Job fails
 * (upstream: Failed, MaxFailedIndexesExceeded). The index space is what is hostile: a controller
 * that keeps or writes per-index state for all 10,000 at each sync would be slow or too big.
 */
const NAME = 'ten-thousand-indexes';
const COMPLETIONS = 10_000;
const PARALLELISM = 10;
const MAX_FAILED = 5;
const TRACKING = 'batch.kubernetes.io/job-tracking';
const INDEX = 'batch.kubernetes.io/job-completion-index';

interface Job {
  metadata: Meta;
  status?: { active?: number; ready?: number; terminating?: number; succeeded?: number; failed?: number; failedIndexes?: string; completedIndexes?: string; conditions?: Condition[] };
}
const jobPath = (ctx: ChaosContext) => `/apis/batch/v1/namespaces/${ctx.ns}/jobs/${NAME}`;
const podsOf = (ctx: ChaosContext) => list<{ metadata: Meta }>(ctx, `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=${encodeURIComponent(`batch.kubernetes.io/job-name=${NAME}`)}`);

/** The indexes a range list such as `0-3,7` names. */
export function indexesOf(ranges: string | undefined): number[] {
  if (!ranges) return [];
  return ranges.split(',').flatMap((r) => {
    const [a, b] = r.split('-').map(Number);
    return Array.from({ length: (b ?? a) - a + 1 }, (_, i) => a + i);
  });
}

export const tenThousandIndexes: HostileItem = {
  slug: 'ten-thousand-indexes',
  what: `an Indexed Job of ${COMPLETIONS} completions, backoffLimitPerIndex 0, maxFailedIndexes ${MAX_FAILED}, every pod failing`,
  controllers: ['job'],

  async act(ctx) {
    await post(ctx, `/apis/batch/v1/namespaces/${ctx.ns}/jobs`, {
      metadata: { name: NAME },
      spec: {
        completionMode: 'Indexed', completions: COMPLETIONS, parallelism: PARALLELISM, backoffLimitPerIndex: 0, maxFailedIndexes: MAX_FAILED,
        template: podTemplate({ 'kwok.temporal-kcm.dev/outcome': 'fail' }, { restartPolicy: 'Never', annotations: { 'kwok.temporal-kcm.dev/delay-ms': '2000' } }),
      },
    });
  },

  async settled(ctx) {
    const j = await get<Job>(ctx, jobPath(ctx));
    if (!j || !hasCondition(j.status?.conditions, 'Failed') || (j.status?.active ?? 0) !== 0) return false;
    return (await podsOf(ctx)).every((p) => !(p.metadata.finalizers ?? []).includes(TRACKING));
  },

  async view(ctx) {
    const j = await get<Job>(ctx, jobPath(ctx));
    const s = j?.status ?? {};
    // how many pods had failed when the Job was found over its limit depends on timing, not on the controller
    return { conditions: conditionsView(s.conditions), active: s.active, ready: s.ready, terminating: s.terminating, succeeded: s.succeeded ?? 0, completedIndexes: s.completedIndexes ?? '' };
  },

  async violations(ctx) {
    const j = await get<Job>(ctx, jobPath(ctx));
    const failed = indexesOf(j?.status?.failedIndexes);
    const out: string[] = [];
    if (failed.length <= MAX_FAILED) out.push(`${NAME}: ${failed.length} failed indexes, but the Job failed for more than ${MAX_FAILED}`);
    if (failed.some((i) => i >= COMPLETIONS)) out.push(`${NAME}: failed indexes out of range: ${j?.status?.failedIndexes}`);
    // backoffLimitPerIndex 0: one pod per index, ever
    for (const [ix, n] of duplicates((await podsOf(ctx)).map((p) => p.metadata.annotations?.[INDEX] ?? '?'))) out.push(`${NAME}: index ${ix} has ${n} pods`);
    return out;
  },
};
