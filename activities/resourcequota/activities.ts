import type { Logger } from 'pino';
import { heartbeat } from '../kube/heartbeat';
import { calculateUsage, quotaListings } from '../../workflows/resourcequota/usage';
import type {
  ContainerLike,
  ContainerStatusLike,
  NamespaceObjects,
  PodAffinityLike,
  PodLike,
  PvcLike,
  QuotaObjectKind,
  QuotaSpecLike,
  QuotaView,
  ResourceMap,
  ServiceLike,
} from '../../workflows/resourcequota/types';
import { ResourceInfo, collectionPath, discoverResources, groupResourceOf } from '../kube/discovery';
import { METADATA_ONLY } from '../informers/reflector';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { KubeObject, objectIdentity } from '../kube/projections';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath, type ResourceType } from '../kube/resources';
import { readByName } from '../kube/update';

export interface ObserveQuotaRequest {
  namespace: string;
  name: string;
  /** recount only what changes of these kinds can move; absent: recount everything the quota tracks */
  kinds?: QuotaObjectKind[];
}

export interface QuotaObservation {
  /** absent when the quota no longer exists */
  quota?: QuotaView;
  /** the recounted usage of the quota's hard resources (canonical quantities) */
  used: ResourceMap;
  /** what could not be counted, and why; those resources keep their stored usage */
  errors: string[];
  /** look again this much later: a counted pod passes its deletion grace period by then */
  recheckAfterMs?: number;
  /** in words, what was read (for whoever reads the history) */
  counted: string;
}

export interface QuotaStatusUpdate {
  namespace: string;
  name: string;
  uid: string;
  /** the version the status was computed from; a newer one means re-observe, never overwrite */
  resourceVersion: string;
  hard: ResourceMap;
  used: ResourceMap;
  reason: string;
}

export type QuotaStatusUpdateResult = { updated: true; resourceVersion: string } | { updated: false; reason: 'Conflict' | 'NotFound' };

export interface ResourceQuotaActivityDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

const COMPONENT = 'resourcequota-controller';
const PAGE = 500;
/** upstream's quota monitor re-reads discovery every 30 s */
const DISCOVERY_TTL_MS = 30_000;
/** an unknown group-resource (a CRD just created) triggers a refresh at most this often */
const DISCOVERY_MISS_MS = 5_000;
/** kinds counted in the core group without discovery (their quota names predate count/<resource>) */
const CORE_COUNTED: ReadonlyMap<string, ResourceType> = new Map([
  ['configmaps', RESOURCES.configMaps],
  ['secrets', RESOURCES.secrets],
  ['replicationcontrollers', RESOURCES.replicationControllers],
  ['resourcequotas', RESOURCES.resourceQuotas],
]);


export const quotaPath = (ns: string, name: string) => resourcePath(RESOURCES.resourceQuotas, ns, name);

type QuotaObject = KubeObject & { spec?: QuotaSpecLike; status?: { hard?: ResourceMap; used?: ResourceMap } };

function quotaView(o: QuotaObject): QuotaView {
  const { namespace, name, uid, resourceVersion } = objectIdentity(o);
  return {
    namespace,
    name,
    uid,
    resourceVersion,
    hard: { ...(o.spec?.hard ?? {}) },
    ...(o.status?.hard ? { statusHard: { ...o.status.hard } } : {}),
    ...(o.status?.used ? { statusUsed: { ...o.status.used } } : {}),
  };
}

const containerView = (c: ContainerLike): ContainerLike => ({
  name: c.name,
  ...(c.resources ? { resources: { requests: c.resources.requests ?? undefined, limits: c.resources.limits ?? undefined } } : {}),
  ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
});

const statusView = (s: ContainerStatusLike): ContainerStatusLike => ({
  name: s.name,
  ...(s.allocatedResources ? { allocatedResources: s.allocatedResources } : {}),
  ...(s.resources ? { resources: { requests: s.resources.requests ?? undefined, limits: s.resources.limits ?? undefined } } : {}),
});

const affinityView = (a: PodAffinityLike | null | undefined): PodAffinityLike | undefined => a ? {
  requiredDuringSchedulingIgnoredDuringExecution: (a.requiredDuringSchedulingIgnoredDuringExecution ?? [])
    .map((t) => ({ namespaces: t.namespaces, namespaceSelector: t.namespaceSelector == null ? undefined : {} })),
  preferredDuringSchedulingIgnoredDuringExecution: (a.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    .map((w) => ({ podAffinityTerm: { namespaces: w.podAffinityTerm?.namespaces, namespaceSelector: w.podAffinityTerm?.namespaceSelector == null ? undefined : {} } })),
} : undefined;

/** Only what the pod evaluator reads, so a page of big pods is dropped as soon as it is read. */
function podView(p: PodLike): PodLike {
  const spec = p.spec ?? {};
  const status = p.status ?? {};
  return {
    metadata: { name: p.metadata?.name, deletionTimestamp: p.metadata?.deletionTimestamp, deletionGracePeriodSeconds: p.metadata?.deletionGracePeriodSeconds },
    spec: {
      containers: (spec.containers ?? []).map(containerView),
      initContainers: (spec.initContainers ?? []).map(containerView),
      overhead: spec.overhead,
      resources: spec.resources,
      activeDeadlineSeconds: spec.activeDeadlineSeconds,
      priorityClassName: spec.priorityClassName,
      affinity: spec.affinity ? { podAffinity: affinityView(spec.affinity.podAffinity), podAntiAffinity: affinityView(spec.affinity.podAntiAffinity) } : undefined,
    },
    status: {
      phase: status.phase,
      qosClass: status.qosClass,
      conditions: (status.conditions ?? []).map((c) => ({ type: c.type, reason: c.reason })),
      containerStatuses: (status.containerStatuses ?? []).map(statusView),
      initContainerStatuses: (status.initContainerStatuses ?? []).map(statusView),
    },
  };
}

const serviceView = (s: ServiceLike): ServiceLike => ({ spec: { type: s.spec?.type, ports: (s.spec?.ports ?? []).map(() => ({})) } });

const pvcView = (c: PvcLike): PvcLike => ({
  metadata: { annotations: c.metadata?.annotations ?? undefined },
  spec: { storageClassName: c.spec?.storageClassName, resources: { requests: c.spec?.resources?.requests ?? undefined } },
  status: { allocatedResources: c.status?.allocatedResources ?? undefined },
});

interface ListPage<T> {
  items?: T[] | null;
  metadata?: { continue?: string; remainingItemCount?: number };
}

/** The resourcequota controller's I/O: recount a quota's namespace, and write its status. */
export function createResourceQuotaActivities(deps: ResourceQuotaActivityDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'resourcequota' });
  let discovered: Map<string, ResourceInfo> | undefined;
  let discoveredAt = 0;

  /** group-resource (`deployments.apps`) -> a namespaced resource discovery offers */
  async function resolve(gr: string): Promise<ResourceInfo | undefined> {
    const age = Date.now() - discoveredAt;
    if (!discovered || age > DISCOVERY_TTL_MS || (!discovered.has(gr) && age > DISCOVERY_MISS_MS)) {
      discoveredAt = Date.now();
      const all = await discoverResources(rest);
      discovered = new Map(all.filter((r) => r.namespaced).map((r) => [groupResourceOf(r), r]));
    }
    return discovered.get(gr);
  }

  async function listAll<T, V>(path: string, view: (t: T) => V): Promise<V[]> {
    const out: V[] = [];
    let cont = '';
    do {
      const page = (await rest.request<ListPage<T>>('GET', `${path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)).body;
      for (const item of page.items ?? []) out.push(view(item));
      cont = page.metadata?.continue ?? '';
      heartbeat({ path, read: out.length });
    } while (cont);
    return out;
  }

  /** How many objects a collection holds, reading metadata only (never Secret data). */
  async function countAll(path: string): Promise<number> {
    let n = 0;
    let cont = '';
    do {
      const page = (await rest.request<ListPage<unknown>>('GET', `${path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        { accept: METADATA_ONLY.list })).body;
      n += (page.items ?? []).length;
      cont = page.metadata?.continue ?? '';
      // the server knows how many are left in this snapshot: no need to page through them
      if (cont && typeof page.metadata?.remainingItemCount === 'number') return n + page.metadata.remainingItemCount;
      heartbeat({ path, counted: n });
    } while (cont);
    return n;
  }

  /** A read the API refuses (forbidden, resource gone) costs only its own resources; trouble is retried. */
  async function tryRead<T>(what: string, errors: string[], read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (e) {
      if (e instanceof ApiError && !e.transient) {
        errors.push(`${what}: ${e.serverMessage}`);
        return undefined;
      }
      throw e;
    }
  }

  const target = (q: { namespace: string; name: string; uid: string; resourceVersion?: string }): EventTarget =>
    ({ apiVersion: 'v1', kind: 'ResourceQuota', namespace: q.namespace, name: q.name, uid: q.uid, resourceVersion: q.resourceVersion });

  return {
    /**
     * Reads the quota and recounts, in its namespace, the objects its hard resources need (or only
     * those `kinds` feed). Objects stay here: only the quota-sized result leaves the activity.
     */
    async observeResourceQuota(req: ObserveQuotaRequest): Promise<QuotaObservation> {
      return apiCall(async () => {
        // the controller's role lists and watches, it does not get: read through a list by name
        const raw = (await readByName(rest, quotaPath(req.namespace, req.name))) as QuotaObject | undefined;
        if (!raw) return { used: {}, errors: [], counted: 'quota not found' };
        const quota = quotaView(raw);
        const spec: QuotaSpecLike = { hard: quota.hard, scopes: raw.spec?.scopes, scopeSelector: raw.spec?.scopeSelector };
        const plan = quotaListings(Object.keys(quota.hard), req.kinds);
        const errors: string[] = [];
        const objects: NamespaceObjects = {};
        const read: string[] = [];

        if (plan.pods) {
          objects.pods = await tryRead('pods', errors, () => listAll(resourcePath(RESOURCES.pods, req.namespace), podView));
          if (objects.pods) read.push(`${objects.pods.length} pods`);
        }
        if (plan.services) {
          objects.services = await tryRead('services', errors, () => listAll(resourcePath(RESOURCES.services, req.namespace), serviceView));
          if (objects.services) read.push(`${objects.services.length} services`);
        }
        if (plan.persistentvolumeclaims) {
          objects.persistentvolumeclaims = await tryRead('persistentvolumeclaims', errors, () => listAll(resourcePath(RESOURCES.persistentVolumeClaims, req.namespace), pvcView));
          if (objects.persistentvolumeclaims) read.push(`${objects.persistentvolumeclaims.length} persistentvolumeclaims`);
        }
        const counts: Record<string, number> = {};
        for (const gr of plan.counts) {
          const n = await tryRead(gr, errors, async () => {
            const core = CORE_COUNTED.get(gr);
            const path = core ? resourcePath(core, req.namespace) : await resolve(gr).then((r) => r && collectionPath(r, req.namespace));
            // a resource discovery does not offer has no evaluator upstream either: its usage is left alone
            return path ? countAll(path) : undefined;
          });
          if (n !== undefined) {
            counts[gr] = n;
            read.push(`${n} ${gr}`);
          }
        }
        objects.counts = counts;

        const usage = calculateUsage(spec, objects, Date.now());
        const allErrors = [...errors, ...usage.errors];
        if (allErrors.length) {
          deps.recordEvent(COMPONENT, target(quota), 'Warning', 'CalculateUsageFailed',
            `could not count ${allErrors.length === 1 ? 'one resource group' : `${allErrors.length} resource groups`}: ${allErrors.join('; ')}`);
        }
        return {
          quota,
          used: usage.used,
          errors: allErrors,
          ...(usage.recheckAfterMs !== undefined ? { recheckAfterMs: usage.recheckAfterMs } : {}),
          counted: `${req.kinds ? `recount of ${req.kinds.join(', ')}` : 'full recount'}: ${read.join(', ') || 'nothing to read'}`,
        };
      });
    },

    /**
     * PUT status of the quota as it was observed: the write carries the resourceVersion the usage
     * was computed from, so a concurrent write (the API server's quota admission charges new
     * objects to the same status) ends in a Conflict and a fresh recount, never an overwrite.
     */
    async updateResourceQuotaStatus(req: QuotaStatusUpdate): Promise<QuotaStatusUpdateResult> {
      return apiCall(async () => {
        const path = quotaPath(req.namespace, req.name);
        const current = (await readByName(rest, path)) as QuotaObject | undefined;
        if (!current) return { updated: false, reason: 'NotFound' };
        if (current.metadata?.uid !== req.uid) return { updated: false, reason: 'NotFound' };
        if (current.metadata?.resourceVersion !== req.resourceVersion) return { updated: false, reason: 'Conflict' };
        const body = { ...current, apiVersion: 'v1', kind: 'ResourceQuota', status: { hard: req.hard, used: req.used } };
        try {
          const r = await rest.request<QuotaObject>('PUT', `${path}/status`, { body });
          log.info({ key: `${req.namespace}/${req.name}`, reason: req.reason }, 'resource quota status updated');
          return { updated: true, resourceVersion: r.body.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) return { updated: false, reason: 'Conflict' };
          if (isStatus(e, 404)) return { updated: false, reason: 'NotFound' };
          if (e instanceof ApiError && !e.transient) {
            deps.recordEvent(COMPONENT, target(req), 'Warning', 'FailedUpdateStatus', `status update rejected: ${e.serverMessage}`);
          }
          throw e;
        }
      });
    },
  };
}

export type ResourceQuotaActivities = ReturnType<typeof createResourceQuotaActivities>;
