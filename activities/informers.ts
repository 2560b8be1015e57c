import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { listOnly } from './kube/manager-reads';
import { ApiError, KubeRest } from './kube/rest';
import { InformerCache, type CacheObserver, type RawTap } from './informers/cache';
import type { FieldMask } from './informers/fields';
import { RESOURCES } from './kube/resources';
import type { GoneSweep, InformerInput, RouteFamily } from './informers/family';
import { sweepGone } from './informers/gone-sweep';
import { PositionLog, positionsFromHeartbeat, type InformerHeartbeat } from './informers/positions';
import { METADATA_ONLY } from './informers/reflector';
import { sleep } from './kube/abort';
import { Signaller } from './informers/signaller';
import type { LocalReads } from './informers/local-reads';
import type { RouteFactory } from '../workers/descriptor';
import { CONTROLLERS } from '../workers/registry';
import { discoverResources } from './kube/discovery';
import { DEFAULT_TUNING, backoffMs } from '../workflows/runtime/object-loop';

export type { InformerInput } from './informers/family';

export interface InformerDeps {
  rest: KubeRest;
  client: Client;
  taskQueue: string;
  logger: Logger;
  /** how often discovery is read again for resources added or removed (--discovery-period) */
  discoveryPeriodMs?: number;
  /** the shared cache's reflectors, lists, watches and events, for the manager's metrics */
  observer?: CacheObserver;
  /** a signal went out, folding `folded` watch events */
  onSignalSent?: (controller: string, folded: number) => void;
  /** a gate held `events` watch events (see SignalGate) */
  onEventsHeld?: (controller: string, events: number) => void;
  /** an object's held events went out because --max-signal-hold ran out */
  onHoldExpired?: (controller: string) => void;
  /** a signal too large for a payload went out shrunk */
  onShrunk?: (controller: string) => void;
  /** a controller's signal gate or periodic pass threw (logged; a route's throw goes to observer.onListenerThrow) */
  onRouteThrew?: (controller: string) => void;
  /** --max-signal-hold */
  maxSignalHoldMs?: number;
  /** the CA bundle to publish, read by the manager (never part of a payload) */
  rootCa?: string;
  /** where this replica's activities find the cache while it runs here */
  local?: LocalReads;
  /** put before every workflow ID the routes name (--shadow) */
  workflowIdPrefix?: string;
  /** --shadow: where the cluster manager's writes seen by the watch go */
  shadow?: { managerWrites(): RawTap };
}

/** What the shadow ledger compares of an Event (see activities/shadow/content.ts) */
const SHADOW_EVENT_FIELDS: FieldMask = { apiVersion: true, kind: true, metadata: true, involvedObject: true, reason: true, message: true, type: true, source: true, reportingComponent: true };

/** The longest the pump sleeps; a quiet object's event wakes it at once (see Signaller.idle). */
const FLUSH_PERIOD_MS = 100;
const STATS_PERIOD_MS = 30_000;
/** upstream's collector re-reads discovery every 30 s */
const DISCOVERY_PERIOD_MS = 30_000;
const SWEEP_RETRY_MS = 5_000;

/**
 * The list+watch of every resource the enabled controllers need, once per resource in a shared
 * cache, and the routes that turn its changes into signals for per-object workflows. It runs as
 * one long, heartbeating activity of a fixed-ID workflow, so exactly one replica runs it; if that
 * replica dies, the heartbeat times out and Temporal starts it on another. The heartbeat carries
 * where the watch stands (WatchPositions): the next holder lists there without signalling and
 * watches on, so workflows hear only of the changes since. Without positions, or with ones the API
 * server has compacted away, it lists afresh and every object's workflow is told to look again.
 */
export function createInformerActivities(deps: InformerDeps) {
  return {
    async runInformers(input: InformerInput): Promise<void> {
      const ctx = Context.current();
      const abort = new AbortController();
      ctx.cancelled.catch(() => abort.abort());
      const signal = abort.signal;
      const log = deps.logger.child({ component: 'informers' });
      const signaller = new Signaller(deps.client, deps.taskQueue, log,
        { onSent: deps.onSignalSent, onHeld: deps.onEventsHeld, onHoldExpired: deps.onHoldExpired, onShrunk: deps.onShrunk, onGateThrew: deps.onRouteThrew, idPrefix: deps.workflowIdPrefix, maxHoldMs: deps.maxSignalHoldMs });
      const cache = new InformerCache(deps.rest, log, deps.observer, (attempt) => backoffMs({ ...DEFAULT_TUNING, ...input.tuning }, attempt));
      // controllers sharing an engine name one factory: each factory runs once
      // (named for the first of them, in reports of a route's throw)
      const factories = new Map<RouteFactory, string>();
      for (const d of CONTROLLERS) if (d.routes && input.controllers.includes(d.short) && !factories.has(d.routes)) factories.set(d.routes, d.short);
      const routeContext = { input, signaller, cache, rootCa: deps.rootCa, baseTaskQueue: deps.taskQueue };
      const owners = new Map<RouteFamily, string>();
      for (const [routes, owner] of factories) {
        const family = cache.owning(owner, () => routes(routeContext));
        if (family) owners.set(family, owner);
      }
      const families = [...owners.keys()];
      // each controller's own rule for events its workflow need not see yet (its descriptor's signalGate)
      for (const d of CONTROLLERS) {
        if (d.signalGate && input.controllers.includes(d.short)) signaller.gate(d.short, d.signalGate(routeContext));
      }
      if (deps.shadow) {
        // the cluster manager's writes, on every resource watched, and its Events (which no route reads)
        cache.tap(deps.shadow.managerWrites());
        cache.watch(RESOURCES.events, SHADOW_EVENT_FIELDS);
      }

      // a metadata read, listed by name as the manager's role allows: a 404 is the only answer that counts as gone
      const byName = listOnly(deps.rest);
      const stillThere = async (path: string) => {
        try {
          await byName.request('GET', path, { accept: METADATA_ONLY.list });
          return true;
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) return false;
          throw e;
        }
      };
      // each sweep runs once, after its store's first list (see GoneSweep)
      const sweep = async (s: GoneSweep) => {
        for (let attempt = 1; !signal.aborted; attempt++) {
          try {
            const told = await sweepGone(deps.client, deps.taskQueue, s, log, signal, stillThere);
            log[told ? 'info' : 'debug']({ controller: s.controller, told }, 'open workflows checked against the first list');
            return;
          } catch (e) {
            log.warn({ controller: s.controller, err: String(e), attempt }, 'checking open workflows against the first list failed; will retry');
            await sleep(SWEEP_RETRY_MS, signal);
          }
        }
      };
      for (const s of families.flatMap((f) => f.sweeps ?? [])) {
        s.store.subscribe({ onEvent: () => undefined, onListed: (first) => { if (first) void sweep(s); } });
      }

      const sizes = () => Object.assign(cache.sizes(), ...families.map((f) => f.sizes?.() ?? {})) as Record<string, number>;
      const inherited = positionsFromHeartbeat(ctx.info.heartbeatDetails);
      const positions = new PositionLog(inherited);
      if (inherited) signaller.resumed();
      // The heartbeat keeps its own clock, from the start: discovery on a busy API server, or a flush
      // of thousands of signals to a busy Temporal server, can take seconds, and a heartbeat missed
      // that long would move the watch to another replica while this one still runs it.
      const beat = setInterval(() => {
        const now = cache.positions();
        if (now) positions.record(signaller.queued, now);
        ctx.heartbeat({ sizes: sizes(), positions: positions.settle(signaller.sentThrough()) } satisfies InformerHeartbeat);
      }, Math.max(100, Math.min(1000, (ctx.info.heartbeatTimeoutMs ?? 4000) / 4)));
      cache.start(signal, inherited && { positions: inherited, quietly: (fn) => signaller.muted(fn) });
      deps.local?.attach(cache);
      // resources discovered at run time join the cache (metadata-only unless a route reads them in full)
      const discovering = families.filter((f) => f.discover);
      // one discovery read per round, whichever families want it (collector, quota monitors)
      const discover = async () => {
        if (!discovering.length) return;
        try {
          const found = await discoverResources(deps.rest);
          for (const f of discovering) cache.owning(owners.get(f)!, () => f.discover!(found));
        } catch (e) {
          log.warn({ err: String(e) }, 'discovery failed; will retry');
        }
      };
      await discover();
      log.info({ controllers: input.controllers, resources: cache.paths.length, resuming: !!inherited }, 'informers started');
      let lastDiscovery = Date.now();

      let lastStats = Date.now();
      const periodic = families.flatMap((f) => (f.periodic ? [{ ...f.periodic, owner: owners.get(f)!, last: Date.now() }] : []));
      const pump = (async () => {
        while (!signal.aborted) {
          for (const p of periodic) {
            if (Date.now() - p.last < p.everyMs) continue;
            p.last = Date.now();
            try {
              p.run(p.last);
            } catch (e) {
              // a throw here would end the pump, and with it every controller's signals
              log.error({ controller: p.owner, err: e instanceof Error ? (e.stack ?? e.message) : String(e) }, 'a periodic pass of the routes threw; it runs again at its next period');
              deps.onRouteThrew?.(p.owner);
            }
          }
          if (Date.now() - lastStats > STATS_PERIOD_MS) {
            lastStats = Date.now();
            // a debug line: at info level it would be a screenful every half minute on an idle cluster
            log.debug({ sizes: sizes(), pending: signaller.size, held: signaller.heldKeys, eventsHeld: signaller.heldEvents, signalsSent: signaller.sent, signalErrors: signaller.errors,
              reflectors: cache.stats() }, 'informer stats');
          }
          if (discovering.length && Date.now() - lastDiscovery > (deps.discoveryPeriodMs ?? DISCOVERY_PERIOD_MS)) {
            lastDiscovery = Date.now();
            void discover();
          }
          if (signaller.size || signaller.heldKeys) await signaller.flush();
          await signaller.idle(FLUSH_PERIOD_MS, signal);
        }
      })();
      // reflectors only return when aborted; the pump ends with the same signal
      try {
        await pump;
      } finally {
        clearInterval(beat);
        deps.local?.detach(cache);
      }
      abort.abort();
      await cache.stopped();
      log.info('informers stopped');
      // Never complete: a stop (worker shutdown, lost heartbeat) must hand the watch to another replica.
      throw ApplicationFailure.retryable('informers stopped on this worker', 'InformersStopped');
    },
  };
}

export type InformerActivities = ReturnType<typeof createInformerActivities>;
