import { probeSecurePort } from '../../starter/local/http-probe';
import { memoryMap } from '../lib/memory-map';
import { sumMetric } from '../lib/prom';
import { idleFigures, idleFleet } from '../scenarios/fleet';
import type { Sample, Scenario } from '../scenarios/types';
import { memoryPlan } from './plan';

const CONTROLLERS = ['replicaset', 'deployment'];
const MiB = (kib: number) => kib / 1024;

/**
 * One size, one manager (ours with the environment the runner gives it): the fleet of one-replica
 * Deployments is created and settles, then an idle window; at its end the manager's resident
 * memory is read from /proc/<pid>/smaps and split by what holds it (bench/lib/memory-map.ts), and
 * ours' main-thread V8 heap from its own /metrics (prom-client's nodejs_heap_size_*).
 */
export const memoryFleet: Scenario = {
  id: 104,
  slug: 'memory-map',
  title: 'Memory by what holds it',
  method: () => '',
  settings: () => ['lifted'],
  reps: () => 1,
  subjects: ['upstream', 'ours'],
  metrics: [],
  async run(ctx) {
    const plan = memoryPlan(ctx.mode);
    const { manager, idle } = await idleFleet(ctx, CONTROLLERS, ctx.size ?? plan.size, plan.settleS, plan.idleS);
    const map = memoryMap(manager.pid);
    const out: Sample = {
      ...idleFigures(idle),
      'map.totalMiB': MiB(map.totalKiB),
      'map.mallocMiB': MiB(map.mallocMainKiB + map.mallocArenasKiB),
      'map.arenas': map.arenas,
      'map.otherAnonMiB': MiB(map.otherAnonKiB + map.stackKiB),
      'map.fileMiB': MiB(map.fileKiB),
    };
    if (ctx.subject === 'ours') {
      const metrics = await probeSecurePort(manager.port, '/metrics');
      if (metrics.status === 200) {
        out['heap.mainUsedMiB'] = sumMetric(metrics.body, 'nodejs_heap_size_used_bytes') / 2 ** 20;
        out['heap.mainTotalMiB'] = sumMetric(metrics.body, 'nodejs_heap_size_total_bytes') / 2 ** 20;
        // as cachedRuns() reads it, from the same scrape
        out.cachedRuns = sumMetric(metrics.body, 'kcm_workflow_cache_runs');
      }
    }
    // upstream is Go: no glibc malloc to speak of
    ctx.log(`idle RSS ${idle.peakRssMiB.toFixed(0)} MiB${ctx.subject === 'ours' ? `; malloc ${out['map.mallocMiB'].toFixed(0)} MiB in ${map.arenas} thread arenas and the main one` : ''}`);
    return out;
  },
};
