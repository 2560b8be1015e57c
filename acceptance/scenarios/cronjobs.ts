import type { ChaosContext, ChaosMode, ChaosScenario } from '../../chaos/scenarios/types';

const MINUTE = 60_000;
/** scheduled times each CronJob goes through */
const ticks = (mode: ChaosMode) => (mode === 'full' ? 4 : 2);

interface CronJob { metadata: { name: string }; status?: { lastScheduleTime?: string; lastSuccessfulTime?: string; active?: unknown[] } }

/** per namespace: the first scheduled time after the CronJobs were made */
const firstTick = new Map<string, number>();

const cronJobsPath = (ctx: ChaosContext) => `/apis/batch/v1/namespaces/${ctx.ns}/cronjobs`;
const listCronJobs = async (ctx: ChaosContext) => (await ctx.rest.request<{ items: CronJob[] }>('GET', cronJobsPath(ctx))).body.items;
const lastTick = (ctx: ChaosContext) => firstTick.get(ctx.ns)! + (ticks(ctx.mode) - 1) * MINUTE;
/** the last time a CronJob started a run: Forbid's first run never ends, so it skips every later time (without recording it) */
const lastStarted = (ctx: ChaosContext, c: CronJob) => (c.metadata.name === 'forbid' ? firstTick.get(ctx.ns)! : lastTick(ctx));
const behind = async (ctx: ChaosContext) => (await listCronJobs(ctx)).filter((c) => Date.parse(c.status?.lastScheduleTime ?? '') !== lastStarted(ctx, c));

/** How a CronJob's runs end: kwok holds `run` pods running, finishes `succeed` pods after a second. */
function cronJob(name: string, spec: Record<string, unknown>, outcome: 'run' | 'succeed') {
  return {
    metadata: { name },
    spec: {
      schedule: '*/1 * * * *',
      ...spec,
      jobTemplate: { spec: { backoffLimit: 0, template: {
        metadata: { labels: { 'kwok.temporal-kcm.dev/outcome': outcome }, annotations: { 'kwok.temporal-kcm.dev/delay-ms': '1000' } },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'registry.invalid/cron:1' }] },
      } } },
    },
  };
}

/**
 * CronJobs over two scheduled times (four in full), on the wall clock: Forbid with a run that never
 * ends (the later times skipped, JobAlreadyActive), Replace (each run replaces the last), and Allow
 * with runs that succeed and a history limit of one (the older Job deleted, lastSuccessfulTime
 * recorded). The cronjob and job controllers decide every step; the garbage collector takes the
 * pods of the Jobs the history limit and Replace delete.
 */
export const cronJobsScenario: ChaosScenario = {
  slug: 'cronjobs',
  title: (mode) => `three CronJobs over ${ticks(mode)} scheduled times`,
  controllers: ['cronjob', 'job', 'garbagecollector'],

  async prepare() {
    // the CronJobs are the change
  },

  async act(ctx) {
    // every CronJob exists (and is watched) a few seconds before the first time it is due
    const now = Date.now();
    const next = Math.ceil(now / MINUTE) * MINUTE;
    firstTick.set(ctx.ns, next - now < 5_000 ? next + MINUTE : next);
    for (const body of [
      cronJob('forbid', { concurrencyPolicy: 'Forbid' }, 'run'),
      cronJob('replace', { concurrencyPolicy: 'Replace' }, 'run'),
      cronJob('history', { concurrencyPolicy: 'Allow', successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }, 'succeed'),
    ]) await ctx.rest.request('POST', cronJobsPath(ctx), { body });
  },

  async converged(ctx) {
    // 20 s past the last time: its run started, and the Allow one's finished and was recorded
    if (Date.now() < lastTick(ctx) + 20_000) return false;
    return (await behind(ctx)).length === 0;
  },

  async outcome(ctx) {
    return (await listCronJobs(ctx)).map((c) => ({ name: c.metadata.name, active: c.status?.active?.length ?? 0, succeeded: !!c.status?.lastSuccessfulTime }));
  },

  async violations(ctx) {
    return (await behind(ctx)).map((c) => `${c.metadata.name} last scheduled at ${c.status?.lastScheduleTime}, not ${new Date(lastStarted(ctx, c)).toISOString()}`);
  },

  async cleanup(ctx) {
    firstTick.delete(ctx.ns);
    // suspended first: no run may start while the rest goes
    for (const c of await listCronJobs(ctx)) {
      await ctx.rest.request('PATCH', `${cronJobsPath(ctx)}/${c.metadata.name}`, { body: { spec: { suspend: true } }, contentType: 'application/merge-patch+json' });
    }
  },
};
