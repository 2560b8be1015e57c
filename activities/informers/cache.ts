import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeObject } from '../kube/projections';
import { onAbort } from '../kube/abort';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath, type ResourceType } from '../kube/resources';
import { METADATA, covers, metadataOnly, prune, unionMask, type FieldMask } from './fields';
import type { WatchPositions } from './positions';
import { METADATA_ONLY, reflect, type ReflectorStats } from './reflector';
import { Store, type ListenerThrow, type StoreListener } from './store';

/** What the cache reports, for the manager's metrics. */
export interface CacheObserver {
  /** a reflector started (or stopped) for a resource (`pods`, `replicasets.apps`): exactly one per resource */
  onReflector?(resource: string, running: boolean): void;
  onList?(resource: string): void;
  onWatch?(resource: string, open: boolean): void;
  onWatchEvent?(resource: string, type: string): void;
  /** a resource's watch resumed from the last holder's position, or could not and was listed afresh */
  onResume?(resource: string, resumed: boolean): void;
  /** a listener (a controller's route) threw on an object; the cache has logged it */
  onListenerThrow?(t: ListenerThrow): void;
}

/**
 * Where the last holder of the watch left off, and how to take in a list made there: the routes
 * rebuild their state from it, but their signals are dropped (the last holder sent them). Returns
 * how many were dropped.
 */
export interface CacheResume {
  positions: WatchPositions;
  quietly(fn: () => void): number;
}

/** `pods`, `replicasets.apps`: how Kubernetes names a resource in metrics and RBAC. */
export function resourceLabel(path: string): string {
  const parts = path.replace(/\?.*$/, '').split('/').filter(Boolean);
  const resource = parts[parts.length - 1];
  return parts[0] === 'apis' && parts.length >= 4 ? `${resource}.${parts[1]}` : resource;
}

const SECRETS_PATH = resourcePath(RESOURCES.secrets);

/**
 * Secret values never stay in memory: each becomes the SHA-256 of its bytes (empty stays empty),
 * which is all any route needs (is a token there, is the CA the current one).
 */
function digestSecretData(o: KubeObject): KubeObject {
  const data = (o as { data?: Record<string, string> }).data;
  if (!data) return o;
  const digested: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) digested[k] = v ? createHash('sha256').update(Buffer.from(v, 'base64')).digest('hex') : '';
  return { ...o, data: digested } as KubeObject;
}

/** upstream's managers trim managedFields from their informers' objects too: nobody reads them */
function withoutManagedFields(o: KubeObject): KubeObject {
  const m = o.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (m?.managedFields !== undefined) delete m.managedFields;
  return o;
}

/**
 * Sees every resource's objects as the API server sent them, before the store trims them
 * (managedFields included): how --shadow learns which changes the cluster's own manager made.
 * It must not change what it is handed.
 */
export interface RawTap {
  listed(path: string, objects: readonly KubeObject[]): void;
  event(path: string, type: string, obj: KubeObject): void;
}

interface Entry {
  store: Store;
  mask: FieldMask;
  stats: ReflectorStats;
  /** set once its reflector runs: the mask can no longer grow */
  running: boolean;
  metadataOnly: boolean;
}

/**
 * The manager's one informer per resource: whichever controllers want a resource register what
 * they read of it (a field mask) and a listener, and one reflector lists and watches it for all of
 * them into one store holding the union of their masks. A resource only the garbage collector
 * wants is listed and watched as metadata; one that any route reads in full gives the collector
 * the typed objects' metadata, as upstream's collector uses the typed informer where one exists.
 */
export class InformerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly reflectors: Array<Promise<void>> = [];
  private signal?: AbortSignal;
  private resume?: CacheResume;
  /**
   * While a resume is under way: the resources with a position whose first list is still to come,
   * and the watches waiting for them (see start).
   */
  private resuming?: { unlisted: Set<string>; done: Promise<void>; release: () => void };
  private readonly taps: RawTap[] = [];
  /** whose listeners `watch` subscribes now (see owning) */
  private owner = '';

  constructor(
    private readonly rest: KubeRest,
    private readonly logger: Logger,
    private readonly observer: CacheObserver = {},
    /** the wait before an object a listener threw on is offered to it again, by attempt */
    private readonly retryMs?: (attempt: number) => number,
  ) {}

  /**
   * Runs `register` with every listener it subscribes named as `owner`'s (a controller's routes),
   * so that a throw of one is reported as that controller's.
   */
  owning<T>(owner: string, register: () => T): T {
    const before = this.owner;
    this.owner = owner;
    try {
      return register();
    } finally {
      this.owner = before;
    }
  }

  /**
   * Registers a consumer of a resource (a known one, or a collection path found by discovery) and
   * returns its store. Before `start` masks add up; after it, a consumer may only read what the
   * running reflector already keeps (the collector's metadata always is).
   */
  watch(resource: ResourceType | string, fields: FieldMask, listener?: StoreListener): Store {
    const path = typeof resource === 'string' ? resource : resourcePath(resource);
    let e = this.entries.get(path);
    if (!e) {
      const entry: Entry = {
        mask: METADATA,
        stats: { lists: 0, watches: 0, events: 0, lastEventAt: 0 },
        running: false,
        metadataOnly: true,
        store: new Store(path, {
          transform: (o) => prune(withoutManagedFields(path === SECRETS_PATH ? digestSecretData(o) : o), entry.mask) as KubeObject,
          onThrow: (t) => this.listenerThrew(t),
          owner: () => this.owner,
          ...(this.retryMs ? { retryMs: this.retryMs } : {}),
        }),
      };
      this.entries.set(path, entry);
      e = entry;
    }
    if (e.running) {
      if (!covers(e.mask, fields)) throw new Error(`${path} is already watched without every field a late consumer reads`);
    } else {
      e.mask = unionMask(e.mask, fields);
    }
    if (listener) e.store.subscribe(listener);
    if (this.signal && !e.running) this.run(path, e);
    return e.store;
  }

  /** Hands `tap` every resource's lists and events, before they are trimmed (see RawTap). */
  tap(tap: RawTap): void {
    this.taps.push(tap);
  }

  /** The store of a resource some consumer registered, if any. */
  store(resource: ResourceType | string): Store | undefined {
    return this.entries.get(typeof resource === 'string' ? resource : resourcePath(resource))?.store;
  }

  /**
   * A copy of one object, for a reader outside the routes: only once its reflector has listed, and
   * only if the store keeps at least `needed` of it.
   */
  read(resource: ResourceType, namespace: string, name: string, needed: FieldMask): KubeObject | undefined {
    const path = resourcePath(resource);
    // the cache holds digests in place of Secret values: never a base for anything
    if (path === SECRETS_PATH) return undefined;
    const e = this.entries.get(path);
    if (!e?.running || !e.store.synced || !covers(e.mask, needed)) return undefined;
    const o = e.store.getByName(namespace, name);
    return o ? structuredClone(o) : undefined;
  }

  /**
   * Copies of the objects `keep` selects (every one without it), for a reader outside the routes:
   * only once the resource's reflector has listed, and only if the store keeps at least `needed`.
   */
  readAll(resource: ResourceType, needed: FieldMask, keep?: (o: KubeObject) => boolean): KubeObject[] | undefined {
    const path = resourcePath(resource);
    if (path === SECRETS_PATH) return undefined;
    const e = this.entries.get(path);
    if (!e?.running || !e.store.synced || !covers(e.mask, needed)) return undefined;
    const out: KubeObject[] = [];
    for (const o of e.store.list()) if (!keep || keep(o)) out.push(structuredClone(o));
    return out;
  }

  get paths(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Starts a reflector for every registered resource, and for each registered later; with
   * `resume`, each resource it has a position for resumes there (see WatchPositions).
   */
  start(signal: AbortSignal, resume?: CacheResume): void {
    this.signal = signal;
    this.resume = resume;
    // A resumed list is taken in without signals, so nothing may reach the routes from a watch
    // until every resumed store has listed: a route that drops an event it cannot place yet (a pod
    // whose owner's store is still empty) counts on that store's first list to send the owner its
    // state, and a resumed list sends nothing. The last holder had every store listed at these
    // positions; the watches start from the same state.
    const unlisted = new Set(resume ? [...this.entries.keys()].filter((p) => resume.positions[p] !== undefined) : []);
    if (unlisted.size) {
      let release!: () => void;
      const done = new Promise<void>((r) => { release = r; });
      this.resuming = { unlisted, done, release };
      onAbort(signal, release);
    }
    for (const [path, e] of this.entries) if (!e.running) this.run(path, e);
    onAbort(signal, () => {
      for (const e of this.entries.values()) e.store.close();
    });
  }

  /** One line for the first throw of a streak (the rest only count), and the observer's report. */
  private listenerThrew(t: ListenerThrow): void {
    const line = {
      controller: t.owner, resource: resourceLabel(t.path), ...(t.obj ? { key: [t.obj.metadata?.namespace, t.obj.metadata?.name].filter(Boolean).join('/') } : {}), attempt: t.attempt, retryInMs: t.retryInMs,
      err: t.error instanceof Error ? (t.error.stack ?? t.error.message) : String(t.error),
    };
    if (!t.obj) this.logger.error(line, 'a route threw at the end of a list; the other routes go on, and it is called again at the next list');
    else if (t.attempt === 1) this.logger.error(line, 'a route threw on a change of this object; the other routes and objects go on, and it is offered again with backoff');
    else this.logger.debug(line, 'a route threw again on this object');
    this.observer.onListenerThrow?.(t);
  }

  /** Resolves when every reflector has stopped (after the start signal aborts). */
  async stopped(): Promise<void> {
    await Promise.all(this.reflectors);
  }

  /**
   * Every store's resourceVersion, by collection path, once every registered store has listed
   * (undefined before): together with the signals queued so far, a snapshot to resume from.
   */
  positions(): WatchPositions | undefined {
    const out: WatchPositions = {};
    for (const [path, e] of this.entries) {
      if (!e.running || !e.store.synced || !e.store.resourceVersion) return undefined;
      out[path] = e.store.resourceVersion;
    }
    return out;
  }

  sizes(): Record<string, number> {
    return Object.fromEntries([...this.entries].map(([p, e]) => [resourceLabel(p), e.store.size]));
  }

  stats(): Record<string, ReflectorStats & { metadataOnly: boolean }> {
    return Object.fromEntries([...this.entries].map(([p, e]) => [resourceLabel(p), { ...e.stats, metadataOnly: e.metadataOnly }]));
  }

  private run(path: string, e: Entry): void {
    e.running = true;
    e.metadataOnly = metadataOnly(e.mask);
    const label = resourceLabel(path);
    const o = this.observer;
    o.onReflector?.(label, true);
    const resume = this.resume;
    // a resource registered while the resume is under way (the collector's discovery) joins it
    if (this.resuming && resume?.positions[path] !== undefined) this.resuming.unlisted.add(path);
    const resuming = this.resuming?.unlisted.has(path) ? this.resuming : undefined;
    const listed = () => {
      if (!resuming?.unlisted.delete(path) || resuming.unlisted.size) return;
      this.resuming = undefined;
      resuming.release();
    };
    this.reflectors.push(reflect(this.rest, path, {
      relisted: (objects, rv, resumed) => {
        for (const t of this.taps) t.listed(path, objects);
        if (resumed && resume) {
          const skipped = resume.quietly(() => e.store.replace(objects, rv));
          this.logger.info({ resource: label, resourceVersion: rv, objects: objects.length, signalsSkipped: skipped }, 'watch resumed from the last holder\'s position');
        } else {
          e.store.replace(objects, rv);
        }
        listed();
      },
      bookmark: (rv) => e.store.advance(rv),
      event: (type, obj) => {
        o.onWatchEvent?.(label, type);
        for (const t of this.taps) t.event(path, type, obj);
        e.store.apply(type, obj);
      },
    }, this.signal!, this.logger, e.stats, e.metadataOnly ? METADATA_ONLY : undefined, {
      onList: () => o.onList?.(label),
      onWatch: (open) => o.onWatch?.(label, open),
      onResume: (resumed) => o.onResume?.(label, resumed),
      ...(resuming ? { beforeFirstWatch: () => resuming.done } : {}),
    }, resume?.positions[path]).catch((err: unknown) => this.logger.error({ resource: label, err: String(err) }, 'reflector failed'))
      .finally(() => o.onReflector?.(label, false)));
  }
}
