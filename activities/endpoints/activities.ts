import type { Logger } from 'pino';
import { EndpointsObject, EndpointsWrite, endpointsUpToDate, nextEndpoints } from '../../workflows/endpoints/logic';
import type { EndpointPod, ServiceView } from '../../workflows/service-endpoints/types';
import type { RecordEvent } from '../kube/events';
import { asActivityFailure, isStatus } from '../kube/failures';
import { endpointPod, serviceView } from '../service-endpoints/routes';
import type { KubeObject } from '../kube/projections';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { isNamespaceTerminating } from '../serviceaccount/activities';

const COMPONENT = 'endpoint-controller';
/** pods per observation page: keeps each activity result well under Temporal's payload limits */
const PAGE = 500;

export interface ObserveServiceEndpointsRequest {
  namespace: string;
  name: string;
  /** the list continuation of a previous page, with the selector the first page returned */
  continue?: string;
  selector?: Record<string, string>;
}

export interface ServiceEndpointsObservation {
  /** on the first page only; absent when the Service does not exist */
  service?: ServiceView;
  pods: EndpointPod[];
  continue?: string;
}

export interface DeleteEndpointsRequest {
  namespace: string;
  name: string;
  reason: string;
}

export interface DeleteEndpointsResult {
  outcome: 'deleted' | 'absent' | 'serviceExists' | 'conflict';
}

export interface SyncEndpointsResult {
  outcome: 'created' | 'updated' | 'unchanged' | 'skipped' | 'conflict' | 'failed';
  message?: string;
}

type PodObject = Parameters<typeof endpointPod>[0];
type ServiceObject = Parameters<typeof serviceView>[0];

/** The endpoints controller's I/O, under its own role: services get, pods list, endpoints get/create/update/delete. */
export function createEndpointsActivities(deps: { rest: KubeRest; logger: Logger; recordEvent: RecordEvent }) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'endpoint' });
  const servicePath = (ns: string, name: string) => resourcePath(RESOURCES.services, ns, name);
  const endpointsPath = (ns: string, name?: string) => resourcePath(RESOURCES.endpoints, ns, name);

  async function get<T>(path: string): Promise<T | undefined> {
    try {
      return (await rest.request<T>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  async function observe(req: ObserveServiceEndpointsRequest): Promise<ServiceEndpointsObservation> {
    let service: ServiceView | undefined;
    let selector: Record<string, string> | undefined;
    if (!req.continue) {
      const o = await get<ServiceObject>(servicePath(req.namespace, req.name));
      if (!o) return { pods: [] };
      service = { ...serviceView(o), ...(o.metadata?.creationTimestamp ? { creationTimestamp: o.metadata.creationTimestamp } : {}) };
      selector = service.selector;
      if (!selector) return { service, pods: [] };
    } else {
      selector = req.selector;
      if (!selector) return { pods: [] };
    }
    const q = new URLSearchParams({ labelSelector: Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(','), limit: String(PAGE) });
    if (req.continue) q.set('continue', req.continue);
    const list = (await rest.request<{ items?: PodObject[]; metadata?: { continue?: string } }>('GET', `${resourcePath(RESOURCES.pods, req.namespace)}?${q}`)).body;
    const pods = (list.items ?? []).map((o) => {
      const ready = (o.status?.conditions ?? []).find((c) => c.type === 'Ready');
      // labels and zones decide nothing here: leave them out of the history
      return { ...endpointPod(o, undefined), labels: {}, ...(ready?.lastTransitionTime ? { readyTransitionTime: ready.lastTransitionTime } : {}) };
    });
    return { ...(service ? { service } : {}), pods, ...(list.metadata?.continue ? { continue: list.metadata.continue } : {}) };
  }

  async function write(w: EndpointsWrite): Promise<SyncEndpointsResult> {
    const current = await get<EndpointsObject>(endpointsPath(w.namespace, w.name));
    if (current && endpointsUpToDate(current, w)) return { outcome: 'unchanged' };
    // The API server deletes a Service's Endpoints together with the Service, and this write was
    // decided from the workflow's view of the Service, which the watch brings a moment after the
    // deletion: created now, the Endpoints of a Service that is gone would be back until the
    // deletion's signal comes (the chaos endpoints churn saw one 80 ms after the Service's delete).
    // Upstream reads the Endpoints from its informer, which still has them then, and its update
    // (carrying their UID as a precondition) fails instead. Nothing is deleted here either: the
    // workflow does that once the deletion's signal comes.
    if (!current && !(await get<KubeObject>(servicePath(w.namespace, w.name)))) return { outcome: 'skipped', message: 'the Service is gone' };
    const body = nextEndpoints(current, w);
    try {
      if (!current) await rest.request('POST', endpointsPath(w.namespace), { body });
      else await rest.request('PUT', endpointsPath(w.namespace, w.name), { body });
      return { outcome: current ? 'updated' : 'created' };
    } catch (e) {
      // a terminating namespace refuses creations for good: upstream drops the Service quietly
      if (!current && isNamespaceTerminating(e)) return { outcome: 'skipped', message: 'namespace terminating' };
      if (!(e instanceof ApiError) || e.transient) throw asActivityFailure(e);
      const target = { apiVersion: 'v1', kind: 'Endpoints', namespace: w.namespace, name: w.name, uid: current?.metadata?.uid ?? '' };
      if (current) deps.recordEvent(COMPONENT, target, 'Warning', 'FailedToUpdateEndpoint', `Failed to update endpoint ${w.namespace}/${w.name}: ${e.serverMessage}`);
      else deps.recordEvent(COMPONENT, target, 'Warning', 'FailedToCreateEndpoint', `Failed to create endpoint for service ${w.namespace}/${w.name}: ${e.serverMessage}`);
      // changed or created under us since the read: the workflow looks again
      const message = e.serverMessage;
      if (e.status === 409 || e.status === 404) return { outcome: 'conflict', message };
      return { outcome: 'failed', message };
    }
  }

  return {
    async observeServiceEndpoints(req: ObserveServiceEndpointsRequest): Promise<ServiceEndpointsObservation> {
      try {
        return await observe(req);
      } catch (e) {
        throw asActivityFailure(e);
      }
    },

    /** Create or update the Endpoints when upstream's comparison with the live object says so. */
    async syncEndpoints(w: EndpointsWrite): Promise<SyncEndpointsResult> {
      let result: SyncEndpointsResult;
      try {
        result = await write(w);
      } catch (e) {
        throw asActivityFailure(e);
      }
      const addresses = w.subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
      const notReady = w.subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
      if (result.outcome !== 'unchanged') log.info({ key: `${w.namespace}/${w.name}`, addresses, notReady, overCapacity: w.overCapacity, ...result }, 'synced endpoints');
      return result;
    },

    /**
     * Delete the Endpoints of a deleted Service, unless a Service holds the name again; by UID, so
     * an Endpoints written in between is never the one removed.
     */
    async deleteEndpoints(req: DeleteEndpointsRequest): Promise<DeleteEndpointsResult> {
      try {
        if (await get<KubeObject>(servicePath(req.namespace, req.name))) return { outcome: 'serviceExists' };
        const current = await get<KubeObject>(endpointsPath(req.namespace, req.name));
        if (!current) return { outcome: 'absent' };
        try {
          await rest.request('DELETE', endpointsPath(req.namespace, req.name), { body: { preconditions: { uid: current.metadata?.uid } } });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'absent' };
          if (isStatus(e, 409)) return { outcome: 'conflict' };
          throw e;
        }
        log.info({ key: `${req.namespace}/${req.name}`, reason: req.reason }, 'deleted endpoints');
        return { outcome: 'deleted' };
      } catch (e) {
        throw asActivityFailure(e);
      }
    },
  };
}

export type EndpointsActivities = ReturnType<typeof createEndpointsActivities>;
