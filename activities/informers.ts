import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { KubeRest } from './kube/rest';
import type { InformerInput, RouteFamily } from './informers/family';
import { Handler, METADATA_ONLY, ReflectorStats, reflect } from './informers/reflector';
import { Signaller } from './informers/signaller';
import type { RouteFactory } from '../workers/descriptor';
import { CONTROLLERS } from '../workers/registry';

export type { InformerInput } from './informers/family';

export interface InformerDeps {
  rest: KubeRest;
  client: Client;
  taskQueue: string;
  logger: Logger;
  onWatchEvent?: (resource: string, type: string) => void;
  onSignalSent?: (controller: string) => void;
  /** the CA bundle to publish, read by the manager (never part of a payload) */
  rootCa?: string;
}

/** The longest the pump sleeps; a quiet object's event wakes it at once (see Signaller.idle). */
const FLUSH_PERIOD_MS = 100;
const STATS_PERIOD_MS = 30_000;
/** upstream's collector re-reads discovery every 30 s */
const DISCOVERY_PERIOD_MS = 30_000;

const resourceOf = (path: string) => {
  const bare = path.replace(/\?.*$/, '');
  return bare.slice(bare.lastIndexOf('/') + 1);
};

/**
 * The single list+watch of every resource the enabled controllers need, and the routes that turn
 * its events into signals for per-object workflows. It runs as one long, heartbeating activity of
 * a fixed-ID workflow, so exactly one replica runs it; if that replica dies, the heartbeat times
 * out and Temporal starts it on another, which relists and nudges every object to re-observe.
 */
export function createInformerActivities(deps: InformerDeps) {
  return {
    async runInformers(input: InformerInput): Promise<void> {
      const ctx = Context.current();
      const abort = new AbortController();
      ctx.cancelled.catch(() => abort.abort());
      const signal = abort.signal;
      const log = deps.logger.child({ component: 'informers' });
      const signaller = new Signaller(deps.client, deps.taskQueue, log, deps.onSignalSent);
      // controllers sharing an engine name one factory: each factory runs once
      const factories = new Set<RouteFactory>();
      for (const d of CONTROLLERS) if (d.routes && input.controllers.includes(d.short)) factories.add(d.routes);
      const families = [...factories]
        .map((routes) => routes({ input, signaller, rest: deps.rest, rootCa: deps.rootCa }))
        .filter((f): f is RouteFamily => f !== undefined);

      // one reflector per resource, fanning out to every family that routes it
      const byPath = new Map<string, Handler[]>();
      const fullPaths = new Set<string>();
      for (const f of families) {
        for (const [path, h] of f.handlers) {
          byPath.set(path, [...(byPath.get(path) ?? []), h]);
          if (!f.metadataOnly?.has(path)) fullPaths.add(path);
        }
      }
      const stats = new Map<string, ReflectorStats>();
      const reflectors = [...byPath].map(([path, hs]) => {
        const st: ReflectorStats = { lists: 0, watches: 0, events: 0, lastEventAt: 0 };
        stats.set(path, st);
        const fanOut: Handler = {
          relisted: (objs, rv) => hs.forEach((h) => h.relisted(objs, rv)),
          event: (type, obj) => {
            deps.onWatchEvent?.(resourceOf(path), type);
            hs.forEach((h) => h.event(type, obj));
          },
        };
        return reflect(deps.rest, path, fanOut, signal, log, st, fullPaths.has(path) ? undefined : METADATA_ONLY);
      });
      // resources discovered at run time get reflectors of their own (metadata-only for the collector)
      const discovered = new Set<string>();
      const discover = async () => {
        for (const f of families) {
          if (!f.discover) continue;
          try {
            for (const d of await f.discover()) {
              const key = `${d.metadataOnly ? 'meta:' : ''}${d.path}`;
              if (discovered.has(key)) continue;
              discovered.add(key);
              const st: ReflectorStats = { lists: 0, watches: 0, events: 0, lastEventAt: 0 };
              stats.set(key, st);
              reflectors.push(reflect(deps.rest, d.path, d.handler, signal, log, st, d.metadataOnly ? METADATA_ONLY : undefined));
            }
          } catch (e) {
            log.warn({ err: String(e) }, 'discovery failed; will retry');
          }
        }
      };
      await discover();
      log.info({ controllers: input.controllers, resources: [...byPath.keys()], discovered: discovered.size }, 'informers started');
      let lastDiscovery = Date.now();

      const sizes = () => Object.assign({}, ...families.map((f) => f.sizes())) as Record<string, number>;
      let lastStats = Date.now();
      const pump = (async () => {
        while (!signal.aborted) {
          if (Date.now() - lastStats > STATS_PERIOD_MS) {
            lastStats = Date.now();
            // a debug line: at info level it would be a screenful every half minute on an idle cluster
            log.debug({ ...sizes(), pending: signaller.size, signalsSent: signaller.sent, signalErrors: signaller.errors,
              reflectors: Object.fromEntries([...stats].map(([p, st]) => [p, { ...st, lastEventAgoMs: st.lastEventAt ? Date.now() - st.lastEventAt : null }])) }, 'informer stats');
          }
          ctx.heartbeat(sizes());
          if (discovered.size && Date.now() - lastDiscovery > DISCOVERY_PERIOD_MS) {
            lastDiscovery = Date.now();
            void discover();
          }
          if (signaller.size) await signaller.flush();
          await signaller.idle(FLUSH_PERIOD_MS, signal);
        }
      })();
      // reflectors only return when aborted; with no controller enabled there are none to wait for
      await (reflectors.length ? Promise.race([Promise.all(reflectors), pump]) : pump);
      abort.abort();
      log.info('informers stopped');
      // Never complete: a stop (worker shutdown, lost heartbeat) must hand the watch to another replica.
      throw ApplicationFailure.retryable('informers stopped on this worker', 'InformersStopped');
    },
  };
}

export type InformerActivities = ReturnType<typeof createInformerActivities>;
