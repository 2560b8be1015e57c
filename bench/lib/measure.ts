import type { Client } from '@temporalio/client';
import { requestCounts } from './apiserver';
import type { ManagedProcess } from './managers';
import { OurCounters, ourCounters } from './prom';
import { ProcSampler } from './sampling';
import { BenchStack } from './stack';
import { historyEvents } from './temporal';

/** What a manager cost over a window; absent fields do not apply (no Temporal for upstream). */
export interface ResourceUse {
  seconds: number;
  cpuSeconds: number;
  peakRssMiB: number;
  apiRequests: number;
  apiWrites: number;
  temporalCpuSeconds?: number;
  temporalPeakRssMiB?: number;
  historyEvents?: number;
  /** ours: growth of its own counters (API calls it made, signals it sent, reconciles) */
  counters?: OurCounters;
}

export interface WindowOptions {
  stack: BenchStack;
  /** the manager processes, asked at every sample (a scenario may start or kill one meanwhile) */
  managers: () => ManagedProcess[];
  /** ours: the task queue whose histories count, and a client to count them with */
  temporal?: { client: Client; taskQueue: string };
}

export class Window {
  private constructor(
    private readonly o: WindowOptions,
    private readonly t0: number,
    private readonly manager: ProcSampler,
    private readonly server: ProcSampler | undefined,
    private readonly api0: { total: number; writes: number },
    private readonly history0: number | undefined,
    private readonly counters0: Map<number, OurCounters>,
  ) {}

  /** Per metrics port; a process started inside the window starts from zero. */
  private static async counters(managers: ManagedProcess[]): Promise<Map<number, OurCounters>> {
    const out = new Map<number, OurCounters>();
    for (const m of managers) {
      const c = await ourCounters(m.port);
      if (c) out.set(m.port, c);
    }
    return out;
  }

  static async open(o: WindowOptions): Promise<Window> {
    const api0 = await requestCounts(o.stack.rest);
    const history0 = o.temporal ? await historyEvents(o.temporal.client, o.temporal.taskQueue) : undefined;
    const counters0 = o.temporal ? await Window.counters(o.managers()) : new Map<number, OurCounters>();
    const manager = new ProcSampler(() => o.managers().map((m) => m.pid)).start();
    const tpid = o.stack.temporalPid();
    const server = o.temporal && tpid ? new ProcSampler(() => [tpid]).start() : undefined;
    return new Window(o, Date.now(), manager, server, api0, history0, counters0);
  }

  async close(): Promise<ResourceUse> {
    const seconds = (Date.now() - this.t0) / 1000;
    const m = this.manager.stop();
    const s = this.server?.stop();
    const api1 = await requestCounts(this.o.stack.rest);
    const history1 = this.o.temporal ? await historyEvents(this.o.temporal.client, this.o.temporal.taskQueue) : undefined;
    let counters: OurCounters | undefined;
    if (this.o.temporal) {
      counters = { ourApiCalls: 0, ourApiReads: 0, signalsSent: 0, eventsHeld: 0, holdsExpired: 0, reconciles: 0 };
      for (const [port, end] of await Window.counters(this.o.managers())) {
        const start = this.counters0.get(port);
        for (const k of Object.keys(counters) as Array<keyof OurCounters>) counters[k] += end[k] - (start?.[k] ?? 0);
      }
    }
    return {
      seconds,
      cpuSeconds: m.cpuSeconds,
      peakRssMiB: m.peakRssMiB,
      apiRequests: api1.total - this.api0.total,
      apiWrites: api1.writes - this.api0.writes,
      ...(s ? { temporalCpuSeconds: s.cpuSeconds, temporalPeakRssMiB: s.peakRssMiB } : {}),
      ...(history1 !== undefined && this.history0 !== undefined ? { historyEvents: history1 - this.history0 } : {}),
      ...(counters ? { counters } : {}),
    };
  }
}
