import pino from 'pino';
import { InformerCache } from '../../activities/informers/cache';
import { LocalReads, WHOLE_OBJECT } from '../../activities/informers/local-reads';
import type { KubeObject } from '../../activities/kube/projections';
import type { KubeRest } from '../../activities/kube/rest';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import { updateGuarded } from '../../activities/kube/update';

const rs = (rv: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'ReplicaSet',
  metadata: { namespace: 'a', name: 'web', uid: 'u1', resourceVersion: rv, labels: { app: 'web' }, managedFields: [{ manager: 'x' }] } as KubeObject['metadata'],
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: {} },
  status: { replicas: 3 },
  ...extra,
});

/** A REST client that lists `items` for every path, never delivers a watch event, and records writes. */
function listingRest(items: KubeObject[]) {
  const calls: Array<{ method: string; path: string; body?: unknown }> = [];
  const rest = {
    request: async (method: string, path: string, ro: { body?: unknown } = {}) => {
      calls.push({ method, path, body: ro.body });
      if (method === 'GET') return { status: 200, headers: {}, body: path.includes('?') ? { items, metadata: { resourceVersion: '9' } } : items[0] };
      return { status: 200, headers: {}, body: { ...(ro.body as object), metadata: { ...(ro.body as KubeObject).metadata, resourceVersion: '10' } } };
    },
    watch: (_p: string, _on: unknown, signal: AbortSignal) => new Promise<void>((r) => signal.addEventListener('abort', () => r())),
  } as unknown as KubeRest;
  return { rest, calls };
}

async function runningCache(items: KubeObject[], mask = WHOLE_OBJECT) {
  const { rest } = listingRest(items);
  const cache = new InformerCache(rest, pino({ level: 'silent' }));
  cache.watch(RESOURCES.replicaSets, mask);
  cache.watch(RESOURCES.secrets, true);
  const abort = new AbortController();
  cache.start(abort.signal);
  await new Promise((r) => setTimeout(r, 20));
  return { cache, stop: async () => { abort.abort(); await cache.stopped(); } };
}

describe('local reads', () => {
  test('nothing before a cache is attached, and nothing after it is detached', async () => {
    const local = new LocalReads();
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)).toBeUndefined();
    const { cache, stop } = await runningCache([rs('5')]);
    local.attach(cache);
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)?.metadata?.resourceVersion).toBe('5');
    local.detach(cache);
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)).toBeUndefined();
    await stop();
  });

  test('a copy, without managedFields, that the reader may change freely', async () => {
    const local = new LocalReads();
    const { cache, stop } = await runningCache([rs('5')]);
    local.attach(cache);
    const a = local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)!;
    expect((a.metadata as Record<string, unknown>).managedFields).toBeUndefined();
    (a.spec as Record<string, unknown>).replicas = 99;
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)?.spec?.replicas).toBe(3);
    await stop();
  });

  test('only what the store keeps: a pruned store is no base for a whole-object write', async () => {
    const local = new LocalReads();
    const { cache, stop } = await runningCache([rs('5')], { metadata: true, spec: { replicas: true } });
    local.attach(cache);
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)).toBeUndefined();
    expect(local.get(RESOURCES.replicaSets, 'a', 'web', { spec: { replicas: true } })?.spec).toEqual({ replicas: 3 });
    await stop();
  });

  test('never a Secret: the cache holds digests in place of its values', async () => {
    const local = new LocalReads();
    const { cache, stop } = await runningCache([{ metadata: { namespace: 'a', name: 'web', uid: 'u1', resourceVersion: '5' }, data: { k: 'dg==' } } as KubeObject]);
    local.attach(cache);
    expect(local.get(RESOURCES.secrets, 'a', 'web', { data: true })).toBeUndefined();
    await stop();
  });

  test('at: only the guarded UID at exactly the guarded version', async () => {
    const heard: boolean[] = [];
    const local = new LocalReads((hit) => heard.push(hit));
    const { cache, stop } = await runningCache([rs('5')]);
    local.attach(cache);
    expect(local.at(RESOURCES.replicaSets, 'a', 'web', { uid: 'u1', resourceVersion: '5' })?.metadata?.resourceVersion).toBe('5');
    expect(local.at(RESOURCES.replicaSets, 'a', 'web', { uid: 'u1', resourceVersion: '6' })).toBeUndefined();
    expect(local.at(RESOURCES.replicaSets, 'a', 'web', { uid: 'other', resourceVersion: '5' })).toBeUndefined();
    expect(heard).toEqual([true, false, false]);
    await stop();
  });
});

describe('updateGuarded', () => {
  const path = resourcePath(RESOURCES.replicaSets, 'a', 'web');

  test('with a base: no read, the base with the change, sent at the guarded version', async () => {
    const { rest, calls } = listingRest([rs('7')]);
    await updateGuarded(rest, path, { uid: 'u1', resourceVersion: '5' }, (o) => { o.status = { replicas: 2 }; }, 'status', rs('5'));
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([`PUT ${path}/status`]);
    const body = calls[0].body as KubeObject;
    expect(body.metadata?.resourceVersion).toBe('5');
    expect(body.status).toEqual({ replicas: 2 });
    expect(body.spec).toEqual(rs('5').spec);
  });

  test('without one: a fresh read first, still sent at the guarded version', async () => {
    const { rest, calls } = listingRest([rs('7')]);
    await updateGuarded(rest, path, { uid: 'u1', resourceVersion: '5' }, (o) => { o.status = { replicas: 2 }; }, 'status');
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([`GET ${path}`, `PUT ${path}/status`]);
    expect((calls[1].body as KubeObject).metadata?.resourceVersion).toBe('5');
  });

  test('without a version to guard with: nothing sent, a 409 so the caller looks again', async () => {
    const { rest, calls } = listingRest([rs('7')]);
    await expect(updateGuarded(rest, path, { uid: 'u1', resourceVersion: '' }, () => undefined, 'status', rs('7'))).rejects.toMatchObject({ status: 409 });
    expect(calls).toEqual([]);
  });
});

test('an object from a list names its type, as a read of it would', async () => {
  const local = new LocalReads();
  const { cache, stop } = await runningCache([{ ...rs('5'), apiVersion: undefined, kind: undefined }]);
  local.attach(cache);
  const o = local.get(RESOURCES.replicaSets, 'a', 'web', WHOLE_OBJECT)!;
  expect([o.apiVersion, o.kind]).toEqual(['apps/v1', 'ReplicaSet']);
  await stop();
});
