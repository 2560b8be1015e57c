import { plainHttpAccess } from '../support/plain-http-access';
import { EventEmitter, getEventListeners } from 'node:events';
import { onAbort, sleep } from '../../activities/kube/abort';
import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';

const listeners = (s: AbortSignal) => getEventListeners(s, 'abort').length;

/** Collects MaxListenersExceededWarning (Node emits it when the 11th listener joins one signal). */
function watchWarnings() {
  const seen: string[] = [];
  const on = (w: Error) => { if (w.name === 'MaxListenersExceededWarning') seen.push(w.message); };
  process.on('warning', on);
  return { seen, stop: () => process.off('warning', on) };
}

const ticks = async (n = 5) => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };

describe('onAbort', () => {
  test('any number of waiters share one listener, gone with the last', () => {
    const ac = new AbortController();
    const offs = Array.from({ length: 50 }, () => onAbort(ac.signal, () => undefined));
    expect(listeners(ac.signal)).toBe(1);
    offs.slice(1).forEach((off) => off());
    expect(listeners(ac.signal)).toBe(1);
    offs[0]();
    offs[0](); // twice is harmless
    expect(listeners(ac.signal)).toBe(0);
    onAbort(ac.signal, () => undefined);
    expect(listeners(ac.signal)).toBe(1);
  });

  test('an abort calls every waiter still subscribed, once', () => {
    const ac = new AbortController();
    const calls: number[] = [];
    const offs = [0, 1, 2].map((i) => onAbort(ac.signal, () => calls.push(i)));
    offs[1]();
    ac.abort();
    ac.abort();
    expect(calls).toEqual([0, 2]);
    expect(listeners(ac.signal)).toBe(0);
    offs[0](); // after the abort: nothing to remove, no error
  });

  test('an already aborted signal calls at once and adds nothing', () => {
    const ac = new AbortController();
    ac.abort();
    let called = 0;
    onAbort(ac.signal, () => called++)();
    expect(called).toBe(1);
    expect(listeners(ac.signal)).toBe(0);
  });
});

describe("the reflector's back-off sleep", () => {
  test('thirty reflectors backing off on one signal: one listener, no warning, all woken by the abort', async () => {
    const w = watchWarnings();
    try {
      const ac = new AbortController();
      const sleeps = Array.from({ length: 30 }, () => sleep(60_000, ac.signal));
      expect(listeners(ac.signal)).toBe(1);
      ac.abort();
      await Promise.all(sleeps);
      await ticks();
      expect(w.seen).toEqual([]);
    } finally {
      w.stop();
    }
  });

  test('a sleep that runs out leaves no listener behind', async () => {
    const ac = new AbortController();
    await Promise.all([sleep(5, ac.signal), sleep(10, ac.signal)]);
    expect(listeners(ac.signal)).toBe(0);
  });
});

/** node:http's request faked: every watch gets a 200 that stays open until destroyed or ended. */
function fakeWatchServer() {
  const responses: EventEmitter[] = [];
  const httpModule = require('node:http') as typeof import('node:http');
  const spy = jest.spyOn(httpModule, 'request').mockImplementation(((_url: URL, opts: { signal?: AbortSignal }, cb: (res: unknown) => void) => {
    if (opts.signal) throw new Error('watch passed its signal to http.request: one abort listener per watch');
    const res = Object.assign(new EventEmitter(), { statusCode: 200, headers: {}, setEncoding: () => res });
    const req = Object.assign(new EventEmitter(), {
      destroyed: false,
      write: () => true,
      destroy: () => { if (!req.destroyed) { req.destroyed = true; res.emit('close'); } return req; },
      end: () => { responses.push(res); cb(res); },
    });
    return req;
  }) as unknown as typeof httpModule.request);
  return { responses, restore: () => spy.mockRestore() };
}

describe('KubeRest.watch on the informers\' one signal', () => {
  test('twenty-five open watches: one abort listener, no MaxListenersExceededWarning; the abort ends them all', async () => {
    const server = fakeWatchServer();
    const w = watchWarnings();
    try {
      const rest = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
      const ac = new AbortController();
      const events: string[] = [];
      const watches = Array.from({ length: 25 }, (_, i) =>
        rest.watch(`/api/v1/r${i}?watch=1`, (e) => events.push(e.type), ac.signal));
      while (server.responses.length < 25) await ticks(1);
      server.responses[0].emit('data', '{"type":"ADDED","object":{}}\n');
      expect(events).toEqual(['ADDED']);
      expect(listeners(ac.signal)).toBe(1);
      ac.abort();
      await expect(Promise.all(watches)).resolves.toHaveLength(25);
      expect(listeners(ac.signal)).toBe(0);
      await ticks();
      expect(w.seen).toEqual([]);
    } finally {
      w.stop();
      server.restore();
    }
  });

  test('a watch the server ends unsubscribes; the others keep the one listener', async () => {
    const server = fakeWatchServer();
    try {
      const rest = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
      const ac = new AbortController();
      const a = rest.watch('/api/v1/pods?watch=1', () => undefined, ac.signal);
      const b = rest.watch('/api/v1/nodes?watch=1', () => undefined, ac.signal);
      while (server.responses.length < 2) await ticks(1);
      server.responses[0].emit('end');
      await a;
      expect(listeners(ac.signal)).toBe(1);
      server.responses[1].emit('end');
      await b;
      expect(listeners(ac.signal)).toBe(0);
    } finally {
      server.restore();
    }
  });

  test('an aborted signal makes no request at all', async () => {
    const server = fakeWatchServer();
    try {
      const ac = new AbortController();
      ac.abort();
      await new KubeRest(plainHttpAccess(), new TokenBucket(0, 0)).watch('/api/v1/pods?watch=1', () => undefined, ac.signal);
      expect(server.responses).toHaveLength(0);
    } finally {
      server.restore();
    }
  });
});
