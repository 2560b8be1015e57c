import type { KubeObject } from '../../activities/kube/projections';
import { cleanNamespace, releasePodFinalizers } from '../../bench/lib/stack';
import { duplicates, exactly, podsMade } from '../checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

/**
 * Pods run `podMs` before they succeed, at most `parallelism` of a Job at a time: the Jobs take
 * about as long as the storm (five waves of 15 s in full), so kills land while pods are created,
 * finish and are counted.
 */
const plan = (mode: ChaosMode) => (mode === 'full' ? { jobs: 50, completions: 10, parallelism: 2, podMs: 15_000 } : { jobs: 10, completions: 5, parallelism: 2, podMs: 8_000 });
const TRACKING = 'batch.kubernetes.io/job-tracking';
const INDEX = 'batch.kubernetes.io/job-completion-index';

interface Condition { type: string; status: string; reason?: string }
interface Job {
  metadata: { name: string; uid: string };
  spec: { completionMode?: string };
  status?: {
    active?: number; ready?: number; succeeded?: number; failed?: number; terminating?: number; completedIndexes?: string;
    conditions?: Condition[]; uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
  };
}
type Pod = KubeObject & { status?: { phase?: string } };

const jobsPath = (ctx: ChaosContext) => `/apis/batch/v1/namespaces/${ctx.ns}/jobs`;
const listJobs = async (ctx: ChaosContext) => (await ctx.rest.request<{ items: Job[] }>('GET', jobsPath(ctx))).body.items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
const listPods = async (ctx: ChaosContext) => (await ctx.rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ctx.ns}/pods`)).body.items;
const jobUidOf = (p: Pod) => p.metadata?.labels?.['batch.kubernetes.io/controller-uid'];
const complete = (j: Job) => (j.status?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True');

/**
 * 50 Jobs of 10 completions (10 of 5 quick), every other one Indexed, whose pods kwok runs to
 * success after 15 s (8 s quick). Exact at the end: each Job Complete with succeeded equal to its completions
 * and nothing failed; exactly that many pods created for it, every one released from the tracking
 * finalizer; an Indexed Job's indexes each succeeded by exactly one pod.
 */
export const jobsScenario: ChaosScenario = {
  slug: 'jobs',
  title: (mode) => { const p = plan(mode); return `${p.jobs} Jobs of ${p.completions} completions`; },
  controllers: ['job'],

  async prepare() {
    // nothing before the faults: the Jobs are the change
  },

  async act(ctx) {
    const p = plan(ctx.mode);
    for (let i = 0; i < p.jobs; i++) {
      await ctx.rest.request('POST', jobsPath(ctx), {
        body: {
          metadata: { name: `job-${String(i).padStart(3, '0')}` },
          spec: {
            completions: p.completions, parallelism: p.parallelism, backoffLimit: 6,
            ...(i % 2 ? { completionMode: 'Indexed' } : {}),
            template: {
              metadata: { labels: { 'kwok.temporal-kcm.dev/outcome': 'succeed' }, annotations: { 'kwok.temporal-kcm.dev/delay-ms': String(p.podMs) } },
              spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'registry.invalid/job:1' }] },
            },
          },
        },
      });
    }
  },

  async converged(ctx) {
    const jobs = await listJobs(ctx);
    if (jobs.length !== plan(ctx.mode).jobs || !jobs.every(complete)) return false;
    return (await listPods(ctx)).every((p) => !(p.metadata?.finalizers ?? []).includes(TRACKING));
  },

  async outcome(ctx) {
    const jobs = await listJobs(ctx);
    const pods = await listPods(ctx);
    return jobs.map((j) => ({
      name: j.metadata.name,
      completionMode: j.spec.completionMode,
      succeeded: j.status?.succeeded, failed: j.status?.failed, active: j.status?.active, ready: j.status?.ready, terminating: j.status?.terminating,
      completedIndexes: j.status?.completedIndexes,
      uncounted: j.status?.uncountedTerminatedPods,
      conditions: (j.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })).sort((a, b) => a.type.localeCompare(b.type)),
      succeededPods: pods.filter((p) => jobUidOf(p) === j.metadata.uid && p.status?.phase === 'Succeeded').length,
    }));
  },

  async violations(ctx, audit) {
    const p = plan(ctx.mode);
    const jobs = await listJobs(ctx);
    const pods = await listPods(ctx);
    const out = [
      ...exactly('Jobs', p.jobs, jobs.length),
      ...exactly('pods made', p.jobs * p.completions, podsMade(audit, ctx.ns).size),
      ...exactly('pods still holding the tracking finalizer', 0, pods.filter((x) => (x.metadata?.finalizers ?? []).includes(TRACKING)).length),
      ...exactly('pods without a controller (orphans)', 0, pods.filter((x) => !(x.metadata?.ownerReferences ?? []).some((r) => r.controller)).length),
    ];
    for (const j of jobs) {
      const mine = pods.filter((x) => jobUidOf(x) === j.metadata.uid);
      const succeeded = mine.filter((x) => x.status?.phase === 'Succeeded');
      out.push(...exactly(`${j.metadata.name} status.succeeded`, p.completions, j.status?.succeeded ?? 0));
      out.push(...exactly(`${j.metadata.name} pods`, p.completions, mine.length));
      if (!complete(j)) out.push(`${j.metadata.name} is not Complete`);
      if (j.spec.completionMode === 'Indexed') {
        for (const [ix, n] of duplicates(succeeded.map((x) => x.metadata?.annotations?.[INDEX] ?? '?'))) out.push(`${j.metadata.name} index ${ix} succeeded by ${n} pods`);
      }
    }
    return out;
  },

  /**
   * At every moment: no Job runs more pods than its parallelism, and no index of an Indexed Job
   * runs in two pods at once (a pod counts while it is neither finished nor being deleted).
   */
  async during(ctx) {
    const p = plan(ctx.mode);
    const [jobs, pods] = await Promise.all([listJobs(ctx), listPods(ctx)]);
    const running = pods.filter((x) => !x.metadata?.deletionTimestamp && x.status?.phase !== 'Succeeded' && x.status?.phase !== 'Failed');
    const out: string[] = [];
    for (const j of jobs) {
      const mine = running.filter((x) => jobUidOf(x) === j.metadata.uid);
      if (mine.length > p.parallelism) out.push(`${j.metadata.name} ran ${mine.length} pods at once, above its parallelism ${p.parallelism}`);
      if (j.spec.completionMode === 'Indexed') {
        for (const [ix, n] of duplicates(mine.map((x) => x.metadata?.annotations?.[INDEX] ?? '?'))) out.push(`${j.metadata.name} index ${ix} running in ${n} pods at once`);
      }
    }
    return out;
  },

  async cleanup(ctx) {
    await ctx.rest.request('DELETE', jobsPath(ctx), { body: { propagationPolicy: 'Orphan' } }).catch(() => undefined);
    // no job controller may be running now: the tracking finalizers are taken off by hand
    await releasePodFinalizers(ctx.rest, ctx.ns);
    await cleanNamespace(ctx.rest, ctx.ns);
  },
};
