import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { endpointKey, portSetKey } from '../../workflows/endpointslice/logic';
import {
  CONTROLLER_NAME,
  MANAGED_BY_LABEL,
  SERVICE_NAME_LABEL,
  type ServiceRef,
  type SliceContent,
  type SliceEndpoint,
  type SlicePort,
  type SliceRef,
  type SliceUpdate,
  type SliceView,
} from '../../workflows/endpointslice/types';
import type { OwnerRef } from '../../workflows/common/meta';
import type { EndpointPod, ServiceView } from '../../workflows/service-endpoints/types';
import { endpointPod, serviceView } from '../service-endpoints/routes';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { heartbeat } from '../kube/heartbeat';

/** The component upstream's events carry. */
export const ENDPOINTSLICE_EVENT_COMPONENT = 'endpoint-slice-controller';
const ZONE_LABEL = 'topology.kubernetes.io/zone';

export interface EndpointSliceActivityDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

export interface ServiceKey {
  namespace: string;
  name: string;
}

export interface ServicePodsRead {
  /** absent: no Service by that name */
  service?: ServiceView;
  /** the pods its selector matches (none without a selector) */
  pods: EndpointPod[];
}

export interface CreateSlicesRequest {
  service: ServiceRef;
  slices: SliceContent[];
  /** slices the workflow knows: on a retry, a stored slice not among them may be this request's own */
  knownNames: string[];
  reason: string;
}

export interface CreateSlicesResult {
  created: SliceView[];
  /** the API rejected a create: the rest were not tried (a Warning event was recorded) */
  failure?: string;
  /** the namespace is being deleted: creates cannot succeed, and upstream just stops */
  namespaceTerminating?: boolean;
}

export interface UpdateSlicesRequest {
  service: ServiceRef;
  slices: SliceUpdate[];
  reason: string;
}

export interface UpdateSlicesResult {
  updated: SliceView[];
  /** a slice changed or vanished since it was read: the workflow reads them again */
  conflict?: string;
  failure?: string;
}

export interface DeleteSlicesRequest {
  service: ServiceRef;
  slices: SliceRef[];
  reason: string;
}

export interface DeleteSlicesResult {
  deleted: string[];
  failure?: string;
}

type SliceObject = KubeObject & {
  metadata?: KubeObject['metadata'] & { finalizers?: string[]; generateName?: string };
  addressType?: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: SlicePort[] | null;
};

const slicesPath = (ns: string) => resourcePath(RESOURCES.endpointSlices, ns);


function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/** The stored slice as the workflow keeps it: what the controller owns, plus what an update must carry over. */
export function sliceView(o: SliceObject): SliceView {
  const m = o.metadata ?? {};
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    addressType: o.addressType ?? '',
    ports: (o.ports ?? []).map((p) => ({
      ...(p.name !== undefined ? { name: p.name } : {}), ...(p.protocol !== undefined ? { protocol: p.protocol } : {}),
      ...(p.port !== undefined ? { port: p.port } : {}), ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
    })),
    endpoints: (o.endpoints ?? []).map((e) => ({
      addresses: e.addresses ?? [],
      conditions: e.conditions ?? {},
      ...(e.hostname !== undefined ? { hostname: e.hostname } : {}),
      ...(e.targetRef ? { targetRef: e.targetRef } : {}),
      ...(e.nodeName !== undefined ? { nodeName: e.nodeName } : {}),
      ...(e.zone !== undefined ? { zone: e.zone } : {}),
      ...(e.hints ? { hints: e.hints } : {}),
    })),
    labels: m.labels ?? {},
    annotations: m.annotations ?? {},
    ownerReferences: (m.ownerReferences ?? []).map((r: OwnerRef) => ({
      apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid,
      ...(r.controller !== undefined ? { controller: r.controller } : {}),
      ...(r.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: r.blockOwnerDeletion } : {}),
    })),
    ...(m.finalizers?.length ? { finalizers: m.finalizers } : {}),
  };
}

function body(svc: ServiceRef, s: SliceContent, meta: Record<string, unknown>) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...meta,
      // upstream's prefix; service names are DNS labels, so "<name>-" is always a valid one
      generateName: `${svc.name}-`,
      namespace: svc.namespace,
      labels: s.labels,
      ...(Object.keys(s.annotations).length ? { annotations: s.annotations } : {}),
      ownerReferences: s.ownerReferences,
    },
    addressType: s.addressType,
    endpoints: s.endpoints,
    ports: s.ports,
  };
}

/** Same slice for idempotency's sake: same owner, address type, ports and endpoints. */
function sameContent(stored: SliceView, want: SliceContent, svc: ServiceRef): boolean {
  if (stored.addressType !== want.addressType || !stored.ownerReferences.some((r) => r.uid === svc.uid)) return false;
  if (portSetKey(stored.ports) !== portSetKey(want.ports) || stored.endpoints.length !== want.endpoints.length) return false;
  const keys = new Set(stored.endpoints.map(endpointKey));
  return want.endpoints.every((e) => keys.has(endpointKey(e)));
}

function namespaceTerminating(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && /being terminated/.test(e.serverMessage);
}

/**
 * The endpointslice controller's I/O. Slices are written with update, never patch (upstream's role
 * has no patch); every update carries the resourceVersion it was computed from, every delete the UID.
 */
export function createEndpointSliceActivities(deps: EndpointSliceActivityDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'endpointslice' });

  async function listSlices(svc: ServiceKey): Promise<SliceView[]> {
    const selector = `${SERVICE_NAME_LABEL}=${svc.name},${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`;
    const r = await rest.request<{ items: SliceObject[] }>('GET', `${slicesPath(svc.namespace)}?labelSelector=${encodeURIComponent(selector)}`);
    // slices being deleted are left out, as upstream does, so a stuck finalizer cannot stall the Service
    return (r.body.items ?? []).filter((o) => !o.metadata?.deletionTimestamp).map(sliceView);
  }

  function failed(svc: ServiceRef, what: string, e: unknown): string {
    const msg = e instanceof ApiError ? e.serverMessage : String(e);
    const message = `Error updating Endpoint Slices for Service ${svc.namespace}/${svc.name}: ${what} for Service ${svc.namespace}/${svc.name}: ${msg}`;
    deps.recordEvent(ENDPOINTSLICE_EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Service', namespace: svc.namespace, name: svc.name, uid: svc.uid,
      ...(svc.resourceVersion ? { resourceVersion: svc.resourceVersion } : {}) }, 'Warning', 'FailedToUpdateEndpointSlices', message);
    return message;
  }

  return {
    /** The slices this controller manages for a Service, read fresh (not pending deletion). */
    async observeEndpointSlices(req: ServiceKey): Promise<SliceView[]> {
      return apiCall(() => listSlices(req));
    },

    /**
     * The Service and its selected pods, projected as the watch projects them (with their nodes'
     * zones): what a run that continued as new starts from, instead of carrying every pod along.
     */
    async readServicePods(req: ServiceKey): Promise<ServicePodsRead> {
      return apiCall(async () => {
        let svcObj: KubeObject;
        try {
          svcObj = (await rest.request<KubeObject>('GET', resourcePath(RESOURCES.services, req.namespace, req.name))).body;
        } catch (e) {
          if (isStatus(e, 404)) return { pods: [] };
          throw e;
        }
        const service = serviceView(svcObj);
        if (!service.selector) return { service, pods: [] };
        const selector = Object.entries(service.selector).map(([k, v]) => `${k}=${v}`).join(',');
        const r = await rest.request<{ items: KubeObject[] }>('GET', `${resourcePath(RESOURCES.pods, req.namespace)}?labelSelector=${encodeURIComponent(selector)}`);
        const items = r.body.items ?? [];
        const nodes = [...new Set(items.map((o) => (o.spec as { nodeName?: string } | undefined)?.nodeName).filter((n): n is string => !!n))];
        const zones = new Map<string, string>();
        for (let i = 0; i < nodes.length; i += 20) {
          await Promise.all(nodes.slice(i, i + 20).map(async (n) => {
            try {
              const node = (await rest.request<KubeObject>('GET', resourcePath(RESOURCES.nodes, undefined, n))).body;
              const z = node.metadata?.labels?.[ZONE_LABEL];
              if (z) zones.set(n, z);
            } catch (e) {
              if (!isStatus(e, 404)) throw e;
            }
          }));
          heartbeat();
        }
        const pods = items.map((o) => endpointPod(o, zones.get((o.spec as { nodeName?: string } | undefined)?.nodeName ?? '')));
        return { service, pods };
      });
    },

    /**
     * Create slices with generateName, as upstream. The API names them, so a create is not
     * idempotent by name: a retry first looks for a slice the workflow does not know that already
     * holds exactly what it would create (an earlier attempt's), and takes it instead.
     */
    async createEndpointSlices(req: CreateSlicesRequest): Promise<CreateSlicesResult> {
      return apiCall(async () => {
        const created: SliceView[] = [];
        let unknown: SliceView[] = [];
        if (attempt() > 1) {
          const known = new Set(req.knownNames);
          unknown = (await listSlices(req.service)).filter((s) => !known.has(s.name));
        }
        for (const want of req.slices) {
          const earlier = unknown.findIndex((s) => sameContent(s, want, req.service));
          if (earlier >= 0) {
            created.push(unknown[earlier]);
            unknown.splice(earlier, 1);
            continue;
          }
          try {
            const r = await rest.request<SliceObject>('POST', slicesPath(req.service.namespace), { body: body(req.service, want, {}) });
            created.push(sliceView(r.body));
          } catch (e) {
            if (namespaceTerminating(e)) return { created, namespaceTerminating: true };
            if (e instanceof ApiError && !e.transient) return { created, failure: failed(req.service, 'failed to create EndpointSlice', e) };
            throw e;
          }
          heartbeat();
        }
        log.info({ service: `${req.service.namespace}/${req.service.name}`, created: created.map((s) => s.name), reason: req.reason }, 'created EndpointSlices');
        return { created };
      });
    },

    /** Replace slices' content, each guarded by the resourceVersion (and UID) it was computed from. */
    async updateEndpointSlices(req: UpdateSlicesRequest): Promise<UpdateSlicesResult> {
      return apiCall(async () => {
        const updated: SliceView[] = [];
        for (const s of req.slices) {
          const meta = { name: s.name, uid: s.uid, resourceVersion: s.resourceVersion, ...(s.finalizers?.length ? { finalizers: s.finalizers } : {}) };
          try {
            const r = await rest.request<SliceObject>('PUT', `${slicesPath(req.service.namespace)}/${encodeURIComponent(s.name)}`, { body: body(req.service, s, meta) });
            updated.push(sliceView(r.body));
          } catch (e) {
            // a retry of a write that landed sees its own change as a conflict, and re-reads: never a blind overwrite
            if (isStatus(e, 404, 409)) return { updated, conflict: `${s.name}: ${(e as ApiError).reason}` };
            if (e instanceof ApiError && !e.transient) return { updated, failure: failed(req.service, `failed to update ${s.name} EndpointSlice`, e) };
            throw e;
          }
          heartbeat();
        }
        log.info({ service: `${req.service.namespace}/${req.service.name}`, updated: updated.map((s) => s.name), reason: req.reason }, 'updated EndpointSlices');
        return { updated };
      });
    },

    /** Delete slices by name with a UID precondition; one already gone (or replaced) counts as deleted. */
    async deleteEndpointSlices(req: DeleteSlicesRequest): Promise<DeleteSlicesResult> {
      return apiCall(async () => {
        const deleted: string[] = [];
        for (const s of req.slices) {
          try {
            await rest.request('DELETE', `${slicesPath(req.service.namespace)}/${encodeURIComponent(s.name)}`, { body: { preconditions: { uid: s.uid } } });
          } catch (e) {
            if (!isStatus(e, 404, 409)) {
              if (e instanceof ApiError && !e.transient) return { deleted, failure: failed(req.service, `failed to delete ${s.name} EndpointSlice`, e) };
              throw e;
            }
          }
          deleted.push(s.name);
          heartbeat();
        }
        log.info({ service: `${req.service.namespace}/${req.service.name}`, deleted, reason: req.reason }, 'deleted EndpointSlices');
        return { deleted };
      });
    },
  };
}

export type EndpointSliceActivities = ReturnType<typeof createEndpointSliceActivities>;
