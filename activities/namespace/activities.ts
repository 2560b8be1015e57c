import type { Logger } from 'pino';
import { maxPodGraceSeconds, resourceKey, withoutOurFinalizer } from '../../workflows/namespace/logic';
import {
  NAMESPACE_FINALIZER,
  type ContentObservation,
  type DeleteContentRequest,
  type FailedGroupVersion,
  type FinalizeRequest,
  type FinalizeResult,
  type NamespaceCondition,
  type NamespaceStatusUpdate,
  type NamespaceView,
  type NamespacedDiscovery,
  type NamespacedResource,
  type StatusUpdateResult,
  type VerifyContentRequest,
  type VerifyContentResult,
} from '../../workflows/namespace/types';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { updateGuarded } from '../kube/update';
import { METADATA_ONLY } from '../informers/reflector';
import { heartbeat } from '../kube/heartbeat';

export interface NamespaceActivityDeps {
  rest: KubeRest;
  logger: Logger;
  /** upstream's namespace controller records no events; kept so the factory matches its siblings */
  recordEvent: RecordEvent;
}

type NamespaceObject = KubeObject & {
  metadata?: KubeObject['metadata'] & { finalizers?: string[] };
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: NamespaceCondition[] };
};

type MetaItem = { metadata?: { name?: string; uid?: string; finalizers?: string[] } };
type MetaList = { items?: MetaItem[] | null; metadata?: { continue?: string; remainingItemCount?: number } };

/** Aggregated discovery (one request for all groups, with per-version freshness). */
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

const PAGE = 500;
/** item deletes in flight at once when a resource has no deletecollection */
const DELETE_PARALLELISM = 10;
/** a deletecollection over thousands of objects can outlast the usual request timeout */
const COLLECTION_TIMEOUT_MS = 5 * 60_000;
const FINALIZE_ATTEMPTS = 5;

interface RawResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface GroupVersions {
  group: string;
  /** in the server's order of preference */
  versions: Array<{ version: string; resources?: RawResource[] }>;
}

/**
 * Keep a heartbeat going while `fn` runs: a single deletecollection may take longer than the
 * heartbeat timeout, and a dead worker must still be noticed within it.
 */
async function keepAlive<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat(), 2000);
  try {
    heartbeat();
    return await fn();
  } finally {
    clearInterval(timer);
  }
}


function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.serverMessage;
  return e instanceof Error ? e.message : String(e);
}

function namespaceView(o: NamespaceObject): NamespaceView {
  const m = o.metadata ?? {};
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(o.status?.phase ? { phase: o.status.phase } : {}),
    finalizers: o.spec?.finalizers ?? [],
    conditions: o.status?.conditions ?? [],
  };
}

function namespacePath(name: string): string {
  return resourcePath(RESOURCES.namespaces, undefined, name);
}

function contentPath(r: Pick<NamespacedResource, 'group' | 'version' | 'resource'>, namespace: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
}

/** A group version string as schema.ParseGroupVersion accepts it: `v1`, or `group/version`. */
function parsableGroupVersion(gv: string): boolean {
  return gv.split('/').length <= 2;
}

/**
 * Every namespaced, deletable resource, each at the first version that serves it in its group's
 * order of preference (client-go's ServerPreferredNamespacedResources). Versions that could not be
 * read are reported, and their resources left out for now.
 */
function preferredNamespaced(groups: GroupVersions[], failed: FailedGroupVersion[], unparsable: string[]): NamespacedDiscovery {
  const chosen = new Map<string, NamespacedResource>();
  for (const g of groups) {
    for (const v of g.versions) {
      if (!v.resources) continue;
      for (const r of v.resources) {
        if (r.name.includes('/') || !r.namespaced || !r.verbs.includes('delete')) continue;
        const key = resourceKey({ group: g.group, resource: r.name });
        if (chosen.has(key)) continue;
        chosen.set(key, {
          group: g.group, version: v.version, resource: r.name, kind: r.kind,
          list: r.verbs.includes('list'), deleteCollection: r.verbs.includes('deletecollection'),
        });
      }
    }
  }
  return { resources: [...chosen.values()], failedGroups: failed, unparsable };
}

export interface AggregatedList {
  kind?: string;
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{
      version: string;
      freshness?: string;
      resources?: Array<{ resource: string; responseKind?: { kind?: string }; scope?: string; verbs?: string[] }>;
    }>;
  }>;
}

/** Aggregated discovery marks an unreachable aggregated API's versions Stale; client-go fails those. */
export function namespacedFromAggregatedDiscovery(lists: AggregatedList[]): NamespacedDiscovery {
  const groups: GroupVersions[] = [];
  const failed: FailedGroupVersion[] = [];
  for (const list of lists) {
    for (const item of list.items ?? []) {
      const group = item.metadata?.name ?? '';
      const versions: GroupVersions['versions'] = [];
      for (const v of item.versions ?? []) {
        const gv = group ? `${group}/${v.version}` : v.version;
        if (v.freshness === 'Stale') {
          failed.push({ groupVersion: gv, message: `stale GroupVersion discovery: ${gv}` });
          versions.push({ version: v.version });
          continue;
        }
        versions.push({
          version: v.version,
          resources: (v.resources ?? []).map((r) => ({
            name: r.resource, kind: r.responseKind?.kind ?? '', namespaced: r.scope === 'Namespaced', verbs: r.verbs ?? [],
          })),
        });
      }
      groups.push({ group, versions });
    }
  }
  return preferredNamespaced(groups, failed, []);
}

/** The I/O of the namespace controller: discovery, content deletion per resource, status and finalize writes. */
export function createNamespaceActivities(deps: NamespaceActivityDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'namespace' });

  /** The legacy discovery walk, for API servers that do not serve aggregated discovery. */
  async function discoverLegacy(): Promise<NamespacedDiscovery> {
    const core = (await rest.request<{ versions?: string[] }>('GET', '/api')).body;
    const apis = (await rest.request<{ groups?: Array<{ name: string; versions?: Array<{ groupVersion: string; version: string }>; preferredVersion?: { version: string } }> }>('GET', '/apis')).body;
    const failed: FailedGroupVersion[] = [];
    const unparsable: string[] = [];
    const read = async (gv: string): Promise<RawResource[] | undefined> => {
      if (!parsableGroupVersion(gv)) {
        unparsable.push(gv);
        return undefined;
      }
      try {
        const path = gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`;
        return (await rest.request<{ resources?: RawResource[] }>('GET', path)).body.resources ?? [];
      } catch (e) {
        failed.push({ groupVersion: gv, message: messageOf(e) });
        return undefined;
      }
    };
    const groups: GroupVersions[] = [{ group: '', versions: await Promise.all((core.versions ?? []).map(async (v) => ({ version: v, resources: await read(v) }))) }];
    for (const g of apis.groups ?? []) {
      const preferred = g.preferredVersion?.version;
      const ordered = [...(g.versions ?? [])].sort((a, b) => Number(b.version === preferred) - Number(a.version === preferred));
      groups.push({ group: g.name, versions: await Promise.all(ordered.map(async (v) => ({ version: v.version, resources: await read(v.groupVersion) }))) });
      heartbeat();
    }
    return preferredNamespaced(groups, failed, unparsable);
  }

  /** Every page of a metadata-only list of one resource in the namespace. */
  async function* pages(path: string): AsyncGenerator<MetaItem[]> {
    let cont = '';
    do {
      const body = (await rest.request<MetaList>('GET', `${path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, { accept: METADATA_ONLY.list })).body;
      yield body.items ?? [];
      cont = body.metadata?.continue ?? '';
    } while (cont);
  }

  /** The pods' grace periods need their spec and status, so this one list reads whole pods. */
  async function podGraceSeconds(namespace: string): Promise<number> {
    let max = 0;
    let cont = '';
    do {
      const body = (await rest.request<{ items?: Array<{ spec?: { terminationGracePeriodSeconds?: number }; status?: { phase?: string } }>; metadata?: { continue?: string } }>(
        'GET', `${resourcePath(RESOURCES.pods, namespace)}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)).body;
      max = Math.max(max, maxPodGraceSeconds((body.items ?? []).map((p) => ({ phase: p.status?.phase, terminationGracePeriodSeconds: p.spec?.terminationGracePeriodSeconds }))));
      cont = body.metadata?.continue ?? '';
      heartbeat();
    } while (cont);
    return max;
  }

  /** Delete every listed item by name and UID; an item already gone, or replaced, is not ours to fail on. */
  async function deleteEach(path: string): Promise<number> {
    let deleted = 0;
    for await (const items of pages(path)) {
      for (let i = 0; i < items.length; i += DELETE_PARALLELISM) {
        await Promise.all(items.slice(i, i + DELETE_PARALLELISM).map(async (item) => {
          const name = item.metadata?.name;
          if (!name) return;
          try {
            await rest.request('DELETE', `${path}/${encodeURIComponent(name)}`, {
              body: { propagationPolicy: 'Background', ...(item.metadata?.uid ? { preconditions: { uid: item.metadata.uid } } : {}) },
            });
            deleted++;
          } catch (e) {
            // 404 gone, 405 not deletable after all, 409 a new object under the name (the final list sees it)
            if (!isStatus(e, 404, 405, 409)) throw e;
          }
        }));
        heartbeat({ deleted });
      }
    }
    return deleted;
  }

  /** Count what is left, and which finalizers hold it. */
  async function remainingContent(path: string): Promise<{ remaining: number; finalizers: Record<string, number> } | undefined> {
    let remaining = 0;
    const finalizers: Record<string, number> = {};
    try {
      for await (const items of pages(path)) {
        remaining += items.length;
        for (const it of items) for (const f of it.metadata?.finalizers ?? []) finalizers[f] = (finalizers[f] ?? 0) + 1;
        heartbeat({ remaining });
      }
    } catch (e) {
      if (isStatus(e, 404, 405)) return undefined; // the server does not list it after all
      throw e;
    }
    return { remaining, finalizers };
  }

  return {
    async observeNamespace(req: { name: string }): Promise<{ namespace?: NamespaceView }> {
      return apiCall(async () => {
        try {
          return { namespace: namespaceView((await rest.request<NamespaceObject>('GET', namespacePath(req.name))).body) };
        } catch (e) {
          if (isStatus(e, 404)) return {};
          throw e;
        }
      });
    },

    /**
     * What the namespace may hold: every namespaced resource with delete, at its preferred version.
     * A group that cannot be read is reported, never fatal: the rest is still deleted.
     */
    async discoverNamespacedResources(): Promise<NamespacedDiscovery> {
      return keepAlive(async () => {
        try {
          const [core, apis] = await Promise.all([
            rest.request<AggregatedList>('GET', '/api', { accept: AGGREGATED }),
            rest.request<AggregatedList>('GET', '/apis', { accept: AGGREGATED }),
          ]);
          if (core.body?.kind === 'APIGroupDiscoveryList' && apis.body?.kind === 'APIGroupDiscoveryList') return namespacedFromAggregatedDiscovery([core.body, apis.body]);
          return await discoverLegacy();
        } catch (e) {
          log.warn({ err: messageOf(e) }, 'namespace discovery failed');
          return { resources: [], failedGroups: [], unparsable: [], failure: messageOf(e) };
        }
      });
    },

    /**
     * Empty one resource in the namespace: deletecollection (background propagation, so the
     * collector adds no orphan finalizer) where served, else item by item with UID preconditions;
     * then list what remains. API failures come back as `error`, so one broken resource never
     * holds up the others.
     */
    async deleteNamespaceContent(req: DeleteContentRequest): Promise<ContentObservation> {
      const r = req.resource;
      const path = contentPath(r, req.namespace);
      const obs: ContentObservation = { resource: r, method: 'none', remaining: 0, finalizers: {} };
      return keepAlive(async () => {
        try {
          if (r.group === '' && r.resource === 'pods') obs.podGraceSeconds = await podGraceSeconds(req.namespace);
          let collected = false;
          if (r.deleteCollection) {
            try {
              await rest.request('DELETE', path, { body: { propagationPolicy: 'Background' }, accept: METADATA_ONLY.list, timeoutMs: COLLECTION_TIMEOUT_MS });
              collected = true;
              obs.method = 'deletecollection';
            } catch (e) {
              // discovery promised deletecollection, the server says otherwise: fall back to items
              if (!isStatus(e, 404, 405)) throw e;
            }
          }
          if (!collected && r.list) {
            obs.deletedItems = await deleteEach(path);
            obs.method = 'each';
          }
          if (r.list) {
            const left = await remainingContent(path);
            if (left) {
              obs.remaining = left.remaining;
              obs.finalizers = left.finalizers;
            }
          }
        } catch (e) {
          obs.error = messageOf(e);
        }
        log.info({ namespace: req.namespace, resource: resourceKey(r), method: obs.method, deleted: obs.deletedItems, remaining: obs.remaining, error: obs.error }, 'namespace content pass');
        return obs;
      });
    },

    /** A cheap look (one item per resource) at resources emptied earlier, before the finalizer goes. */
    async verifyNamespaceContent(req: VerifyContentRequest): Promise<VerifyContentResult> {
      const result: VerifyContentResult = { nonEmpty: [], errors: {} };
      return keepAlive(async () => {
        for (const r of req.resources) {
          try {
            const body = (await rest.request<MetaList>('GET', `${contentPath(r, req.namespace)}?limit=1`, { accept: METADATA_ONLY.list })).body;
            if ((body.items ?? []).length) result.nonEmpty.push(resourceKey(r));
          } catch (e) {
            if (!isStatus(e, 404, 405)) result.errors[resourceKey(r)] = messageOf(e);
          }
        }
        return result;
      });
    },

    /** PUT status (phase and conditions) on the version it was computed from. */
    async updateNamespaceConditions(req: NamespaceStatusUpdate): Promise<StatusUpdateResult> {
      return apiCall(async () => {
        try {
          const updated = await updateGuarded(rest, namespacePath(req.name), { uid: req.uid, resourceVersion: req.resourceVersion }, (obj) => {
            const o = obj as NamespaceObject;
            o.status = { ...(o.status ?? {}), phase: req.phase, conditions: req.conditions };
          }, 'status');
          log.info({ namespace: req.name, conditions: req.conditions.filter((c) => c.status === 'True').map((c) => c.type) }, 'namespace status updated');
          return { ok: true as const, resourceVersion: updated.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 404)) return { ok: false as const, reason: 'Gone' as const };
          if (isStatus(e, 409)) return { ok: false as const, reason: 'Conflict' as const };
          throw e;
        }
      });
    },

    /**
     * Remove the `kubernetes` finalizer through the finalize subresource. The decision (nothing
     * left) does not depend on the namespace's version, so a conflict re-reads and tries again.
     */
    async finalizeNamespace(req: FinalizeRequest): Promise<FinalizeResult> {
      return apiCall(async () => {
        const path = namespacePath(req.name);
        for (let attempt = 1; ; attempt++) {
          let cur: NamespaceObject;
          try {
            cur = (await rest.request<NamespaceObject>('GET', path)).body;
          } catch (e) {
            if (isStatus(e, 404)) return { finalized: false as const, reason: 'Gone' as const };
            throw e;
          }
          if (cur.metadata?.uid !== req.uid) return { finalized: false as const, reason: 'NotOurs' as const };
          const finalizers = cur.spec?.finalizers ?? [];
          if (!finalizers.includes(NAMESPACE_FINALIZER)) return { finalized: false as const, reason: 'AlreadyFinalized' as const };
          const remaining = withoutOurFinalizer(finalizers);
          try {
            await rest.request('PUT', `${path}/finalize`, { body: { ...cur, spec: { ...(cur.spec ?? {}), finalizers: remaining } } });
            log.info({ namespace: req.name, remainingFinalizers: remaining }, 'namespace finalized');
            return { finalized: true as const, remainingFinalizers: remaining };
          } catch (e) {
            if (isStatus(e, 404)) return { finalized: false as const, reason: 'Gone' as const };
            if (!isStatus(e, 409) || attempt >= FINALIZE_ATTEMPTS) throw e;
          }
        }
      });
    },
  };
}

export type NamespaceActivities = ReturnType<typeof createNamespaceActivities>;
