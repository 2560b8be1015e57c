import { randomUUID } from 'node:crypto';
import { mergePatch } from '../../../bench/lib/workloads';
import type { ChaosContext } from '../types';
import { get, gone, list, type HostileItem, type Meta } from './item';

/**
 * Owner references the garbage collector must not be fooled by:
 * - two ConfigMaps owning each other, both blocking, one deleted in the foreground: upstream breaks
 *   the cycle (the dependent stops blocking its owner) and both go;
 * - three owning each other in a ring, one deleted in the foreground: the same, one step further;
 * - a ConfigMap that owns itself: its owner exists, so it stays; another, blocking, deleted in the
 *   foreground: it is its own blocking dependent, which upstream never takes up as a dependent
 *   because it is deleting already, so it keeps its foregroundDeletion finalizer;
 * - references to UIDs that never existed, under a name nothing has, and under the name of an
 *   object that does exist: the dependent goes;
 * - one dangling and one real owner: only the dangling reference is dropped;
 * - a reference to a kind no API serves: upstream cannot look the owner up, keeps the dependent,
 *   and tries again with backoff (the collector must neither delete it nor spin on it).
 */
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const NAMES = {
  anchor: 'owner-anchor',
  cycleA: 'owner-cycle-a', cycleB: 'owner-cycle-b',
  ringA: 'owner-ring-a', ringB: 'owner-ring-b', ringC: 'owner-ring-c',
  self: 'owner-self', selfDeleting: 'owner-self-deleting',
  ghost: 'owner-dangling-ghost', wrongUid: 'owner-dangling-wrong-uid', mixed: 'owner-dangling-mixed', unknownKind: 'owner-unknown-kind',
};
const ALL = Object.values(NAMES);

interface ConfigMap { metadata: Meta }
const ref = (name: string, uid: string, block = false) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...(block ? { blockOwnerDeletion: true } : {}) });
const make = async (ctx: ChaosContext, name: string, ownerReferences?: unknown[]) =>
  (await ctx.rest.request<ConfigMap>('POST', CM(ctx.ns), { body: { metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) }, data: { k: 'v' } } })).body.metadata.uid;

async function present(ctx: ChaosContext): Promise<Map<string, ConfigMap>> {
  const cms = await list<ConfigMap>(ctx, CM(ctx.ns));
  return new Map(cms.filter((c) => ALL.includes(c.metadata.name)).map((c) => [c.metadata.name, c]));
}

export const ownerReferences: HostileItem = {
  slug: 'owner-references',
  what: 'ownership cycles of two and three deleted in the foreground; objects that own themselves; owners that never existed; an owner of a kind no API serves',
  controllers: ['garbagecollector'],

  async act(ctx) {
    const anchor = await make(ctx, NAMES.anchor);
    const a = await make(ctx, NAMES.cycleA);
    const b = await make(ctx, NAMES.cycleB, [ref(NAMES.cycleA, a, true)]);
    await mergePatch(ctx.rest, `${CM(ctx.ns)}/${NAMES.cycleA}`, { metadata: { ownerReferences: [ref(NAMES.cycleB, b, true)] } });
    await ctx.rest.request('DELETE', `${CM(ctx.ns)}/${NAMES.cycleA}`, { body: { propagationPolicy: 'Foreground' } });
    // a ring: b owned by a, c by b, then a by c
    const ra = await make(ctx, NAMES.ringA);
    const rb = await make(ctx, NAMES.ringB, [ref(NAMES.ringA, ra, true)]);
    const rc = await make(ctx, NAMES.ringC, [ref(NAMES.ringB, rb, true)]);
    await mergePatch(ctx.rest, `${CM(ctx.ns)}/${NAMES.ringA}`, { metadata: { ownerReferences: [ref(NAMES.ringC, rc, true)] } });
    await ctx.rest.request('DELETE', `${CM(ctx.ns)}/${NAMES.ringA}`, { body: { propagationPolicy: 'Foreground' } });
    for (const name of [NAMES.self, NAMES.selfDeleting]) {
      const uid = await make(ctx, name);
      await mergePatch(ctx.rest, `${CM(ctx.ns)}/${name}`, { metadata: { ownerReferences: [ref(name, uid, true)] } });
    }
    await ctx.rest.request('DELETE', `${CM(ctx.ns)}/${NAMES.selfDeleting}`, { body: { propagationPolicy: 'Foreground' } });
    await make(ctx, NAMES.ghost, [ref('owner-never-was', randomUUID())]);
    await make(ctx, NAMES.wrongUid, [ref(NAMES.anchor, randomUUID())]);
    await make(ctx, NAMES.mixed, [ref('owner-never-was', randomUUID()), ref(NAMES.anchor, anchor)]);
    await make(ctx, NAMES.unknownKind, [{ apiVersion: 'hostile.example.com/v1', kind: 'Phantom', name: 'phantom', uid: randomUUID() }]);
  },

  async settled(ctx) {
    const cms = await present(ctx);
    const mixedOwners = cms.get(NAMES.mixed)?.metadata.ownerReferences ?? [];
    const gone = [NAMES.cycleA, NAMES.cycleB, NAMES.ringA, NAMES.ringB, NAMES.ringC, NAMES.ghost, NAMES.wrongUid];
    return gone.every((name) => !cms.has(name)) && mixedOwners.length === 1 && cms.has(NAMES.unknownKind)
      && cms.has(NAMES.self) && cms.get(NAMES.selfDeleting)?.metadata.deletionTimestamp !== undefined;
  },

  async view(ctx) {
    const cms = await present(ctx);
    return ALL.map((name) => {
      const c = cms.get(name);
      return {
        name, exists: c !== undefined, deleting: c?.metadata.deletionTimestamp !== undefined, finalizers: c?.metadata.finalizers,
        owners: c?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}${r.blockOwnerDeletion ? ' (blocking)' : ''}`).sort(),
      };
    });
  },

  async cleanup(ctx) {
    // without a collector running, finalizers left by a stuck foreground deletion are taken off by hand
    for (const name of [NAMES.cycleA, NAMES.cycleB, NAMES.ringA, NAMES.ringB, NAMES.ringC, NAMES.selfDeleting]) {
      if (await get(ctx, `${CM(ctx.ns)}/${name}`)) await mergePatch(ctx.rest, `${CM(ctx.ns)}/${name}`, { metadata: { finalizers: null } }).catch(gone);
    }
  },
};
