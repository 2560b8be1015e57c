import type { ControllerDescriptor } from './descriptor';

/*
 * How many of a controller's runs its worker keeps in the workflow cache between their tasks.
 *
 * A cached run costs about 0.3 MiB of the process's memory whatever it holds (docs/BENCHMARKS.md,
 * "Memory"); a run not cached is rebuilt at its next task by replaying its history, which idle
 * runs keep short (--max-idle-history-events), at half a millisecond to 1.6 ms an event by the
 * machine. So a controller whose runs wake only on watch events keeps its hot set, the runs woken lately, and
 * evicts the rest: at 1000 Deployments a cap of 100 per controller held 0.58x the idle memory
 * and spent 0.55x the idle CPU of every run cached, the constant costs of a large cluster, for a
 * restart catch-up 1.4x as long (every run wakes then, and most are replayed first) and about 30
 * ms more on a reaction that wakes an evicted run. A controller whose every run wakes on a period
 * of its own (an HPA's sync period, a claim's binder resync, a quota's full recount, a CronJob's
 * schedule) would replay each evicted run at every period, so it keeps the SDK's default, which
 * bounds it only by the heap.
 */

/** --max-cached-workflows' default for a controller whose runs wake on watch events only. */
export const EVENT_DRIVEN_CACHED_RUNS = 100;

/** The cache size for the controller's worker: the flag when given, else by how its runs wake (undefined: the SDK's default). */
export function cachedRunsFor(d: Pick<ControllerDescriptor, 'periodicRuns'>, flag: number | undefined): number | undefined {
  if (flag !== undefined) return flag;
  return d.periodicRuns ? undefined : EVENT_DRIVEN_CACHED_RUNS;
}
