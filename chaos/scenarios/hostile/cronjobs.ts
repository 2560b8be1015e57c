import { mergePatch } from '../../../bench/lib/workloads';
import { exactly } from '../../checks';
import type { ChaosContext } from '../types';
import { eventReasons, get, list, post, type HostileItem, type Meta } from './item';

/**
 * Two CronJobs a scheduler can trip on:
 * - `0 0 30 2 *` (the 30th of February) parses but never fires: upstream finds no next time, says
 *   so in an InvalidSchedule Warning, and never makes a Job;
 * - `* * * * *` whose last schedule time is set 200 minutes back while it is suspended, then
 *   resumed: upstream counts more than 100 missed starts, says TooManyMissedTimes, and starts only
 *   the most recent one (concurrencyPolicy Forbid and pods that never end keep it at one Job).
 */
const NEVER = 'cron-never';
const MISSED = 'cron-missed';
const MISSED_MINUTES = 200;

interface CronJob { metadata: Meta; status?: { active?: unknown[]; lastScheduleTime?: string } }
interface Job { metadata: Meta }
const cronPath = (ctx: ChaosContext) => `/apis/batch/v1/namespaces/${ctx.ns}/cronjobs`;
const jobsOf = async (ctx: ChaosContext, cron: string) =>
  (await list<Job>(ctx, `/apis/batch/v1/namespaces/${ctx.ns}/jobs`)).filter((j) => (j.metadata.ownerReferences ?? []).some((r) => r.kind === 'CronJob' && r.name === cron));

const cronJob = (name: string, schedule: string, suspend: boolean) => ({
  metadata: { name },
  spec: {
    schedule, suspend, concurrencyPolicy: 'Forbid',
    jobTemplate: { spec: { template: { metadata: { labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'registry.invalid/cron:1' }] } } } },
  },
});

export const unreachableSchedules: HostileItem = {
  slug: 'unreachable-schedules',
  what: `a CronJob whose schedule never fires; one every minute with ${MISSED_MINUTES} missed starts`,
  controllers: ['cronjob', 'job'],

  async prepare(ctx) {
    await post(ctx, cronPath(ctx), cronJob(MISSED, '* * * * *', true));
    const back = new Date(Date.now() - MISSED_MINUTES * 60_000);
    back.setUTCSeconds(0, 0);
    await ctx.rest.request('PATCH', `${cronPath(ctx)}/${MISSED}/status`, {
      body: { status: { lastScheduleTime: back.toISOString().replace('.000Z', 'Z') } }, contentType: 'application/merge-patch+json',
    });
  },

  async act(ctx) {
    await post(ctx, cronPath(ctx), cronJob(NEVER, '0 0 30 2 *', false));
    await mergePatch(ctx.rest, `${cronPath(ctx)}/${MISSED}`, { spec: { suspend: false } });
  },

  async settled(ctx) {
    const missed = await get<CronJob>(ctx, `${cronPath(ctx)}/${MISSED}`);
    return (missed?.status?.active?.length ?? 0) === 1 && (await jobsOf(ctx, MISSED)).length === 1
      && (await eventReasons(ctx, ctx.ns, 'CronJob', NEVER, 'Warning')).length > 0;
  },

  async view(ctx) {
    const view = async (name: string) => {
      const c = await get<CronJob>(ctx, `${cronPath(ctx)}/${name}`);
      const reasons = await eventReasons(ctx, ctx.ns, 'CronJob', name);
      return {
        jobs: (await jobsOf(ctx, name)).length, active: c?.status?.active?.length ?? 0, scheduledOnce: c?.status?.lastScheduleTime !== undefined,
        // Normal events after the first Job (JobAlreadyActive each minute) depend on how long the run lasts
        warnings: reasons.filter((r) => r.startsWith('Warning ')), created: reasons.includes('Normal SuccessfulCreate'),
      };
    };
    return { never: await view(NEVER), missed: await view(MISSED) };
  },

  async violations(ctx) {
    return [...exactly(`Jobs of ${NEVER}`, 0, (await jobsOf(ctx, NEVER)).length), ...exactly(`Jobs of ${MISSED}`, 1, (await jobsOf(ctx, MISSED)).length)];
  },

  async cleanup(ctx) {
    await ctx.rest.request('DELETE', cronPath(ctx)).catch(() => undefined);
    await ctx.rest.request('DELETE', `/apis/batch/v1/namespaces/${ctx.ns}/jobs`, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  },
};
