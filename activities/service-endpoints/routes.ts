import type { RouteContext } from '../../workers/descriptor';
import { CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../workflows/endpointslice/types';
import { mergeServicePodsEvents } from '../../workflows/service-endpoints/state';
import type { EndpointPod, ServicePodsEvent, ServiceView } from '../../workflows/service-endpoints/types';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { METADATA } from '../informers/fields';
import type { RouteFamily } from '../informers/family';
import { BY_NAMESPACE, PODS_BY_NODE } from '../informers/indexes';
import type { StoreIndex } from '../informers/store';
import { ENDPOINT_POD_FIELDS, SERVICE_VIEW_FIELDS, endpointPod, serviceView } from './projections';
import { flagGiven, intFlag } from '../../workers/flags';
import { endpointsWorkflow } from '../../workflows/endpoints/workflow';
import { endpointSliceWorkflow } from '../../workflows/endpointslice/workflow';

// the activities read objects with the same projections as the routes
export { endpointPod, serviceView } from './projections';

export const MAX_ENDPOINTS_PER_SLICE = intFlag('max-endpoints-per-slice', 100, 'most endpoints one EndpointSlice holds (1..1000)', { max: 1000 });

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The controllers fed by these routes, and how their workflows are named and started. */
const TARGETS = [
  { controller: 'endpoint', prefix: 'endpoints' },
  { controller: 'endpointslice', prefix: 'endpointslice' },
] as const;
type RouteTarget = (typeof TARGETS)[number];

const selectorOf = (o: KubeObject): Record<string, string> | undefined => (o.spec as { selector?: Record<string, string> | null } | undefined)?.selector ?? undefined;

/**
 * Services by namespace and the first (sorted) pair of their selector: a pod can only be selected
 * by a Service filed under one of its own labels, so a pod event looks at those few Services, not
 * at every one. A Service without a selector is not filed.
 */
export const SERVICES_BY_SELECTOR_PAIR: StoreIndex = {
  name: 'service-endpoints/selector-pair',
  keys: (o) => {
    const first = Object.entries(selectorOf(o) ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))[0];
    return first ? [`${o.metadata?.namespace ?? ''}\0${first[0]}=${first[1]}`] : [];
  },
};


const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Equal for the controllers: same but for the version (a status heartbeat of kwok, say). */
const samePod = (a: EndpointPod, b: EndpointPod) => JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });

const zoneLabel = (node: KubeObject | undefined): string => node?.metadata?.labels?.[ZONE_LABEL] ?? '';

/**
 * Routes of the endpoints and endpointslice controllers, as upstream's handlers queue Services:
 * a Service to itself (with all its pods when it is new, relisted or its selector changed), a pod
 * to every Service whose selector matches it before or after the change, the pods of a Node whose
 * zone changed, and a Service whose Endpoints or managed slice someone deleted. Both controllers
 * share this one engine (the informer calls the factory once for both).
 */
export function serviceEndpointsRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  const targets = TARGETS.filter((t) => input.controllers.includes(t.controller));
  if (!targets.length) return undefined;
  const maxEndpointsPerSlice = flagGiven(input.flags, MAX_ENDPOINTS_PER_SLICE);
  const endpointTarget = targets.find((t) => t.controller === 'endpoint');
  const sliceTarget = targets.find((t) => t.controller === 'endpointslice');

  // every store first, listeners after: a listener may look into any of them
  const services = cache.watch(RESOURCES.services, SERVICE_VIEW_FIELDS);
  services.addIndex(SERVICES_BY_SELECTOR_PAIR);
  const pods = cache.watch(RESOURCES.pods, ENDPOINT_POD_FIELDS);
  pods.addIndex(BY_NAMESPACE);
  pods.addIndex(PODS_BY_NODE);
  // only a Node's zone label is read: its metadata is enough
  const nodes = cache.watch(RESOURCES.nodes, METADATA);

  const zoneOf = (p: KubeObject): string => {
    const node = (p.spec as { nodeName?: string } | undefined)?.nodeName;
    return node ? zoneLabel(nodes.getByName('', node)) : '';
  };
  const podView = (p: KubeObject, zone = zoneOf(p)) => endpointPod(p, zone);

  const servicesFor = (p: EndpointPod): ServiceView[] => {
    const out: ServiceView[] = [];
    for (const [k, v] of Object.entries(p.labels)) {
      for (const o of services.byIndex(SERVICES_BY_SELECTOR_PAIR, `${p.namespace}\0${k}=${v}`)) {
        const s = serviceView(o);
        if (s.selector && matches(s.selector, p.labels)) out.push(s);
      }
    }
    return out;
  };
  const podsOf = (s: ServiceView): EndpointPod[] =>
    s.selector ? pods.byIndex(BY_NAMESPACE, s.namespace).filter((p) => matches(s.selector!, p.metadata?.labels ?? {})).map((p) => podView(p)) : [];

  const send = (s: ServiceView, event: ServicePodsEvent, only?: RouteTarget) => {
    for (const t of only ? [only] : targets) {
      const who = { controller: t.controller, kind: 'Service', namespace: s.namespace, name: s.name, uid: s.uid, workflowId: `${t.prefix}/${s.namespace}/${s.name}` };
      const args = { namespace: s.namespace, name: s.name, uid: s.uid, tuning: input.tuning };
      if (t.controller === 'endpointslice') {
        signaller.queue({ ...who, workflow: endpointSliceWorkflow, args: { ...args, ...(maxEndpointsPerSlice ? { maxEndpointsPerSlice } : {}) } }, event, mergeServicePodsEvents);
      } else {
        signaller.queue({ ...who, workflow: endpointsWorkflow, args }, event, mergeServicePodsEvents);
      }
    }
  };
  const full = (s: ServiceView, only?: RouteTarget) => send(s, { service: s, pods: podsOf(s), relist: true }, only);
  /** once both Services and pods are listed (and after every later list of either), each Service hears everything afresh */
  // each Service on its own: one the route throws on leaves the others their full event
  const fullAll = services.eachObject((o) => full(serviceView(o)));

  const routePod = (before: EndpointPod | undefined, after: EndpointPod | undefined) => {
    // until both lists are in, the lists' fullAll covers every pod
    if (!services.synced || !pods.synced) return;
    if (before && after && samePod(before, after)) return;
    const now = new Map((after ? servicesFor(after) : []).map((s) => [s.uid, s]));
    for (const s of now.values()) send(s, { pods: [after!] });
    for (const s of before ? servicesFor(before) : []) if (!now.has(s.uid)) send(s, { podsGone: [before!.uid] });
  };

  services.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const s = serviceView(ev.old);
        send(s, { serviceDeletedUid: s.uid });
        return;
      }
      // a list ends in fullAll; before the pods are listed, their list does it
      if (ev.source !== 'watch' || !pods.synced) return;
      const s = serviceView(ev.obj);
      const before = ev.type === 'updated' ? serviceView(ev.old) : undefined;
      const selectorChanged = !before || JSON.stringify(before.selector ?? null) !== JSON.stringify(s.selector ?? null);
      if (selectorChanged) full(s);
      else send(s, { service: s });
    },
    onListed() {
      if (pods.synced) fullAll();
    },
  });

  pods.subscribe({
    onEvent(ev) {
      // a list (the first, or after a watch gap) reaches every Service as one full relist
      if (ev.source !== 'watch') return;
      if (ev.type === 'deleted') routePod(podView(ev.old), undefined);
      else routePod(ev.type === 'updated' ? podView(ev.old) : undefined, podView(ev.obj));
    },
    onListed() {
      if (services.synced) fullAll();
    },
  });

  nodes.subscribe({
    onEvent(ev) {
      const before = ev.type === 'added' ? '' : zoneLabel(ev.old);
      const after = ev.type === 'deleted' ? '' : zoneLabel(ev.obj);
      if (before === after) return;
      // the Node's pods now sit in another zone
      const name = (ev.type === 'deleted' ? ev.old : ev.obj).metadata?.name ?? '';
      for (const p of pods.byIndex(PODS_BY_NODE, name)) routePod(podView(p, before), podView(p, after));
    },
  });

  if (endpointTarget) {
    // Endpoints someone deleted are written again, as upstream's handler for their deletion does
    cache.watch(RESOURCES.endpoints, METADATA, {
      onEvent(ev) {
        if (ev.type !== 'deleted') return;
        const o = services.getByName(ev.old.metadata?.namespace ?? '', ev.old.metadata?.name ?? '');
        const s = o && serviceView(o);
        if (s?.selector) send(s, { service: s }, endpointTarget);
      },
    });
  }

  if (sliceTarget) {
    // A managed slice someone deleted is replaced, as upstream's slice handler makes happen: the
    // workflow is sent everything again, which makes it re-read its slices. Our own deletions come
    // back here too and cost one reconcile that finds nothing to do.
    cache.watch(RESOURCES.endpointSlices, METADATA, {
      onEvent(ev) {
        if (ev.type !== 'deleted') return;
        const labels = ev.old.metadata?.labels ?? {};
        if (labels[MANAGED_BY_LABEL] !== CONTROLLER_NAME) return;
        const o = services.getByName(ev.old.metadata?.namespace ?? '', labels[SERVICE_NAME_LABEL] ?? '');
        const s = o && serviceView(o);
        if (s?.selector && pods.synced) full(s, sliceTarget);
      },
    });
  }

  // a Service gone while no watch ran: told of its deletion as the watch would have told it (the
  // endpoints workflow checks the Service is gone before it deletes anything)
  return { sweeps: targets.map((t) => ({ controller: t.controller, kind: 'Service', store: services, reobserve: (uid) => ({ serviceDeletedUid: uid ?? '' } satisfies ServicePodsEvent) })) };
}
