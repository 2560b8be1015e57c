import type { KubeObject } from '../kube/projections';
import { newerVersion } from '../../workflows/common/resource-version';
import { SetIndex } from './set-index';
import { DEFAULT_TUNING, backoffMs } from '../../workflows/runtime/object-loop';

/**
 * Where a change came from: a watch event; the first list (or, for a listener added later, the
 * store's contents at that moment); or a relist after a watch gap, whose differences arrive as
 * events — with an `updated` for every object still there, changed or not, as client-go's Replace
 * does, so routes can nudge their workflows to look again.
 */
export type EventSource = 'watch' | 'list' | 'relist';

/** A change of the store, after it has been applied (lookups in a listener already see it). */
export type StoreEvent =
  | { type: 'added'; obj: KubeObject; source: EventSource }
  | { type: 'updated'; old: KubeObject; obj: KubeObject; source: EventSource }
  | { type: 'deleted'; old: KubeObject; source: EventSource };

export interface StoreListener {
  onEvent(ev: StoreEvent): void;
  /** after every (re)list's events; `first` once the store is synced for the first time */
  onListed?(first: boolean): void;
}

/**
 * A listener that threw on an event: a bug in a route, or an object it cannot handle. The store
 * goes on with its other listeners and events; this one is offered the object again after
 * `retryInMs` (see Store).
 */
export interface ListenerThrow {
  /** the store's resource path */
  path: string;
  /** who subscribed the listener: the controller whose route it is */
  owner: string;
  /** the object the event was of; none for a throw of onListed */
  obj?: KubeObject;
  error: unknown;
  /** 1 for the first throw of a streak on this object, 2 for the next retry's, ... */
  attempt: number;
  retryInMs: number;
}

export interface StoreOptions {
  /** what the reflector's objects go through before they are kept (pruning, Secret digests) */
  transform?: (o: KubeObject) => KubeObject;
  /** told of every throw of a listener */
  onThrow?: (t: ListenerThrow) => void;
  /** whom a listener subscribed without an owner is for (the cache's owning(...) at the time) */
  owner?: () => string;
  /** the wait before a thrown event's object is offered again, by attempt (1, 2, ...); the object loop's default backoff without it */
  retryMs?: (attempt: number) => number;
}

/** A listener, who subscribed it, and the objects it threw on, each waiting to be offered again. */
interface Subscription {
  listener: StoreListener;
  owner: string;
  failing: Map<string, { attempt: number; last: StoreEvent; timer?: ReturnType<typeof setTimeout> }>;
}

/** A named secondary index: the keys an object is filed under (none: not indexed). Define each once, as a constant. */
export interface StoreIndex {
  readonly name: string;
  keys(obj: KubeObject): readonly string[];
}

const uidOf = (o: KubeObject) => o.metadata?.uid ?? '';
const nameKey = (namespace: string, name: string) => `${namespace}/${name}`;
const nameKeyOf = (o: KubeObject) => nameKey(o.metadata?.namespace ?? '', o.metadata?.name ?? '');

/**
 * One resource's objects, by UID, as its reflector last saw them (already pruned to what its
 * consumers read), with named secondary indexes and the diff a relist makes, written once for
 * every route. Pure: the reflector feeds it, listeners and tests read it.
 */
export class Store {
  private readonly objects = new Map<string, KubeObject>();
  private readonly byName = new Map<string, string>();
  private readonly indexes = new Map<string, { def: StoreIndex; index: SetIndex<string, string> }>();
  private readonly subscriptions: Subscription[] = [];
  /** the passes routes made (eachObject): listeners of a kind, told of nothing but their pass */
  private readonly passes: Subscription[] = [];
  private listed = false;
  private closed = false;
  /** the newest resourceVersion taken in, from a list or an event; '' before the first list */
  resourceVersion = '';

  private readonly transform: (o: KubeObject) => KubeObject;

  constructor(readonly path: string, private readonly options: StoreOptions = {}) {
    this.transform = options.transform ?? ((o) => o);
  }

  get synced(): boolean {
    return this.listed;
  }

  get size(): number {
    return this.objects.size;
  }

  get(uid: string): KubeObject | undefined {
    return this.objects.get(uid);
  }

  getByName(namespace: string, name: string): KubeObject | undefined {
    const uid = this.byName.get(nameKey(namespace, name));
    return uid === undefined ? undefined : this.objects.get(uid);
  }

  list(): IterableIterator<KubeObject> {
    return this.objects.values();
  }

  /**
   * Files every object under the index's keys. Adding an index again is a no-op (two routes share
   * it); another index under a known name is a bug.
   */
  addIndex(def: StoreIndex): void {
    const known = this.indexes.get(def.name);
    if (known) {
      if (known.def !== def) throw new Error(`two indexes named ${def.name} on ${this.path}`);
      return;
    }
    const index = new SetIndex<string, string>();
    for (const [uid, o] of this.objects) for (const k of def.keys(o)) index.add(k, uid);
    this.indexes.set(def.name, { def, index });
  }

  byIndex(def: StoreIndex, key: string): KubeObject[] {
    return [...this.indexed(def, key)].map((u) => this.objects.get(u)!);
  }

  /** How many objects are filed under the key, without copying them out (a check made per node per tick). */
  countByIndex(def: StoreIndex, key: string): number {
    return this.indexed(def, key).size;
  }

  private indexed(def: StoreIndex, key: string): ReadonlySet<string> {
    const idx = this.indexes.get(def.name);
    if (!idx) throw new Error(`no index ${def.name} on ${this.path}`);
    return idx.index.get(key);
  }

  /**
   * Adds a listener, for `owner` (the controller whose route it is, named in reports of its
   * throws). One added after the first list (the collector finding a resource another controller
   * already watches) is first told of every object as `added` from a list.
   */
  subscribe(l: StoreListener, owner = this.options.owner?.() ?? ''): void {
    const sub: Subscription = { listener: l, owner, failing: new Map() };
    this.subscriptions.push(sub);
    if (!this.listed) return;
    this.offerEach(sub, 'list');
    this.listedTo(sub, true);
  }

  /**
   * Offers every object again to `l` (subscribed here) as `added` from a relist, each on its own
   * as any event is: what a route does when another store's list lets it act on this one's objects.
   */
  offerAll(l: StoreListener): void {
    const sub = this.subscriptions.find((s) => s.listener === l);
    if (!sub) throw new Error(`offerAll: the listener is not subscribed to ${this.path}`);
    this.offerEach(sub, 'relist');
  }

  /** Every object to one listener, as `added` from `source`, each on its own (deliver). */
  private offerEach(sub: Subscription, source: EventSource): void {
    for (const obj of [...this.objects.values()]) this.deliver(sub, { type: 'added', obj, source });
  }

  /**
   * A pass over every object the store holds, for a route that looks at them all (at the end of a
   * list, its own or another store's): `fn` meets each object on its own, as a listener meets an
   * event, so an object it throws on is reported and offered to it again with backoff (as the
   * store then holds it), and the objects after it are not left unseen. Made where the route is
   * built, so the pass is that route's (the owner the store's options name then).
   */
  eachObject(fn: (obj: KubeObject) => void): () => void {
    const sub: Subscription = {
      listener: { onEvent: (ev) => { if (ev.type !== 'deleted') fn(ev.obj); } },
      owner: this.options.owner?.() ?? '',
      failing: new Map(),
    };
    this.passes.push(sub);
    return () => this.offerEach(sub, 'relist');
  }

  /** Ends the retries of thrown events (the informer stops). */
  close(): void {
    this.closed = true;
    for (const sub of [...this.subscriptions, ...this.passes]) {
      for (const f of sub.failing.values()) clearTimeout(f.timer);
      sub.failing.clear();
    }
  }

  /** A complete list, as of `resourceVersion`: what it lacks was deleted meanwhile. */
  replace(raw: KubeObject[], resourceVersion?: string): void {
    const first = !this.listed;
    const source: EventSource = first ? 'list' : 'relist';
    const seen = new Set<string>();
    const events: StoreEvent[] = [];
    for (const r of raw) {
      const obj = this.transform(r);
      const uid = uidOf(obj);
      seen.add(uid);
      const old = this.objects.get(uid);
      this.put(uid, obj, old);
      events.push(old ? { type: 'updated', old, obj, source } : { type: 'added', obj, source });
    }
    for (const [uid, old] of [...this.objects]) {
      if (seen.has(uid)) continue;
      this.drop(uid, old);
      events.push({ type: 'deleted', old, source });
    }
    if (resourceVersion) this.resourceVersion = resourceVersion;
    this.listed = true;
    for (const ev of events) this.emit(ev);
    for (const sub of this.subscriptions) this.listedTo(sub, first);
  }

  /**
   * A watch bookmark: nothing changed up to this version. Moves the store's position on, so a
   * snapshot dated by it is as current as the watch (a quiet resource's position would otherwise
   * stay at its last change).
   */
  advance(resourceVersion: string): void {
    if (!this.resourceVersion || newerVersion(resourceVersion, this.resourceVersion)) this.resourceVersion = resourceVersion;
  }

  /** One watch event. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: KubeObject): void {
    const obj = this.transform(raw);
    const uid = uidOf(obj);
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    const old = this.objects.get(uid);
    if (type === 'DELETED') {
      if (old) this.drop(uid, old);
      // a delete of what the store never held still tells listeners (its final state is all there is)
      this.emit({ type: 'deleted', old: old ?? obj, source: 'watch' });
      return;
    }
    this.put(uid, obj, old);
    this.emit(old ? { type: 'updated', old, obj, source: 'watch' } : { type: 'added', obj, source: 'watch' });
  }

  private put(uid: string, obj: KubeObject, old: KubeObject | undefined): void {
    if (old) this.unindex(uid, old);
    this.objects.set(uid, obj);
    this.byName.set(nameKeyOf(obj), uid);
    for (const { def, index } of this.indexes.values()) for (const k of def.keys(obj)) index.add(k, uid);
  }

  private drop(uid: string, old: KubeObject): void {
    this.unindex(uid, old);
    this.objects.delete(uid);
  }

  private unindex(uid: string, old: KubeObject): void {
    const k = nameKeyOf(old);
    if (this.byName.get(k) === uid) this.byName.delete(k);
    for (const { def, index } of this.indexes.values()) for (const key of def.keys(old)) index.delete(key, uid);
  }

  private emit(ev: StoreEvent): void {
    for (const sub of this.subscriptions) this.deliver(sub, ev);
  }

  /**
   * One event to one listener. A throw stays with that listener and that object: the other
   * listeners hear the event, the reflector goes on (a throw out of here would fail its list or
   * cut its watch, and a relist would meet the same object again, for ever), and the object is
   * offered to the listener again with backoff, as it then is, until the listener takes it or
   * an event of it that the listener takes comes first.
   */
  private deliver(sub: Subscription, ev: StoreEvent): void {
    const obj = ev.type === 'deleted' ? ev.old : ev.obj;
    const uid = uidOf(obj);
    try {
      sub.listener.onEvent(ev);
    } catch (error) {
      const prev = sub.failing.get(uid);
      clearTimeout(prev?.timer);
      const attempt = (prev?.attempt ?? 0) + 1;
      const retryInMs = this.options.retryMs?.(attempt) ?? backoffMs(DEFAULT_TUNING, attempt);
      const f: { attempt: number; last: StoreEvent; timer?: ReturnType<typeof setTimeout> } = { attempt, last: ev };
      if (!this.closed) {
        f.timer = setTimeout(() => this.retry(sub, uid), retryInMs);
        f.timer.unref?.();
      }
      sub.failing.set(uid, f);
      this.options.onThrow?.({ path: this.path, owner: sub.owner, obj, error, attempt, retryInMs });
      return;
    }
    const f = sub.failing.get(uid);
    if (f) {
      clearTimeout(f.timer);
      sub.failing.delete(uid);
    }
  }

  /** A list's end to one listener: a throw is reported, and the list, like the other listeners, goes on. */
  private listedTo(sub: Subscription, first: boolean): void {
    try {
      sub.listener.onListed?.(first);
    } catch (error) {
      this.options.onThrow?.({ path: this.path, owner: sub.owner, error, attempt: 1, retryInMs: 0 });
    }
  }

  /** A thrown event's retry: the object as the store now holds it, or the delete that threw. */
  private retry(sub: Subscription, uid: string): void {
    const f = sub.failing.get(uid);
    if (!f || this.closed) return;
    f.timer = undefined;
    const now = this.objects.get(uid);
    if (now) this.deliver(sub, { type: 'added', obj: now, source: 'relist' });
    else if (f.last.type === 'deleted') this.deliver(sub, f.last);
    else sub.failing.delete(uid);
  }
}
