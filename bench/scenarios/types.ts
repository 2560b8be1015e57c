import type { Client } from '@temporalio/client';
import { Impl, ManagedProcess, ManagerOptions, Setting } from '../lib/managers';
import { ResourceUse } from '../lib/measure';
import { BenchStack } from '../lib/stack';
import { Log } from '../lib/util';

export type Mode = 'full' | 'quick' | 'smoke';

/** Who a sample is of: one of the two managers, or (scenario 7) the plain client alone. */
export type Subject = Impl | 'client';

export interface ScenarioContext {
  stack: BenchStack;
  subject: Subject;
  setting: Setting;
  mode: Mode;
  rep: number;
  /** a fresh namespace, emptied by the runner afterwards */
  ns: string;
  temporal: Client;
  log: Log;
  /** starts a manager of this context's subject and setting; the runner stops whatever is left running */
  startManager(o: Pick<ManagerOptions, 'controllers'> & Partial<Pick<ManagerOptions, 'taskQueue' | 'leaderElect' | 'cpuProfileName'>>, index?: number): Promise<ManagedProcess>;
  /** the task queue ours uses in this run (fresh per scenario run) */
  taskQueue: string;
  /** the scale curve's size for this run (its unit is the scenario's own); absent: the mode's size */
  size?: number;
  /** the scale curve: ours catches up again with each of these replica counts after the first */
  replicaRounds?: number[];
  /** opens a resource window over the given managers (and, for ours, Temporal) */
  openWindow(managers: () => ManagedProcess[]): Promise<{ close(): Promise<ResourceUse> }>;
}

/** One repetition's numbers, by metric key. */
export type Sample = Record<string, number>;

export interface MetricDef {
  key: string;
  label: string;
  unit: 'ms' | 's' | 'MiB' | 'count' | '/min';
  /** which subjects report it (default: all) */
  only?: Subject;
  /** a reference figure, not a cost of either manager: no ratio */
  noRatio?: boolean;
}

export interface Scenario {
  id: number;
  slug: string;
  title: string;
  /** one paragraph for the docs: what is measured and how, at this mode's sizes */
  method(mode: Mode): string;
  /** settings to run at in each mode */
  settings(mode: Mode): Array<Setting['name']>;
  /** repetitions when --reps is not given */
  reps(mode: Mode): number;
  subjects: Subject[];
  metrics: MetricDef[];
  run(ctx: ScenarioContext): Promise<Sample>;
}

/** The resource figures every scenario with a manager reports, from its measured window. */
export const RESOURCE_METRICS: MetricDef[] = [
  { key: 'cpuSeconds', label: 'manager CPU', unit: 's' },
  { key: 'peakRssMiB', label: 'manager peak RSS', unit: 'MiB' },
  { key: 'apiRequests', label: 'API requests (all clients, in the window)', unit: 'count' },
  { key: 'temporalCpuSeconds', label: 'Temporal server CPU', unit: 's', only: 'ours' },
  { key: 'historyEvents', label: 'Temporal history events', unit: 'count', only: 'ours' },
  { key: 'signalsSent', label: 'signals sent to workflows', unit: 'count', only: 'ours' },
  { key: 'eventsHeld', label: 'watch events held by a signal gate', unit: 'count', only: 'ours' },
  { key: 'holdsExpired', label: 'objects whose held events went out when their hold ran out (the gate asked again)', unit: 'count', only: 'ours' },
  { key: 'reconciles', label: 'reconciles', unit: 'count', only: 'ours' },
  { key: 'ourApiCalls', label: 'API calls by temporal-kcm (its own counter)', unit: 'count', only: 'ours' },
  { key: 'ourApiReads', label: '... of which reads (GET, LIST, WATCH)', unit: 'count', only: 'ours' },
];

export function resourceSample(u: ResourceUse): Sample {
  const s: Sample = { cpuSeconds: u.cpuSeconds, peakRssMiB: u.peakRssMiB, apiRequests: u.apiRequests };
  if (u.temporalCpuSeconds !== undefined) s.temporalCpuSeconds = u.temporalCpuSeconds;
  if (u.historyEvents !== undefined) s.historyEvents = u.historyEvents;
  if (u.counters) Object.assign(s, u.counters);
  return s;
}

export function bySize<T>(mode: Mode, sizes: Record<Mode, T>): T {
  return sizes[mode];
}
