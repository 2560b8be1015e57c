import pino from 'pino';
import { InformerCache } from '../../activities/informers/cache';
import type { InformerInput, RouteFamily } from '../../activities/informers/family';
import type { Signaller, Target } from '../../activities/informers/signaller';
import type { KubeObject } from '../../activities/kube/projections';
import type { KubeRest } from '../../activities/kube/rest';
import { discoverResources } from '../../activities/kube/discovery';
import { resourcePath, type ResourceType } from '../../activities/kube/resources';
import type { RouteFactory } from '../../workers/descriptor';

/** One resource as an APIResourceList names it. */
export interface ApiResource { name: string; kind: string; namespaced: boolean; verbs: string[] }

/** A client whose only answers are discovery's: `/apis` and one APIResourceList per group-version given. */
export function fakeDiscovery(groups: Record<string, ApiResource[]>): KubeRest {
  const request = async (_method: string, path: string) => {
    if (path === '/apis') {
      return { body: { groups: Object.keys(groups).filter((gv) => gv !== 'v1').map((gv) => ({ preferredVersion: { groupVersion: gv } })) } };
    }
    const gv = path === '/api/v1' ? 'v1' : path.replace(/^\/apis\//, '');
    if (!groups[gv]) throw new Error(`404 ${path}`);
    return { body: { groupVersion: gv, resources: groups[gv] } };
  };
  return { request } as unknown as KubeRest;
}

export interface Sent<E = unknown> {
  target: Target;
  /** `<namespace>/<name>` */
  id: string;
  event: E;
  urgent: boolean;
}

/**
 * A route factory on a real shared cache whose stores the test feeds by hand, as a reflector would
 * (lists and watch events, pruned by the registered field masks), with every queued signal kept
 * in `sent`. Nothing here talks to an API server: the cache is never started.
 */
export function routeHarness<E = unknown>(factory: RouteFactory, input: InformerInput, opts: { rest?: KubeRest; rootCa?: string } = {}) {
  const sent: Array<Sent<E>> = [];
  // muting as the real Signaller does it (a resumed list's reactions are dropped), so a route's
  // behaviour across a resumed watch can be tested
  let muting = 0;
  const around = (level: number, fn: () => void) => {
    const before = muting;
    muting = level;
    try { fn(); } finally { muting = before; }
  };
  const signaller = {
    queue: (target: Target, event: E, _merge: unknown, urgent = false) => {
      if (!muting) sent.push({ target, id: `${target.namespace}/${target.name}`, event, urgent });
    },
    muted: (fn: () => void) => around(muting + 1, fn),
    unmuted: (fn: () => void) => around(0, fn),
  } as unknown as Signaller;
  const cache = new InformerCache(opts.rest ?? ({} as KubeRest), pino({ level: 'silent' }));
  const family: RouteFamily | undefined = factory({ input, signaller, cache, rootCa: opts.rootCa, baseTaskQueue: 'test-queue' });
  /** one discovery round, as the informer runs it: what `opts.rest` serves, handed to the family */
  const discover = async () => family!.discover!(await discoverResources(opts.rest!));
  /** what a reflector of that resource (or collection path) would tell the store */
  const h = (resource: ResourceType | string) => {
    const path = typeof resource === 'string' ? resource : resourcePath(resource);
    const store = () => {
      const s = cache.store(path);
      if (!s) throw new Error(`no route watches ${path}`);
      return s;
    };
    return {
      relisted: (objects: KubeObject[], resourceVersion?: string) => store().replace(objects, resourceVersion),
      /** a list at the last holder's position, taken in with signals muted (see WatchPositions) */
      resumed: (objects: KubeObject[], resourceVersion: string) => signaller.muted(() => store().replace(objects, resourceVersion)),
      event: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => store().apply(type, obj),
    };
  };
  return { sent, cache, family, h, discover };
}
