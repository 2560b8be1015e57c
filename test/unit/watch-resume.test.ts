import type { Client } from '@temporalio/client';
import pino from 'pino';
import { InformerCache } from '../../activities/informers/cache';
import { PositionLog, positionsFromHeartbeat } from '../../activities/informers/positions';
import { Signaller } from '../../activities/informers/signaller';
import type { KubeObject } from '../../activities/kube/projections';
import { ApiError, type KubeRest } from '../../activities/kube/rest';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';

const quiet = pino({ level: 'silent' });
const target = (name: string) => ({ controller: 'replicaset', workflow: replicaOwnerWorkflow, kind: 'ReplicaSet', namespace: 'ns', name, uid: `u-${name}`, args: { controller: 'replicaset' as const, kind: 'ReplicaSet' as const, namespace: 'ns', name, uid: `u-${name}` } });
const keepLater = <E>(_a: E, b: E) => b;

/** A Temporal client whose sends wait until the test lets them go (or fail them). */
function gatedClient() {
  const sent: string[] = [];
  const gates: Array<{ open: () => void; fail: () => void }> = [];
  const client = { workflow: { signalWithStart: (_t: unknown, o: { workflowId: string }) => new Promise<void>((resolve, reject) => {
    gates.push({ open: () => { sent.push(o.workflowId); resolve(); }, fail: () => reject(new Error('unavailable')) });
  }) } } as unknown as Client;
  return { client, sent, gates };
}

describe('positions in the heartbeat', () => {
  test('only numeric resourceVersions by path are taken; anything else means a fresh list', () => {
    expect(positionsFromHeartbeat({ sizes: {}, positions: { '/api/v1/pods': '120', '/x': 7, '/y': 'abc' } })).toEqual({ '/api/v1/pods': '120' });
    expect(positionsFromHeartbeat({ pods: 3 })).toBeUndefined(); // a build before positions heartbeated its sizes alone
    expect(positionsFromHeartbeat(undefined)).toBeUndefined();
    expect(positionsFromHeartbeat({ positions: {} })).toBeUndefined();
  });

  test('a snapshot becomes safe once every signal queued before it has gone out; the newest such wins', () => {
    const log = new PositionLog();
    expect(log.settle(0)).toBeUndefined();
    log.record(3, { p: '10' });
    log.record(5, { p: '20' });
    log.record(9, { p: '30' });
    expect(log.settle(2)).toBeUndefined();
    expect(log.settle(6)).toEqual({ p: '20' });
    // settled snapshots are gone; a later settle short of the next keeps the last safe one
    expect(log.settle(8)).toEqual({ p: '20' });
    expect(log.settle(9)).toEqual({ p: '30' });
  });

  test('a predecessor\'s positions hold until this holder has a safe snapshot of its own', () => {
    const log = new PositionLog({ p: '7' });
    log.record(4, { p: '50' });
    expect(log.settle(3)).toEqual({ p: '7' });
    expect(log.settle(4)).toEqual({ p: '50' });
  });

  test('a log that cannot settle (signals failing) keeps a bounded number of snapshots', () => {
    const log = new PositionLog();
    for (let i = 1; i <= 1000; i++) log.record(i, { p: String(i) });
    // the oldest were dropped: the first safe one is newer than asked, never one not yet sent
    expect(log.settle(500)).toBeUndefined();
    expect(log.settle(1000)).toEqual({ p: '1000' });
  });
});

describe('signaller bookkeeping for positions', () => {
  test('sentThrough stays below the oldest event pending or in flight, and a failed send keeps it there', async () => {
    const { client, sent, gates } = gatedClient();
    const s = new Signaller(client, 'q', quiet);
    expect(s.sentThrough()).toBe(0);
    s.queue(target('a'), { n: 1 }, keepLater);
    s.queue(target('b'), { n: 2 }, keepLater);
    s.queue(target('a'), { n: 3 }, keepLater); // merged into a's pending signal, which still dates from event 1
    expect(s.queued).toBe(3);
    expect(s.sentThrough()).toBe(0);
    const flushing = s.flush();
    await new Promise((r) => setImmediate(r));
    expect(gates).toHaveLength(2);
    expect(s.sentThrough()).toBe(0); // both in flight
    gates[1].open(); // b (event 2) out; a (events 1 and 3) still in flight
    await new Promise((r) => setImmediate(r));
    expect(s.sentThrough()).toBe(0);
    gates[0].fail();
    await flushing;
    expect(sent).toEqual(['replicaset/ns/b']);
    expect(s.sentThrough()).toBe(0); // a is pending again, still from event 1
    s.queue(target('c'), {}, keepLater);
    await new Promise((r) => setTimeout(r, 600)); // past a's hot-key interval
    const again = s.flush();
    await new Promise((r) => setImmediate(r));
    for (const g of gates.slice(2)) g.open();
    await again;
    expect(sent.sort()).toEqual(['replicaset/ns/a', 'replicaset/ns/b', 'replicaset/ns/c']);
    expect(s.sentThrough()).toBe(4);
  });

  test('events queued while muted are dropped and counted, and do not count as queued', () => {
    const { client } = gatedClient();
    const s = new Signaller(client, 'q', quiet);
    const dropped = s.muted(() => {
      s.queue(target('a'), {}, keepLater);
      s.queue(target('b'), {}, keepLater);
    });
    expect(dropped).toBe(2);
    expect(s.size).toBe(0);
    expect(s.queued).toBe(0);
    s.queue(target('a'), {}, keepLater);
    expect(s.size).toBe(1);
  });

  test('events queued inside unmuted go out even within muted, and muting resumes after', () => {
    const { client } = gatedClient();
    const s = new Signaller(client, 'q', quiet);
    const dropped = s.muted(() => {
      s.queue(target('a'), {}, keepLater);
      s.unmuted(() => s.queue(target('b'), {}, keepLater));
      s.queue(target('c'), {}, keepLater);
    });
    expect(dropped).toBe(2);
    expect(s.size).toBe(1);
    expect(s.queued).toBe(1);
  });
});

describe('the cache resuming at the last holder\'s positions', () => {
  const PODS = resourcePath(RESOURCES.pods);
  const RS = resourcePath(RESOURCES.replicaSets);
  const pod = (name: string, rv: string): KubeObject => ({ metadata: { namespace: 'ns', name, uid: `u-${name}`, resourceVersion: rv } });

  /** Lists answer from `items`; a list at an exact version of `expired` answers 410; watches replay `events` then stay open. */
  function fakeRest(items: Record<string, KubeObject[]>, opts: { expired?: string[]; events?: Record<string, Array<{ type: string; object: KubeObject }>>; listDelayMs?: Record<string, number> } = {}) {
    const calls: string[] = [];
    const rest = {
      request: async (_m: string, path: string) => {
        calls.push(path);
        const base = path.replace(/\?.*$/, '');
        await new Promise((r) => setTimeout(r, opts.listDelayMs?.[base] ?? 0));
        const exact = /resourceVersion=(\d+)&resourceVersionMatch=Exact/.exec(path)?.[1];
        if (exact && opts.expired?.includes(base)) throw new ApiError(410, 'Expired', 'too old resource version');
        return { status: 200, headers: {}, body: { items: items[base] ?? [], metadata: { resourceVersion: exact ?? '100' } } };
      },
      watch: async (path: string, on: (e: { type: string; object: unknown }) => void, signal: AbortSignal) => {
        calls.push(path);
        for (const e of opts.events?.[path.replace(/\?.*$/, '')] ?? []) on(e);
        await new Promise<void>((r) => signal.addEventListener('abort', () => r()));
      },
    } as unknown as KubeRest;
    return { rest, calls };
  }

  async function run(rest: KubeRest, positions: Record<string, string> | undefined, waitMs = 30) {
    const { client } = gatedClient();
    const signaller = new Signaller(client, 'q', quiet);
    const cache = new InformerCache(rest, quiet);
    const events: string[] = [];
    for (const path of [PODS, RS]) {
      cache.watch(path, { metadata: true }, {
        onEvent: (e) => {
          const o = e.type === 'deleted' ? e.old : e.obj;
          events.push(`${e.type}:${o.metadata?.name}:${e.source}${path === PODS && e.source === 'watch' ? `:owners-listed=${cache.store(RS)?.synced}` : ''}`);
          signaller.queue(target(o.metadata?.name ?? ''), e.type, keepLater);
        },
      });
    }
    const abort = new AbortController();
    expect(cache.positions()).toBeUndefined();
    cache.start(abort.signal, positions && { positions, quietly: (fn) => signaller.muted(fn) });
    await new Promise((r) => setTimeout(r, waitMs));
    const stop = async () => { abort.abort(); await cache.stopped(); };
    return { signaller, cache, events, stop };
  }

  test('a resumed store lists at its position with signals muted; the watch from there signals the changes since', async () => {
    const { rest, calls } = fakeRest({ [PODS]: [pod('p1', '40'), pod('p2', '41')], [RS]: [pod('r1', '30')] }, {
      events: { [PODS]: [{ type: 'DELETED', object: pod('p2', '55') }] },
    });
    const { signaller, cache, events, stop } = await run(rest, { [PODS]: '50' });
    // pods resumed: an exact list at 50, then a watch from 50; replicasets had no position: an ordinary list
    expect(calls.find((c) => c.startsWith(`${PODS}?limit`))).toContain('resourceVersion=50&resourceVersionMatch=Exact');
    expect(calls.find((c) => c.startsWith(`${PODS}?watch`))).toContain('resourceVersion=50');
    expect(calls.find((c) => c.startsWith(`${RS}?limit`))).not.toContain('resourceVersionMatch');
    // the routes saw every object (their state is rebuilt) ...
    // (replicasets have no position: their list is signalled, so the pods' watch need not wait for it)
    expect(events.map((e) => e.replace(/:owners-listed=.*/, '')).sort()).toEqual(['added:p1:list', 'added:p2:list', 'added:r1:list', 'deleted:p2:watch']);
    // ... but only the fresh list's object and the change since went out as signals
    expect(signaller.skipped).toBe(2);
    expect(signaller.queued).toBe(2);
    expect(cache.positions()).toEqual({ [PODS]: '55', [RS]: '100' });
    await stop();
  });

  test('a position the API server has compacted away gives way to a fresh list, signalled as ever', async () => {
    const { rest, calls } = fakeRest({ [PODS]: [pod('p1', '40')], [RS]: [] }, { expired: [PODS] });
    const { signaller, events, stop } = await run(rest, { [PODS]: '5', [RS]: '6' });
    const podLists = calls.filter((c) => c.startsWith(`${PODS}?limit`));
    expect(podLists).toHaveLength(2);
    expect(podLists[1]).not.toContain('resourceVersionMatch');
    expect(events).toEqual(['added:p1:list']);
    expect(signaller.skipped).toBe(0);
    expect(signaller.queued).toBe(1);
    await stop();
  });

  test('no resumed watch reaches the routes before every resumed store has listed', async () => {
    // the pods' changes since the position would otherwise reach a route whose owners' store is
    // still empty, and be dropped, with the owners' muted list not covering them
    const { rest } = fakeRest({ [PODS]: [pod('p1', '40'), pod('p2', '41')], [RS]: [pod('r1', '30')] }, {
      events: { [PODS]: [{ type: 'DELETED', object: pod('p2', '55') }] },
      listDelayMs: { [RS]: 150 },
    });
    const { events, stop } = await run(rest, { [PODS]: '50', [RS]: '50' }, 300);
    expect(events).toEqual(['added:p1:list', 'added:p2:list', 'added:r1:list', 'deleted:p2:watch:owners-listed=true']);
    await stop();
  });
});
