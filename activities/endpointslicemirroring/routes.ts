import { shouldMirrorEndpoints } from '../../workflows/endpointslicemirroring/logic';
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MIRRORING_CONTROLLER,
  MIRRORING_MANAGER,
  MirroringEvent,
  MirroringWorkflowInput,
  SliceEcho,
} from '../../workflows/endpointslicemirroring/types';
import { mirroringWorkflowId } from '../../workflows/endpointslicemirroring/workflow';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { flagGiven, intFlag } from '../../workers/flags';
import { endpointSliceMirroringWorkflow } from '../../workflows/endpointslicemirroring/workflow';

export const MIRRORING_MAX_ENDPOINTS_PER_SUBSET = intFlag('mirroring-max-endpoints-per-subset', 1000,
  'most addresses of one Endpoints subset mirrored into EndpointSlices (1..1000)', { max: 1000 });

export const SERVICES_PATH = '/api/v1/services';
export const ENDPOINTS_PATH = '/api/v1/endpoints';
export const ENDPOINTSLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';

export function mergeMirroringEvents(earlier: MirroringEvent, later: MirroringEvent): MirroringEvent {
  const slices = new Map<string, SliceEcho>();
  for (const s of [...(earlier.slices ?? []), ...(later.slices ?? [])]) slices.set(s.name, s);
  return {
    ...(earlier.changed || later.changed ? { changed: true } : {}),
    ...(earlier.relist || later.relist ? { relist: true } : {}),
    ...(slices.size ? { slices: [...slices.values()] } : {}),
  };
}

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function hasSelector(o: KubeObject): boolean {
  const sel = (o.spec as { selector?: Record<string, string> | null } | undefined)?.selector;
  return !!sel && Object.keys(sel).length > 0;
}

function mirrorable(o: KubeObject): boolean {
  return shouldMirrorEndpoints({ labels: o.metadata?.labels ?? {}, annotations: o.metadata?.annotations ?? {} });
}

/**
 * Routes of the endpointslicemirroring controller, as upstream's handlers enqueue Endpoints keys:
 * a selector-less Service added or deleted, or gaining or losing its selector; an Endpoints object
 * that is (or was) to be mirrored; a mirrored slice that changed. Memory: one small entry per
 * Service, per mirrorable Endpoints and per mirrored slice; nothing of their contents.
 */
export function mirroringRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes(MIRRORING_CONTROLLER)) return undefined;
  const maxEndpointsPerSubset = flagGiven(input.flags, MIRRORING_MAX_ENDPOINTS_PER_SUBSET);

  /** every Service by key: its UID and whether it selects pods */
  const services = new Map<string, { uid: string; selectorless: boolean }>();
  /** Endpoints to be mirrored by key (a skip-mirror Endpoints is not kept) */
  const endpoints = new Map<string, { uid: string }>();
  /** slices labelled as ours, by UID: the pair they belong to */
  const slices = new Map<string, { key: string; name: string }>();

  const pairMirrored = (key: string) => endpoints.has(key) && services.get(key)?.selectorless === true;

  const queue = (key: string, event: MirroringEvent) => {
    const cut = key.indexOf('/');
    const namespace = key.slice(0, cut);
    const name = key.slice(cut + 1);
    const args: MirroringWorkflowInput = { namespace, name, tuning: input.tuning, ...(maxEndpointsPerSubset ? { maxEndpointsPerSubset } : {}) };
    signaller.queue({
      controller: MIRRORING_CONTROLLER, workflow: endpointSliceMirroringWorkflow, kind: 'Endpoints', namespace, name,
      uid: endpoints.get(key)?.uid ?? services.get(key)?.uid ?? '', args, workflowId: mirroringWorkflowId(namespace, name),
    }, event, mergeMirroringEvents);
  };

  const serviceHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const key = keyOf(o);
        seen.add(key);
        const before = services.get(key);
        const now = { uid: o.metadata?.uid ?? '', selectorless: !hasSelector(o) };
        services.set(key, now);
        // a pair that might have changed while we were not watching, and has something to mirror or clean
        if (endpoints.has(key) && (!before || before.selectorless || now.selectorless)) queue(key, { changed: true, relist: true });
      }
      for (const [key, s] of services) {
        if (seen.has(key)) continue;
        services.delete(key);
        if (s.selectorless && endpoints.has(key)) queue(key, { changed: true });
      }
    },
    event(type, o) {
      const key = keyOf(o);
      const before = services.get(key);
      if (type === 'DELETED') {
        services.delete(key);
        if (before?.selectorless !== false && endpoints.has(key)) queue(key, { changed: true });
        return;
      }
      const now = { uid: o.metadata?.uid ?? '', selectorless: !hasSelector(o) };
      services.set(key, now);
      // only the presence of a selector matters here, as upstream's update handler says
      if (endpoints.has(key) && (!before || before.uid !== now.uid || before.selectorless !== now.selectorless)) queue(key, { changed: true });
    },
  };

  const endpointsHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const key = keyOf(o);
        seen.add(key);
        const was = endpoints.has(key);
        if (mirrorable(o)) endpoints.set(key, { uid: o.metadata?.uid ?? '' });
        else endpoints.delete(key);
        if (services.get(key)?.selectorless && (was || endpoints.has(key))) queue(key, { changed: true, relist: true });
      }
      for (const key of [...endpoints.keys()]) {
        if (seen.has(key)) continue;
        endpoints.delete(key);
        if (services.get(key)?.selectorless !== false) queue(key, { changed: true });
      }
    },
    event(type, o) {
      const key = keyOf(o);
      const was = endpoints.has(key);
      if (type !== 'DELETED' && mirrorable(o)) endpoints.set(key, { uid: o.metadata?.uid ?? '' });
      else endpoints.delete(key);
      // upstream enqueues whatever is or was to be mirrored; we also wait for a selector-less Service
      if ((was || endpoints.has(key)) && services.get(key)?.selectorless !== false) queue(key, { changed: true });
    },
  };

  const sliceInfo = (o: KubeObject) => {
    const labels = o.metadata?.labels ?? {};
    const svc = labels[LABEL_SERVICE_NAME];
    return labels[LABEL_MANAGED_BY] === MIRRORING_MANAGER && svc
      ? { key: `${o.metadata?.namespace ?? ''}/${svc}`, name: o.metadata?.name ?? '' } : undefined;
  };

  const routeSlice = (uid: string, o: KubeObject, deleted: boolean) => {
    const before = slices.get(uid);
    const now = deleted ? undefined : sliceInfo(o);
    if (now) slices.set(uid, now);
    else slices.delete(uid);
    const echo: SliceEcho = { name: o.metadata?.name ?? '', resourceVersion: o.metadata?.resourceVersion ?? '', ...(deleted ? { deleted: true } : {}) };
    const keys = new Set<string>();
    if (now) keys.add(now.key);
    if (before) keys.add(before.key);
    for (const key of keys) {
      // a slice of ours deleted from a pair no longer mirrored needs nobody
      if (deleted && !pairMirrored(key)) continue;
      // a slice that moved between pairs or left our hands is a change, not an echo of our write
      const echoOnly = deleted || (now !== undefined && (!before || before.key === now.key));
      queue(key, echoOnly ? { slices: [echo] } : { changed: true });
    }
  };

  const sliceHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const uid = o.metadata?.uid ?? '';
        seen.add(uid);
        const info = sliceInfo(o);
        if (info) slices.set(uid, info);
        else slices.delete(uid);
        // leftovers of pairs no longer mirrored (the pair routes cover the mirrored ones)
        if (info && !pairMirrored(info.key)) queue(info.key, { changed: true, relist: true });
      }
      for (const uid of [...slices.keys()]) if (!seen.has(uid)) slices.delete(uid);
    },
    event(type, o) {
      routeSlice(o.metadata?.uid ?? '', o, type === 'DELETED');
    },
  };

  return {
    handlers: new Map<string, Handler>([[SERVICES_PATH, serviceHandler], [ENDPOINTS_PATH, endpointsHandler], [ENDPOINTSLICES_PATH, sliceHandler]]),
    metadataOnly: new Set([ENDPOINTS_PATH, ENDPOINTSLICES_PATH]),
    sizes: () => ({ mirroringServices: services.size, mirroringEndpoints: endpoints.size, mirroredSlices: slices.size }),
  };
}
