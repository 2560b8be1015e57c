import { shouldMirrorEndpoints } from '../../workflows/endpointslicemirroring/logic';
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MIRRORING_CONTROLLER,
  MIRRORING_MANAGER,
  type MirroringEvent,
  type MirroringWorkflowInput,
  type SliceEcho,
} from '../../workflows/endpointslicemirroring/types';
import { mirroringWorkflowId } from '../../workflows/endpointslicemirroring/workflow';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { METADATA, type FieldMask } from '../informers/fields';
import type { RouteFamily } from '../informers/family';
import type { RouteContext } from '../../workers/descriptor';
import { flagGiven, intFlag } from '../../workers/flags';
import { endpointSliceMirroringWorkflow } from '../../workflows/endpointslicemirroring/workflow';

export const MIRRORING_MAX_ENDPOINTS_PER_SUBSET = intFlag('mirroring-max-endpoints-per-subset', 1000,
  'most addresses of one Endpoints subset mirrored into EndpointSlices (1..1000)', { max: 1000 });

export function mergeMirroringEvents(earlier: MirroringEvent, later: MirroringEvent): MirroringEvent {
  const slices = new Map<string, SliceEcho>();
  for (const s of [...(earlier.slices ?? []), ...(later.slices ?? [])]) slices.set(s.name, s);
  return {
    ...(earlier.changed || later.changed ? { changed: true } : {}),
    ...(earlier.relist || later.relist ? { relist: true } : {}),
    ...(slices.size ? { slices: [...slices.values()] } : {}),
  };
}

/** What hasSelector reads of a Service; Endpoints and slices are read for their metadata alone (METADATA). */
export const MIRRORING_SERVICE_FIELDS: FieldMask = { metadata: true, spec: { selector: true } };

/** Whether a Service selects pods (then its Endpoints are the endpoints controller's, not mirrored). */
export function hasSelector(o: KubeObject): boolean {
  const sel = (o.spec as { selector?: Record<string, string> | null } | undefined)?.selector;
  return !!sel && Object.keys(sel).length > 0;
}

/** Whether an Endpoints object is one to mirror, by its labels and annotations. */
export function mirrorable(o: KubeObject): boolean {
  return shouldMirrorEndpoints({ labels: o.metadata?.labels ?? {}, annotations: o.metadata?.annotations ?? {} });
}

/** The pair (`namespace/name`) a slice labelled as ours belongs to; undefined for anyone else's. */
export function sliceInfo(o: KubeObject): { key: string; name: string } | undefined {
  const labels = o.metadata?.labels ?? {};
  const svc = labels[LABEL_SERVICE_NAME];
  return labels[LABEL_MANAGED_BY] === MIRRORING_MANAGER && svc
    ? { key: `${o.metadata?.namespace ?? ''}/${svc}`, name: o.metadata?.name ?? '' } : undefined;
}

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Routes of the endpointslicemirroring controller, as upstream's handlers enqueue Endpoints keys:
 * a selector-less Service added or deleted, or gaining or losing its selector; an Endpoints object
 * that is (or was) to be mirrored; a mirrored slice that changed. Everything is read from the
 * shared stores (Endpoints and slices as metadata only).
 */
export function mirroringRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(MIRRORING_CONTROLLER)) return undefined;
  const maxEndpointsPerSubset = flagGiven(input.flags, MIRRORING_MAX_ENDPOINTS_PER_SUBSET);

  // every store first, listeners after: a listener looks into the others
  const services = cache.watch(RESOURCES.services, MIRRORING_SERVICE_FIELDS);
  const endpoints = cache.watch(RESOURCES.endpoints, METADATA);
  const slices = cache.watch(RESOURCES.endpointSlices, METADATA);

  const split = (key: string) => {
    const cut = key.indexOf('/');
    return { namespace: key.slice(0, cut), name: key.slice(cut + 1) };
  };
  const serviceAt = (key: string) => {
    const { namespace, name } = split(key);
    return services.getByName(namespace, name);
  };
  /** the pair's Endpoints, if it is one to mirror (a skip-mirror Endpoints counts as none) */
  const mirroredEndpoints = (key: string) => {
    const { namespace, name } = split(key);
    const o = endpoints.getByName(namespace, name);
    return o && mirrorable(o) ? o : undefined;
  };
  /** true / false: a Service with / without a selector; undefined: no Service */
  const selectorless = (key: string): boolean | undefined => {
    const s = serviceAt(key);
    return s ? !hasSelector(s) : undefined;
  };
  const pairMirrored = (key: string) => !!mirroredEndpoints(key) && selectorless(key) === true;

  const queue = (key: string, event: MirroringEvent) => {
    const { namespace, name } = split(key);
    const args: MirroringWorkflowInput = { namespace, name, tuning: input.tuning, ...(maxEndpointsPerSubset ? { maxEndpointsPerSubset } : {}) };
    signaller.queue({
      controller: MIRRORING_CONTROLLER, workflow: endpointSliceMirroringWorkflow, kind: 'Endpoints', namespace, name,
      uid: mirroredEndpoints(key)?.metadata?.uid ?? serviceAt(key)?.metadata?.uid ?? '', args, workflowId: mirroringWorkflowId(namespace, name),
    }, event, mergeMirroringEvents);
  };

  services.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const key = keyOf(ev.old);
        if (!hasSelector(ev.old) && mirroredEndpoints(key)) queue(key, { changed: true });
        return;
      }
      const key = keyOf(ev.obj);
      if (!mirroredEndpoints(key)) return;
      const before = ev.type === 'updated' ? !hasSelector(ev.old) : undefined;
      const now = !hasSelector(ev.obj);
      if (ev.source === 'watch') {
        // only the presence of a selector matters here, as upstream's update handler says
        if (before !== now) queue(key, { changed: true });
      } else if (before === undefined || before || now) {
        // a pair that might have changed while we were not watching, and has something to mirror or clean
        queue(key, { changed: true, relist: true });
      }
    },
  });

  endpoints.subscribe({
    onEvent(ev) {
      const key = keyOf(ev.type === 'deleted' ? ev.old : ev.obj);
      const was = ev.type !== 'added' && mirrorable(ev.old);
      const now = ev.type !== 'deleted' && mirrorable(ev.obj);
      if (!was && !now) return;
      const sl = selectorless(key);
      if (ev.source === 'watch' || ev.type === 'deleted') {
        // upstream enqueues whatever is or was to be mirrored; we also wait for a selector-less Service
        if (sl !== false) queue(key, { changed: true });
      } else if (sl === true) {
        // a list: a mirrored pair may have changed while we were not watching
        queue(key, { changed: true, relist: true });
      }
    },
  });

  type SliceInfo = ReturnType<typeof sliceInfo>;
  const routeSlice = (before: SliceInfo, now: SliceInfo, name: string, resourceVersion: string, deleted: boolean) => {
    const echo: SliceEcho = { name, resourceVersion, ...(deleted ? { deleted: true } : {}) };
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

  slices.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        // the store keeps the state before a watch delete; the delete's own version is the one it took in last
        const rv = ev.source === 'watch' ? slices.resourceVersion : ev.old.metadata?.resourceVersion ?? '';
        routeSlice(sliceInfo(ev.old), undefined, ev.old.metadata?.name ?? '', rv, true);
        return;
      }
      const now = sliceInfo(ev.obj);
      if (ev.source === 'watch') {
        routeSlice(ev.type === 'updated' ? sliceInfo(ev.old) : undefined, now, ev.obj.metadata?.name ?? '', ev.obj.metadata?.resourceVersion ?? '', false);
      } else if (now && !pairMirrored(now.key)) {
        // leftovers of pairs no longer mirrored (the pair routes cover the mirrored ones)
        queue(now.key, { changed: true, relist: true });
      }
    },
  });

  return {};
}
