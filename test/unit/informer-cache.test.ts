import pino from 'pino';
import { InformerCache, resourceLabel } from '../../activities/informers/cache';
import { METADATA, covers, metadataOnly, prune, unionMask } from '../../activities/informers/fields';
import { BY_CONTROLLER_UID, BY_NAMESPACE } from '../../activities/informers/indexes';
import { Store, type ListenerThrow, type StoreEvent } from '../../activities/informers/store';
import type { KubeObject } from '../../activities/kube/projections';
import type { KubeRest } from '../../activities/kube/rest';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';

const obj = (name: string, rv: string, extra: Partial<KubeObject> = {}, ns = 'a'): KubeObject =>
  ({ ...extra, metadata: { namespace: ns, name, uid: `u-${name}`, resourceVersion: rv, ...extra.metadata } });

const short = (e: StoreEvent) => `${e.type}:${e.type === 'deleted' ? e.old.metadata?.name : e.obj.metadata?.name}:${e.source}`;

describe('field masks', () => {
  test('prune keeps the named fields, whole values under true, and applies a mask to each array element', () => {
    const o = { metadata: { name: 'x' }, spec: { a: 1, b: { c: 2, d: 3 }, list: [{ n: 1, m: 2 }, { n: 3 }] }, status: { phase: 'Running' } };
    expect(prune(o, { metadata: true, spec: { b: { c: true }, list: { n: true } } })).toEqual({ metadata: { name: 'x' }, spec: { b: { c: 2 }, list: [{ n: 1 }, { n: 3 }] } });
  });
  test('union, cover and metadata-only', () => {
    const u = unionMask({ spec: { a: true } }, { spec: { b: { c: true } }, status: true });
    expect(u).toEqual({ spec: { a: true, b: { c: true } }, status: true });
    expect(covers(u, { spec: { b: { c: true } } })).toBe(true);
    expect(covers(u, { spec: { d: true } })).toBe(false);
    expect(covers(true, u)).toBe(true);
    expect(metadataOnly(METADATA)).toBe(true);
    expect(metadataOnly(unionMask(METADATA, { spec: true }))).toBe(false);
  });
});

describe('store', () => {
  test('the first list adds; a relist updates what is still there (changed or not), adds the new and deletes the vanished', () => {
    const s = new Store('/x');
    const events: string[] = [];
    const listed: boolean[] = [];
    s.subscribe({ onEvent: (e) => events.push(short(e)), onListed: (first) => listed.push(first) });
    s.replace([obj('a', '1'), obj('b', '1')], '10');
    expect(events).toEqual(['added:a:list', 'added:b:list']);
    expect(s.synced).toBe(true);
    expect(s.resourceVersion).toBe('10');
    events.length = 0;
    s.replace([obj('a', '1'), obj('c', '5')], '20');
    expect(events.sort()).toEqual(['added:c:relist', 'deleted:b:relist', 'updated:a:relist']);
    expect(listed).toEqual([true, false]);
    expect([...s.list()].map((o) => o.metadata?.name).sort()).toEqual(['a', 'c']);
  });

  test('watch events apply before listeners run; a delete of an unknown object still reaches them', () => {
    const s = new Store('/x');
    const seen: Array<[string, number]> = [];
    s.subscribe({ onEvent: (e) => seen.push([short(e), s.size]) });
    s.replace([], '1');
    s.apply('ADDED', obj('a', '2'));
    s.apply('MODIFIED', obj('a', '3'));
    s.apply('DELETED', obj('a', '4'));
    s.apply('DELETED', obj('ghost', '5'));
    expect(seen).toEqual([['added:a:watch', 1], ['updated:a:watch', 1], ['deleted:a:watch', 0], ['deleted:ghost:watch', 0]]);
    expect(s.resourceVersion).toBe('5');
  });

  test('indexes follow updates and deletes, and are shared by name', () => {
    const s = new Store('/pods');
    const owned = (name: string, owner: string, rv: string) =>
      obj(name, rv, { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `u-${owner}`, controller: true }] } });
    s.replace([owned('p1', 'r1', '1'), owned('p2', 'r1', '1')], '1');
    s.addIndex(BY_CONTROLLER_UID);
    s.addIndex(BY_CONTROLLER_UID);
    expect(() => s.addIndex({ name: BY_CONTROLLER_UID.name, keys: () => [] })).toThrow(/two indexes/);
    expect(s.byIndex(BY_CONTROLLER_UID, 'u-r1').map((o) => o.metadata?.name).sort()).toEqual(['p1', 'p2']);
    s.apply('MODIFIED', owned('p2', 'r2', '2'));
    s.apply('DELETED', owned('p1', 'r1', '3'));
    expect(s.byIndex(BY_CONTROLLER_UID, 'u-r1')).toEqual([]);
    expect(s.byIndex(BY_CONTROLLER_UID, 'u-r2').map((o) => o.metadata?.name)).toEqual(['p2']);
    expect(() => s.byIndex(BY_NAMESPACE, 'a')).toThrow(/no index/);
  });

  test('by name: a recreated object (new UID) replaces the old one', () => {
    const s = new Store('/x');
    s.replace([obj('a', '1')], '1');
    s.apply('ADDED', { metadata: { namespace: 'a', name: 'a', uid: 'new', resourceVersion: '2' } });
    s.apply('DELETED', obj('a', '3'));
    expect(s.getByName('a', 'a')?.metadata?.uid).toBe('new');
  });

  test('a listener added after the first list is told of everything there, as a list', () => {
    const s = new Store('/x');
    s.replace([obj('a', '1')], '1');
    const events: string[] = [];
    s.subscribe({ onEvent: (e) => events.push(short(e)), onListed: (first) => events.push(`listed:${first}`) });
    expect(events).toEqual(['added:a:list', 'listed:true']);
  });
});

describe('a listener that throws', () => {
  /** a route that throws on every object named `bad` (and, with `still`, on every event until `still` says otherwise) */
  const thrower = (events: string[], still: () => boolean = () => true) => ({
    onEvent: (e: StoreEvent) => {
      const name = e.type === 'deleted' ? e.old.metadata?.name : e.obj.metadata?.name;
      if (name === 'bad' && still()) throw new TypeError('selector.matchExpressions is not iterable');
      events.push(short(e));
    },
  });

  afterEach(() => jest.useRealTimers());

  test('keeps the throw to itself and to that object: the other listeners hear every event, a list finishes, and the throw is reported with its owner', () => {
    const thrown: ListenerThrow[] = [];
    const s = new Store('/x', { onThrow: (t) => thrown.push(t), retryMs: () => 60_000 });
    const mine: string[] = [];
    const others: string[] = [];
    const listed: boolean[] = [];
    s.subscribe(thrower(mine), 'replicaset');
    s.subscribe({ onEvent: (e) => others.push(short(e)), onListed: (first) => listed.push(first) }, 'deployment');
    // the first list, with the bad object first: before, the throw ended the list (the reflector
    // then listed again and again, and no listener ever heard of `z`)
    expect(() => s.replace([obj('bad', '1'), obj('z', '1')], '1')).not.toThrow();
    expect(mine).toEqual(['added:z:list']);
    expect(others).toEqual(['added:bad:list', 'added:z:list']);
    expect(listed).toEqual([true]);
    expect(s.synced).toBe(true);
    // a watch event after it: before, the throw cut the watch
    expect(() => s.apply('MODIFIED', obj('bad', '2'))).not.toThrow();
    s.apply('ADDED', obj('y', '3'));
    expect(mine).toEqual(['added:z:list', 'added:y:watch']);
    expect(others).toEqual(['added:bad:list', 'added:z:list', 'updated:bad:watch', 'added:y:watch']);
    expect(thrown.map((t) => [t.path, t.owner, t.obj?.metadata?.name, t.attempt, t.retryInMs, String(t.error)])).toEqual([
      ['/x', 'replicaset', 'bad', 1, 60_000, 'TypeError: selector.matchExpressions is not iterable'],
      ['/x', 'replicaset', 'bad', 2, 60_000, 'TypeError: selector.matchExpressions is not iterable'],
    ]);
    s.close();
  });

  test('at the end of a list: a throw is reported without an object and the other listeners are told; offerAll gives each object on its own', () => {
    const thrown: ListenerThrow[] = [];
    const s = new Store('/x', { onThrow: (t) => thrown.push(t), retryMs: () => 60_000 });
    const listed: boolean[] = [];
    s.subscribe({ onEvent: () => undefined, onListed: () => { throw new Error('boom'); } }, 'a');
    s.subscribe({ onEvent: () => undefined, onListed: (first) => listed.push(first) }, 'b');
    s.replace([obj('bad', '1'), obj('z', '1')], '1');
    expect(listed).toEqual([true]);
    expect(thrown.map((t) => [t.owner, t.obj, String(t.error)])).toEqual([['a', undefined, 'Error: boom']]);

    const mine: string[] = [];
    const l = thrower(mine);
    s.subscribe(l, 'c');
    mine.length = 0;
    s.offerAll(l);
    expect(mine).toEqual(['added:z:relist']);
    expect(thrown.at(-1)).toMatchObject({ owner: 'c', obj: { metadata: { name: 'bad' } }, attempt: 2 });
    expect(() => s.offerAll({ onEvent: () => undefined })).toThrow(/not subscribed/);
    s.close();
  });

  test("a route's pass over every object (eachObject) meets each on its own: a throw on one is reported under the route's owner and retried for it alone", () => {
    jest.useFakeTimers();
    let broken = true;
    const thrown: ListenerThrow[] = [];
    let owner = 'daemonset';
    const s = new Store('/x', { onThrow: (t) => thrown.push(t), owner: () => owner });
    const seen: string[] = [];
    const pass = s.eachObject((o) => {
      if (o.metadata?.name === 'bad' && broken) throw new TypeError('x is not iterable');
      seen.push(`${o.metadata?.name}:${o.metadata?.resourceVersion}`);
    });
    owner = 'someone else'; // the pass is the route's that made it
    s.replace([obj('a', '1'), obj('bad', '1'), obj('z', '1')], '1');
    expect(seen).toEqual([]); // told of nothing but its pass
    pass();
    // before, the loop stopped at the bad object and `z` was never seen
    expect(seen).toEqual(['a:1', 'z:1']);
    expect(thrown.map((t) => [t.owner, t.obj?.metadata?.name, t.attempt, t.retryInMs, String(t.error)])).toEqual([['daemonset', 'bad', 1, 1000, 'TypeError: x is not iterable']]);
    // retried alone, as the store then holds it
    s.apply('MODIFIED', obj('bad', '2'));
    broken = false;
    jest.advanceTimersByTime(1000);
    expect(seen).toEqual(['a:1', 'z:1', 'bad:2']);
    jest.advanceTimersByTime(10 * 60_000);
    expect(seen).toHaveLength(3);
    // a bad object deleted before its retry is not met again; close ends the retries
    broken = true;
    pass();
    s.apply('DELETED', obj('bad', '3'));
    s.apply('ADDED', obj('bad', '4', { metadata: { namespace: 'a', name: 'bad', uid: 'other' } }));
    pass();
    s.close();
    broken = false;
    jest.advanceTimersByTime(10 * 60_000);
    expect(seen).toEqual(['a:1', 'z:1', 'bad:2', 'a:1', 'z:1', 'a:1', 'z:1']);
    expect(thrown).toHaveLength(3);
  });

  test('is offered the object again with backoff, as the store then holds it, until it takes it', () => {
    jest.useFakeTimers();
    let broken = true;
    const thrown: ListenerThrow[] = [];
    const s = new Store('/x', { onThrow: (t) => thrown.push(t) });
    const mine: string[] = [];
    s.subscribe(thrower(mine, () => broken));
    s.replace([obj('bad', '1')], '1');
    s.apply('MODIFIED', obj('bad', '2', { spec: { v: 2 } }));
    // the default backoff: 1 s, then 2 s, ... (the second throw was the watch event's)
    expect(thrown.map((t) => t.retryInMs)).toEqual([1000, 2000]);
    jest.advanceTimersByTime(1999);
    expect(thrown).toHaveLength(2);
    jest.advanceTimersByTime(1);
    expect(thrown.map((t) => [t.attempt, t.retryInMs, t.obj?.metadata?.resourceVersion])).toEqual([[1, 1000, '1'], [2, 2000, '2'], [3, 4000, '2']]);
    broken = false;
    jest.advanceTimersByTime(4000);
    expect(mine).toEqual(['added:bad:relist']);
    // taken: no more retries
    jest.advanceTimersByTime(10 * 60_000);
    expect(mine).toHaveLength(1);
    expect(thrown).toHaveLength(3);
  });

  test('a later event it takes ends the retries; a delete it threw on is offered again as that delete; close ends them all', () => {
    jest.useFakeTimers();
    let broken = true;
    const s = new Store('/x');
    const mine: string[] = [];
    s.subscribe(thrower(mine, () => broken));
    s.replace([obj('bad', '1')], '1');
    broken = false;
    s.apply('MODIFIED', obj('bad', '2'));
    jest.advanceTimersByTime(60_000);
    expect(mine).toEqual(['updated:bad:watch']);

    broken = true;
    s.apply('DELETED', obj('bad', '3'));
    broken = false;
    jest.advanceTimersByTime(1000);
    expect(mine).toEqual(['updated:bad:watch', 'deleted:bad:watch']);

    broken = true;
    s.apply('ADDED', obj('bad', '4'));
    s.close();
    broken = false;
    jest.advanceTimersByTime(60_000);
    expect(mine).toEqual(['updated:bad:watch', 'deleted:bad:watch']);
  });
});

/** A client whose lists answer at once and whose watches stay open until the cache stops. */
function fakeRest(items: Record<string, KubeObject[]> = {}) {
  const calls: Array<{ path: string; accept?: string }> = [];
  const rest = {
    request: async (_m: string, path: string, ro: { accept?: string } = {}) => {
      calls.push({ path, accept: ro.accept });
      return { status: 200, headers: {}, body: { items: items[path.replace(/\?.*$/, '')] ?? [], metadata: { resourceVersion: '1' } } };
    },
    watch: (_p: string, _on: unknown, signal: AbortSignal) => new Promise<void>((r) => signal.addEventListener('abort', () => r())),
  } as unknown as KubeRest;
  return { rest, calls };
}

describe('informer cache', () => {
  test('a listener subscribed in owning(...) is that controller\'s: its throw reaches the observer under that name, and is retried at the given backoff', async () => {
    const thrown: ListenerThrow[] = [];
    const { rest } = fakeRest({ [resourcePath(RESOURCES.jobs)]: [obj('bad', '1')] });
    const cache = new InformerCache(rest, pino({ level: 'silent' }), { onListenerThrow: (t) => thrown.push(t) }, (n) => 123 * n);
    // a route subscribes through watch, or on the store watch returned: both are its own
    cache.owning('job', () => cache.watch(RESOURCES.jobs, METADATA).subscribe({ onEvent: () => { throw new Error('boom'); } }));
    // outside owning: no owner
    cache.watch(RESOURCES.jobs, METADATA, { onEvent: () => { throw new Error('bang'); } });
    const abort = new AbortController();
    cache.start(abort.signal);
    while (!cache.store(RESOURCES.jobs)?.synced) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    await cache.stopped();
    expect(thrown.map((t) => [t.owner, t.obj?.metadata?.name, String(t.error), t.retryInMs])).toEqual([['job', 'bad', 'Error: boom', 123], ['', 'bad', 'Error: bang', 123]]);
  });

  test('one store per resource, holding the union of its consumers\' masks, without managedFields', () => {
    const cache = new InformerCache({} as KubeRest, pino({ level: 'silent' }));
    const a = cache.watch(RESOURCES.pods, { spec: { nodeName: true } });
    const b = cache.watch(RESOURCES.pods, { status: { phase: true } });
    expect(a).toBe(b);
    a.replace([{ metadata: { name: 'p', uid: 'u', managedFields: [{}] } as KubeObject['metadata'], spec: { nodeName: 'n', containers: [] }, status: { phase: 'Running', podIP: '1' } }]);
    expect(a.get('u')).toEqual({ metadata: { name: 'p', uid: 'u' }, spec: { nodeName: 'n' }, status: { phase: 'Running' } });
  });

  test('Secret values are kept only as digests of their bytes', () => {
    const cache = new InformerCache({} as KubeRest, pino({ level: 'silent' }));
    const s = cache.watch(RESOURCES.secrets, { data: true });
    s.replace([{ metadata: { name: 's', uid: 'u' }, data: { token: Buffer.from('secret').toString('base64'), empty: '' } } as KubeObject]);
    const data = (s.get('u') as { data: Record<string, string> }).data;
    expect(data).toEqual({ token: '2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b', empty: '' });
    expect(JSON.stringify(s.get('u'))).not.toContain(Buffer.from('secret').toString('base64'));
  });

  test('a resource only read as metadata is listed as PartialObjectMetadata; a late reader may not ask for more', async () => {
    const { rest, calls } = fakeRest();
    const cache = new InformerCache(rest, pino({ level: 'silent' }));
    cache.watch(RESOURCES.pods, { spec: true });
    cache.watch('/apis/coordination.k8s.io/v1/leases', METADATA);
    const abort = new AbortController();
    cache.start(abort.signal);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls.find((c) => c.path.startsWith('/api/v1/pods?'))?.accept).toBeUndefined();
    expect(calls.find((c) => c.path.startsWith('/apis/coordination.k8s.io/v1/leases?'))?.accept).toMatch(/PartialObjectMetadataList/);
    // the collector finding pods later shares the running reflector
    cache.watch(resourcePath(RESOURCES.pods), METADATA);
    expect(() => cache.watch(RESOURCES.pods, { status: true })).toThrow(/already watched/);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls.filter((c) => c.path.startsWith('/api/v1/pods?'))).toHaveLength(1);
    expect(Object.keys(cache.stats()).sort()).toEqual(['leases.coordination.k8s.io', 'pods']);
    abort.abort();
    await cache.stopped();
  });

  test('resource labels name the group as Kubernetes does', () => {
    expect(resourceLabel('/api/v1/pods')).toBe('pods');
    expect(resourceLabel('/apis/apps/v1/replicasets')).toBe('replicasets.apps');
    expect(resourceLabel('/apis/discovery.k8s.io/v1/endpointslices?x=1')).toBe('endpointslices.discovery.k8s.io');
  });
});

describe('store position', () => {
  test('a bookmark moves it on, never back', () => {
    const s = new Store('/x');
    s.replace([obj('a', '5')], '10');
    s.advance('30');
    expect(s.resourceVersion).toBe('30');
    s.advance('20');
    expect(s.resourceVersion).toBe('30');
  });
});
