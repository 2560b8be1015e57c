import type { KubeObject } from '../../activities/kube/projections';
import { ApiError } from '../../activities/kube/rest';
import { cleanNamespace } from '../../bench/lib/stack';
import { waitFor } from '../../bench/lib/util';
import { createDeployment, deploymentComplete, type WorkloadStatus } from '../../bench/lib/workloads';
import { exactly } from '../checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

const NAME = 'drain';
const size = (mode: ChaosMode) => (mode === 'full' ? 100 : 20);
/** the budget: all but this many pods must stay healthy */
const SPARE = (mode: ChaosMode) => (mode === 'full' ? 5 : 2);
/** the drainer's pace: a round of evictions this often, whatever the last answers */
const EVICT_EVERY_MS = 100;
/** how long the drainer goes on: long enough for the faults to meet it (a pair of pods is replaced in under a second) */
const DRAIN_MS = (mode: ChaosMode) => (mode === 'full' ? 120_000 : 40_000);

type Pod = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };
interface PdbStatus {
  observedGeneration?: number; currentHealthy?: number; desiredHealthy?: number; disruptionsAllowed?: number; expectedPods?: number;
  conditions?: Array<{ type: string; status: string; reason?: string }>;
}
type Pdb = KubeObject & { metadata: { generation?: number }; status?: PdbStatus };

/** The eviction loop of one pass: in rounds, the oldest pods there (twice what the budget spares), through the API. */
interface Drainer { evicted: Set<string>; refused: number; finished: boolean; stop: AbortController; done: Promise<void> }
const drainers = new Map<string, Drainer>();

const pods = async (ctx: ChaosContext) =>
  (await ctx.rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`)).body.items;
/** healthy as the disruption controller counts it: Ready, and not being deleted */
const healthy = (p: Pod) => !p.metadata?.deletionTimestamp && !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const getPdb = async (ctx: ChaosContext) =>
  (await ctx.rest.request<Pdb>('GET', `/apis/policy/v1/namespaces/${ctx.ns}/poddisruptionbudgets/${NAME}`)).body;
const getDeployment = async (ctx: ChaosContext) =>
  (await ctx.rest.request<WorkloadStatus>('GET', `/apis/apps/v1/namespaces/${ctx.ns}/deployments/${NAME}`)).body;

/** The budget's status as the controller should leave it with every pod healthy. */
function settledBudget(pdb: Pdb, replicas: number, spare: number): boolean {
  const s = pdb.status ?? {};
  return s.observedGeneration === pdb.metadata.generation && s.currentHealthy === replicas && s.expectedPods === replicas &&
    s.desiredHealthy === replicas - spare && s.disruptionsAllowed === spare;
}

/** One eviction, counted as done or as refused by the budget. */
async function evict(ctx: ChaosContext, d: Drainer, name: string): Promise<void> {
  try {
    await ctx.rest.request('POST', `/api/v1/namespaces/${ctx.ns}/pods/${name}/eviction`, {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ctx.ns }, deleteOptions: { gracePeriodSeconds: 0 } },
    });
    d.evicted.add(name);
  } catch (e) {
    // 429: the budget allows no disruption now
    if (e instanceof ApiError && e.status === 429) d.refused++;
    else if (!(e instanceof ApiError && e.status === 404)) ctx.log(`drain: eviction of ${name}: ${String(e)}`);
  }
}

async function drain(ctx: ChaosContext, d: Drainer): Promise<void> {
  const until = Date.now() + DRAIN_MS(ctx.mode);
  while (!d.stop.signal.aborted && Date.now() < until) {
    // the oldest pods not yet being deleted, the ones a rolling drain reaches first: more at once
    // than the budget spares, so that it is the budget that holds them back
    const oldest = (await pods(ctx).catch(() => [])).filter((p) => !p.metadata?.deletionTimestamp && !d.evicted.has(p.metadata?.name ?? ''))
      .sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
      .slice(0, 2 * SPARE(ctx.mode));
    await Promise.all(oldest.map((p) => evict(ctx, d, p.metadata!.name!)));
    await new Promise((r) => setTimeout(r, EVICT_EVERY_MS));
  }
  d.finished = true;
}

/**
 * A node drain's evictions against a PodDisruptionBudget: a Deployment of 100 replicas (20 quick)
 * whose budget keeps all but 5 (2 quick) healthy, and from the change on, for 120 s (40 s quick),
 * a drainer that asks the eviction API, ten times a second, to evict the oldest pods, twice as
 * many at once as the budget spares.
 * The API server admits an eviction only while the budget's status (which the disruption
 * controller writes) allows a disruption, so a status that runs ahead of the pods lets the drainer
 * take more pods down than the budget allows: at every moment at least replicas - spare pods must
 * be healthy. At the end the Deployment is complete and the budget's status settled. How many
 * pods were evicted depends on how fast the controllers answer, so it is in the log, not the outcome.
 */
export const drainScenario: ChaosScenario = {
  slug: 'drain',
  title: (mode) => `a drain of ${size(mode)} pods under a PodDisruptionBudget`,
  controllers: ['deployment', 'replicaset', 'disruption'],

  async prepare(ctx) {
    const replicas = size(ctx.mode);
    await createDeployment(ctx.rest, ctx.ns, NAME, replicas);
    await ctx.rest.request('POST', `/apis/policy/v1/namespaces/${ctx.ns}/poddisruptionbudgets`, {
      body: { metadata: { name: NAME }, spec: { minAvailable: replicas - SPARE(ctx.mode), selector: { matchLabels: { app: NAME } } } },
    });
    await waitFor(`${NAME} rolled out, its budget settled`, async () =>
      deploymentComplete(await getDeployment(ctx)) && settledBudget(await getPdb(ctx), replicas, SPARE(ctx.mode)), 600_000, 500);
  },

  async act(ctx) {
    const d: Drainer = { evicted: new Set(), refused: 0, finished: false, stop: new AbortController(), done: Promise.resolve() };
    d.done = drain(ctx, d).then(() => ctx.log(`drain: ${d.evicted.size} pods evicted, ${d.refused} evictions refused by the budget`));
    drainers.set(ctx.ns, d);
  },

  async converged(ctx) {
    const d = drainers.get(ctx.ns);
    if (!d?.finished) return false;
    return deploymentComplete(await getDeployment(ctx)) && settledBudget(await getPdb(ctx), size(ctx.mode), SPARE(ctx.mode));
  },

  async outcome(ctx) {
    const s = (await getPdb(ctx)).status ?? {};
    const dep = (await getDeployment(ctx)).status ?? {};
    return {
      budget: {
        currentHealthy: s.currentHealthy, desiredHealthy: s.desiredHealthy, disruptionsAllowed: s.disruptionsAllowed, expectedPods: s.expectedPods,
        conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })),
      },
      deployment: { replicas: dep.replicas, availableReplicas: dep.availableReplicas },
    };
  },

  async violations(ctx) {
    const d = drainers.get(ctx.ns);
    const now = await pods(ctx);
    return [
      // a drain that evicted nothing tested nothing
      ...((d?.evicted.size ?? 0) < size(ctx.mode) ? [`only ${d?.evicted.size ?? 0} pods evicted, fewer than the ${size(ctx.mode)} replicas`] : []),
      ...(d?.refused ? [] : ['the budget refused no eviction: the drain never met it']),
      ...exactly('live pods', size(ctx.mode), now.filter((p) => !p.metadata?.deletionTimestamp).length),
    ];
  },

  /** The budget as a user reads it: never fewer healthy pods than minAvailable. */
  async during(ctx) {
    const floor = size(ctx.mode) - SPARE(ctx.mode);
    const n = (await pods(ctx)).filter(healthy).length;
    return n < floor ? [`${n} pods healthy, below the budget's minAvailable (${floor})`] : [];
  },

  async cleanup(ctx) {
    const d = drainers.get(ctx.ns);
    d?.stop.abort();
    await d?.done;
    drainers.delete(ctx.ns);
    await cleanNamespace(ctx.rest, ctx.ns);
  },
};
