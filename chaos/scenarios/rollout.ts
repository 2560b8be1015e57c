import type { KubeObject } from '../../activities/kube/projections';
import { cleanNamespace } from '../../bench/lib/stack';
import { waitFor } from '../../bench/lib/util';
import { deploymentComplete, mergePatch, type WorkloadStatus } from '../../bench/lib/workloads';
import { exactly, podsDeleted, podsMade, successfulWrites } from '../checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

const NAME = 'storm';
const size = (mode: ChaosMode) => (mode === 'full' ? 1000 : 100);
/**
 * Each wave of the rollout waits this long before its pods count as available, so the rollout
 * lasts about as long as the storm (a 1000-pod rollout on kwok is otherwise over in seconds, before
 * the first kill) and the deployment controller's own timers are among what the kills hit.
 */
const minReadySeconds = (mode: ChaosMode) => (mode === 'full' ? 20 : 8);
const image = (n: number) => `registry.invalid/storm:${n}`;
/** maxSurge, 25% (rounded up, as upstream rounds a surge percentage) */
const SURGE = 0.25;
/** maxUnavailable, 25% (rounded down, as upstream rounds an unavailability percentage) */
const UNAVAILABLE = 0.25;

interface Condition { type: string; status: string; reason?: string }
type Deployment = WorkloadStatus & { status?: WorkloadStatus['status'] & { conditions?: Condition[] } };
type ReplicaSet = WorkloadStatus & { metadata: WorkloadStatus['metadata'] & { annotations?: Record<string, string>; ownerReferences?: Array<{ uid: string; controller?: boolean }> } };
type Pod = KubeObject & { spec?: { containers?: Array<{ image?: string }> } };

const dPath = (ctx: ChaosContext) => `/apis/apps/v1/namespaces/${ctx.ns}/deployments/${NAME}`;
const getDeployment = async (ctx: ChaosContext) => (await ctx.rest.request<Deployment>('GET', dPath(ctx))).body;
const replicaSets = async (ctx: ChaosContext) =>
  (await ctx.rest.request<{ items: ReplicaSet[] }>('GET', `/apis/apps/v1/namespaces/${ctx.ns}/replicasets`)).body.items;
/** the pods a user counts: not being deleted */
const livePods = async (ctx: ChaosContext) =>
  (await ctx.rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`)).body.items.filter((p) => !p.metadata?.deletionTimestamp);
const podImage = (p: Pod) => p.spec?.containers?.[0]?.image;
/** when the pod last became Ready, if it is */
const readySince = (p: Pod): number | undefined => {
  const ready = (p.status as { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> } | undefined)?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : undefined;
};

/** The Deployment complete at image `n`: every replica updated, available and running that image. */
async function rolledOut(ctx: ChaosContext, n: number): Promise<boolean> {
  const d = await getDeployment(ctx);
  if (!deploymentComplete(d)) return false;
  const pods = await livePods(ctx);
  return pods.length === d.spec.replicas && pods.every((p) => podImage(p) === image(n));
}

/**
 * A rollout of a 1000-replica Deployment (100 quick; minReadySeconds 20, quick 8) from image 1 to
 * image 2, the faults hitting it from the template change on. Exact at the end: one ReplicaSet at 1000 and one at 0, 1000
 * live pods of image 2; one pod made and one pod deleted per replica in the audit log (a duplicate
 * create would show as a surplus pod made and deleted), and no pod or ReplicaSet without its
 * controller.
 */
export const rolloutScenario: ChaosScenario = {
  slug: 'rollout',
  title: (mode) => `a ${size(mode)}-pod rollout`,
  controllers: ['deployment', 'replicaset'],

  async prepare(ctx) {
    const replicas = size(ctx.mode);
    await ctx.rest.request('POST', `/apis/apps/v1/namespaces/${ctx.ns}/deployments`, {
      body: {
        metadata: { name: NAME },
        spec: {
          replicas,
          minReadySeconds: minReadySeconds(ctx.mode),
          selector: { matchLabels: { app: NAME } },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: `${SURGE * 100}%`, maxUnavailable: `${UNAVAILABLE * 100}%` } },
          template: { metadata: { labels: { app: NAME } }, spec: { containers: [{ name: 'app', image: image(1) }], terminationGracePeriodSeconds: 0 } },
        },
      },
    });
    await waitFor(`${NAME} at image 1`, async () => rolledOut(ctx, 1), 600_000, 500);
  },

  async act(ctx) {
    await mergePatch(ctx.rest, dPath(ctx), { spec: { template: { spec: { containers: [{ name: 'app', image: image(2) }] } } } });
  },

  converged: (ctx) => rolledOut(ctx, 2),

  async outcome(ctx) {
    const d = await getDeployment(ctx);
    const s = d.status ?? {};
    const rss = (await replicaSets(ctx)).sort((a, b) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0));
    const pods = await livePods(ctx);
    return {
      deployment: {
        observedCurrent: s.observedGeneration === d.metadata.generation,
        replicas: s.replicas, updatedReplicas: s.updatedReplicas, readyReplicas: s.readyReplicas, availableReplicas: s.availableReplicas,
        unavailableReplicas: s.unavailableReplicas,
        conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })).sort((a, b) => a.type.localeCompare(b.type)),
      },
      replicaSets: rss.map((rs) => ({
        revision: rs.metadata.annotations?.['deployment.kubernetes.io/revision'],
        replicas: rs.spec.replicas, statusReplicas: rs.status?.replicas, ready: rs.status?.readyReplicas, available: rs.status?.availableReplicas,
      })),
      pods: { live: pods.length, images: [...new Set(pods.map(podImage))].sort() },
    };
  },

  async violations(ctx, audit) {
    const replicas = size(ctx.mode);
    const d = await getDeployment(ctx);
    const rss = await replicaSets(ctx);
    const pods = await livePods(ctx);
    const owned = (o: { metadata?: { ownerReferences?: Array<{ controller?: boolean }> } }) => (o.metadata?.ownerReferences ?? []).some((r) => r.controller);
    return [
      ...exactly('ReplicaSets of the Deployment', 2, rss.filter((rs) => rs.metadata.ownerReferences?.some((r) => r.uid === d.metadata.uid)).length),
      ...exactly('live pods', replicas, pods.length),
      ...exactly('pods made since the change', replicas, podsMade(audit, ctx.ns).size),
      ...exactly('pods deleted by the controllers since the change', replicas, podsDeleted(audit, ctx.ns).size),
      ...exactly('successful ReplicaSet creates since the change', 1, successfulWrites(audit, { ns: ctx.ns, resource: 'replicasets', verb: 'create' }).length),
      ...exactly('pods without a controller (orphans)', 0, pods.filter((p) => !owned(p)).length),
      ...exactly('ReplicaSets without a controller (orphans)', 0, rss.filter((rs) => !owned(rs)).length),
    ];
  },

  /**
   * The surge bound, as the deployment controller keeps it: the ReplicaSets' spec.replicas summed
   * never pass replicas + maxSurge (upstream's NewRSNewReplicas counts the same sum). It is what the
   * controller writes itself, so it holds at every moment, not only once pods catch up. And the
   * availability bound, from the pods.
   */
  async during(ctx) {
    const d = await getDeployment(ctx);
    const sum = (await replicaSets(ctx)).filter((rs) => rs.metadata.ownerReferences?.some((r) => r.uid === d.metadata.uid))
      .reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
    const bound = d.spec.replicas + Math.ceil(d.spec.replicas * SURGE);
    const out = sum > bound ? [`the ReplicaSets' replicas summed to ${sum}, above replicas + maxSurge (${bound})`] : [];
    // The availability bound as a user sees it: pods ready for minReadySeconds, not being deleted,
    // never fewer than replicas - maxUnavailable. The controller scales old ReplicaSets down from
    // its ReplicaSets' reported availability; a count that runs ahead of the pods (a ReplicaSet
    // status calling a pod available too soon) shows here.
    const now = Date.now();
    const available = (await livePods(ctx)).filter((p) => {
      const since = readySince(p);
      return since !== undefined && since + minReadySeconds(ctx.mode) * 1000 <= now;
    }).length;
    const floor = d.spec.replicas - Math.floor(d.spec.replicas * UNAVAILABLE);
    if (available < floor) out.push(`${available} pods available, below replicas - maxUnavailable (${floor})`);
    return out;
  },

  cleanup: (ctx) => cleanNamespace(ctx.rest, ctx.ns),
};
