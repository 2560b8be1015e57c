import type { Logger } from 'pino';
import type { GcAction, ObjectMetaView, ObjectRef, OwnerLookup } from '../../workflows/gc/types';
import { RestMapper, collectionPath } from '../kube/discovery';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { patchOwnerReferences, removeOwnerReference } from '../kube/ownership';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { heartbeat } from '../kube/heartbeat';

export interface GcObserveRequest {
  ref: ObjectRef;
  /** objects that name it as an owner, as the watch's ownership graph knows them */
  dependents: ObjectRef[];
  /** owners the graph saw in another namespace: absent here, and worth a warning */
  ownersElsewhere?: ObjectRef[];
}

export interface GcObservation {
  /** absent when the object is gone (or the name holds another UID) */
  object?: ObjectMetaView;
  lookups: OwnerLookup[];
  /** the dependents that still exist, read fresh */
  dependents: ObjectMetaView[];
}

export type GcApplyResult = { ok: true } | { ok: false; reason: string };

/** One reconcile's actions, applied in order; `reason` sums them up for `why` (each action keeps its own). */
export interface GcApplyBatch {
  actions: GcAction[];
  reason: string;
}

export interface GcActivityDeps {
  rest: KubeRest;
  recordEvent: RecordEvent;
  logger: Logger;
}


function metaView(ref: Pick<ObjectRef, 'apiVersion' | 'kind'>, o: KubeObject & { metadata?: { finalizers?: string[] } }): ObjectMetaView {
  const m = o.metadata ?? {};
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    ...(m.namespace ? { namespace: m.namespace } : {}),
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    finalizers: m.finalizers ?? [],
    ownerReferences: m.ownerReferences ?? [],
  };
}

/** The garbage collector's I/O: reads by UID against the API (never a cache), guarded writes. */
export function createGcActivities(deps: GcActivityDeps) {
  const { rest } = deps;
  const mapper = new RestMapper(rest);

  async function pathOf(ref: ObjectRef): Promise<string | undefined> {
    const info = await mapper.lookup(ref.apiVersion, ref.kind);
    return info ? `${collectionPath(info, ref.namespace)}/${encodeURIComponent(ref.name)}` : undefined;
  }

  /** The object behind `ref` if it still exists with the same UID. */
  async function read(ref: ObjectRef): Promise<ObjectMetaView | undefined> {
    const path = await pathOf(ref);
    if (!path) return undefined;
    try {
      const v = metaView(ref, (await rest.request<KubeObject>('GET', path)).body);
      return v.uid === ref.uid ? v : undefined;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  function applyOne(action: GcAction): Promise<GcApplyResult> {
    return apiCall(async () => {
      const log = deps.logger.child({ controller: 'garbagecollector' });
      const done = (ok: boolean, reason = '') => {
        log.info({ action: action.type, reason: 'reason' in action ? action.reason : undefined, ok, failure: reason || undefined,
          key: 'target' in action ? `${action.target.namespace ?? ''}/${action.target.name}` : `${action.owner.namespace ?? ''}/${action.owner.name}` }, 'garbage collector write');
        return ok ? { ok: true as const } : { ok: false as const, reason };
      };
      // a write guarded by UID or resourceVersion: gone already is done, a 409 means look again
      const guarded = async (write: () => Promise<unknown>) => {
        try {
          await write();
        } catch (e) {
          if (isStatus(e, 404)) return done(true);
          if (isStatus(e, 409)) return done(false, 'changed since it was read');
          throw e;
        }
        return done(true);
      };
      switch (action.type) {
        case 'deleteObject': {
          const path = await pathOf(action.target);
          if (!path) return done(false, 'unknown kind');
          return guarded(() => rest.request('DELETE', path, { body: {
            preconditions: { uid: action.target.uid, ...(action.resourceVersion ? { resourceVersion: action.resourceVersion } : {}) },
            propagationPolicy: action.propagation,
          }, idempotent: true }));
        }
        case 'removeOwnerReferences':
        case 'unblockOwnerReferences': {
          const path = await pathOf(action.target);
          if (!path) return done(false, 'unknown kind');
          const uids = new Set(action.ownerUids);
          const r = await patchOwnerReferences(rest, path, action.target.uid, (refs) => {
            if (!refs.some((x) => uids.has(x.uid))) return undefined;
            return action.type === 'removeOwnerReferences'
              ? refs.filter((x) => !uids.has(x.uid))
              : refs.map((x) => (uids.has(x.uid) ? { ...x, blockOwnerDeletion: false } : x));
          });
          return done('patched' in r, 'patched' in r ? '' : 'changed since it was read');
        }
        case 'orphanDependents': {
          // every dependent must be patched before the orphan finalizer may go: a dependent left
          // pointing at its deleted owner would then be collected as dangling
          const lost: string[] = [];
          for (const d of action.dependents) {
            const path = await pathOf(d);
            // a kind the API no longer serves has no objects left to patch (upstream's patch gets a 404)
            if (!path) continue;
            if ((await removeOwnerReference(rest, path, d.uid, action.owner.uid)) === 'conflict') lost.push(`${d.kind} ${d.name}`);
            heartbeat();
          }
          return done(lost.length === 0, lost.length ? `could not remove the owner reference from ${lost.join(', ')}` : '');
        }
        case 'removeFinalizer': {
          const path = await pathOf(action.target);
          if (!path) return done(false, 'unknown kind');
          return guarded(async () => {
            const cur = (await rest.request<KubeObject & { metadata?: { finalizers?: string[] } }>('GET', path)).body.metadata;
            if (cur?.uid !== action.target.uid || !(cur.finalizers ?? []).includes(action.finalizer)) return;
            await rest.request('PATCH', path, {
              body: { metadata: { uid: cur.uid, resourceVersion: cur.resourceVersion, finalizers: (cur.finalizers ?? []).filter((f) => f !== action.finalizer) } },
              contentType: 'application/merge-patch+json',
            });
          });
        }
        case 'warningEvent':
          deps.recordEvent('garbage-collector-controller', {
            apiVersion: action.target.apiVersion, kind: action.target.kind, namespace: action.target.namespace ?? 'default', name: action.target.name, uid: action.target.uid,
          }, 'Warning', action.reason, action.message);
          return done(true);
        case 'evaluateDependent':
          // the router sends every dependent of a foreground-deleting owner to its own workflow;
          // no write here, so no log line either
          return { ok: true };
      }
    });
  }

  return {
    async gcObserve(req: GcObserveRequest): Promise<GcObservation> {
      return apiCall(async () => {
        const object = await read(req.ref);
        if (!object) return { lookups: [], dependents: [] };
        const lookups: OwnerLookup[] = [];
        for (const ref of object.ownerReferences) {
          const info = await mapper.lookup(ref.apiVersion, ref.kind);
          if (!info) {
            lookups.push({ ref, state: 'unresolvable-kind' });
            continue;
          }
          heartbeat();
          const owner = await read({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, ...(info.namespaced && object.namespace ? { namespace: object.namespace } : {}) });
          const elsewhere = req.ownersElsewhere?.find((o) => o.uid === ref.uid);
          lookups.push(owner ? { ref, state: 'exists', namespaced: info.namespaced, owner }
            : { ref, state: 'absent', namespaced: info.namespaced, ...(elsewhere ? { observedElsewhere: elsewhere } : {}) });
        }
        // an owner of hundreds: read them 20 at a time, heartbeating so a dead worker is noticed
        const dependents: ObjectMetaView[] = [];
        for (let i = 0; i < req.dependents.length; i += 20) {
          const batch = await Promise.all(req.dependents.slice(i, i + 20).map(read));
          for (const v of batch) if (v) dependents.push(v);
          heartbeat();
        }
        return { object, lookups, dependents };
      });
    },

    gcApply: (action: GcAction): Promise<GcApplyResult> => applyOne(action),

    /**
     * A reconcile's actions in order, in one activity: an owner deleting 200 dependents in the
     * foreground decides 200 of them at once, and one activity each cost a workflow task's round
     * trip apiece. Stops at the first that finds its object changed, as one by one did.
     */
    async gcApplyAll(batch: GcApplyBatch): Promise<GcApplyResult> {
      for (const action of batch.actions) {
        const r = await applyOne(action);
        heartbeat();
        if (!r.ok) return r;
      }
      return { ok: true };
    },
  };
}

export type GcActivities = ReturnType<typeof createGcActivities>;
