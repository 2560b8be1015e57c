import type { RouteFactory } from '../../workers/descriptor';
import { CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../workflows/endpointslice/types';
import { mergeServicePodsEvents } from '../../workflows/service-endpoints/state';
import type { EndpointPod, ServicePodsEvent, ServiceView } from '../../workflows/service-endpoints/types';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import { SetIndex } from '../informers/set-index';
import type { Signaller } from '../informers/signaller';
import { flagGiven, intFlag } from '../../workers/flags';
import { endpointsWorkflow } from '../../workflows/endpoints/workflow';
import { endpointSliceWorkflow } from '../../workflows/endpointslice/workflow';

export const MAX_ENDPOINTS_PER_SLICE = intFlag('max-endpoints-per-slice', 100, 'most endpoints one EndpointSlice holds (1..1000)', { max: 1000 });

export const SERVICES_PATH = '/api/v1/services';
const PODS_PATH = '/api/v1/pods';
const NODES_PATH = '/api/v1/nodes';
const ENDPOINTS_PATH = '/api/v1/endpoints';
const ENDPOINTSLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The controllers fed by these routes, and how their workflows are named and started. */
const TARGETS = [
  { controller: 'endpoint', prefix: 'endpoints' },
  { controller: 'endpointslice', prefix: 'endpointslice' },
] as const;

type PodObject = KubeObject & {
  spec?: {
    nodeName?: string; hostname?: string; subdomain?: string; restartPolicy?: string;
    containers?: Array<{ ports?: Array<{ name?: string; containerPort: number; protocol?: string }> }>;
    initContainers?: Array<{ restartPolicy?: string; ports?: Array<{ name?: string; containerPort: number; protocol?: string }> }>;
  };
  status?: { phase?: string; podIP?: string; podIPs?: Array<{ ip: string }>; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
};

type ServiceObject = KubeObject & {
  spec?: {
    selector?: Record<string, string>; ports?: Array<{ name?: string; protocol?: string; port: number; targetPort?: number | string; appProtocol?: string }>;
    clusterIP?: string; type?: string; publishNotReadyAddresses?: boolean; ipFamilies?: string[]; trafficDistribution?: string;
  };
};

export function endpointPod(o: PodObject, zone: string | undefined): EndpointPod {
  const m = o.metadata ?? {};
  const spec = o.spec ?? {};
  const st = o.status ?? {};
  const ips = (st.podIPs ?? []).map((x) => x.ip);
  if (st.podIP && !ips.includes(st.podIP)) ips.unshift(st.podIP);
  const transitions = (st.conditions ?? []).map((c) => c.lastTransitionTime ?? '').filter(Boolean).sort();
  const sidecars = (spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  const readySince = (st.conditions ?? []).find((c) => c.type === 'Ready')?.lastTransitionTime;
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    labels: m.labels ?? {},
    ips,
    ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
    ...(zone ? { zone } : {}),
    ...(spec.hostname ? { hostname: spec.hostname } : {}),
    ...(spec.subdomain ? { subdomain: spec.subdomain } : {}),
    phase: st.phase ?? 'Pending',
    restartPolicy: spec.restartPolicy ?? 'Always',
    ready: (st.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ports: [...(spec.containers ?? []), ...sidecars].flatMap((c) => (c.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}), containerPort: p.containerPort, protocol: p.protocol ?? 'TCP',
    }))),
    ...(transitions.length ? { lastTransitionTime: transitions[transitions.length - 1] } : {}),
    ...(readySince ? { readyTransitionTime: readySince } : {}),
    creationTimestamp: m.creationTimestamp ?? '',
  };
}

export function serviceView(o: ServiceObject): ServiceView {
  const m = o.metadata ?? {};
  const spec = o.spec ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    // an empty selector does not survive the API's encoding: no selector at all
    ...(spec.selector && Object.keys(spec.selector).length ? { selector: spec.selector } : {}),
    ports: (spec.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}), protocol: p.protocol ?? 'TCP', port: p.port,
      ...(p.targetPort !== undefined ? { targetPort: p.targetPort } : {}), ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    })),
    ...(spec.clusterIP ? { clusterIP: spec.clusterIP } : {}),
    type: spec.type ?? 'ClusterIP',
    publishNotReadyAddresses: !!spec.publishNotReadyAddresses,
    ipFamilies: spec.ipFamilies ?? ['IPv4'],
    labels: m.labels ?? {},
    ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
  };
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Equal for the controllers: same but for the version (a status heartbeat of kwok, say). */
const samePod = (a: EndpointPod, b: EndpointPod) => JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });

/**
 * Routes of the endpoints and endpointslice controllers, as upstream's handlers queue Services:
 * a Service to itself (with all its pods when it is new, relisted or its selector changed), a pod
 * to every Service whose selector matches it before or after the change. Services are found
 * through an index by namespace and one of their selector's label pairs, so a pod event looks
 * only at the Services that could select it, not at every Service.
 */
export function serviceRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  const targets = TARGETS.filter((t) => input.controllers.includes(t.controller));
  if (!targets.length) return undefined;
  const maxEndpointsPerSlice = flagGiven(input.flags, MAX_ENDPOINTS_PER_SLICE);
  const services = new Map<string, ServiceView>(); // ns/name -> service (with selector)
  const index = new SetIndex<string, string>(); // ns \0 k=v -> service keys
  const pods = new Map<string, EndpointPod>(); // uid -> pod
  const podsByNs = new SetIndex<string, string>();
  const zones = new Map<string, string>(); // node -> zone
  const listed = { services: false, pods: false };

  const keyOf = (s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`;
  const indexKey = (s: ServiceView) => {
    const [k, v] = Object.entries(s.selector ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))[0];
    return `${s.namespace}\0${k}=${v}`;
  };
  const setIndexed = (s: ServiceView, add: boolean) => {
    if (!s.selector) return;
    if (add) index.add(indexKey(s), keyOf(s));
    else index.delete(indexKey(s), keyOf(s));
  };
  const servicesFor = (p: EndpointPod): ServiceView[] => {
    const out: ServiceView[] = [];
    for (const [k, v] of Object.entries(p.labels)) {
      for (const key of index.get(`${p.namespace}\0${k}=${v}`)) {
        const s = services.get(key);
        if (s?.selector && matches(s.selector, p.labels)) out.push(s);
      }
    }
    return out;
  };
  const podsOf = (s: ServiceView): EndpointPod[] =>
    [...podsByNs.get(s.namespace)].map((u) => pods.get(u)!).filter((p) => p && s.selector && matches(s.selector, p.labels));

  const send = (s: { namespace: string; name: string; uid: string }, event: ServicePodsEvent, only?: (typeof TARGETS)[number]) => {
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
  const full = (s: ServiceView) => send(s, { service: s, pods: podsOf(s), relist: true });
  const endpointTarget = targets.find((t) => t.controller === 'endpoint');

  const putPod = (p: EndpointPod) => {
    pods.set(p.uid, p);
    podsByNs.add(p.namespace, p.uid);
  };
  const dropPod = (p: EndpointPod) => {
    pods.delete(p.uid);
    podsByNs.delete(p.namespace, p.uid);
  };
  const routePod = (before: EndpointPod | undefined, after: EndpointPod | undefined) => {
    if (!listed.services || !listed.pods) return;
    if (before && after && samePod(before, after)) return;
    const now = new Map((after ? servicesFor(after) : []).map((s) => [keyOf(s), s]));
    for (const s of now.values()) send(s, { pods: [after!] });
    for (const s of before ? servicesFor(before) : []) if (!now.has(keyOf(s))) send(s, { podsGone: [before!.uid] });
  };

  const servicesHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const s = serviceView(o);
        seen.add(keyOf(s));
        const before = services.get(keyOf(s));
        if (before) setIndexed(before, false);
        services.set(keyOf(s), s);
        setIndexed(s, true);
      }
      for (const [k, s] of [...services]) {
        if (seen.has(k)) continue;
        setIndexed(s, false);
        services.delete(k);
        send(s, { serviceDeletedUid: s.uid });
      }
      listed.services = true;
      if (listed.pods) for (const s of services.values()) full(s);
    },
    event(type, o) {
      const s = serviceView(o);
      const before = services.get(keyOf(s));
      if (before) setIndexed(before, false);
      if (type === 'DELETED') {
        services.delete(keyOf(s));
        send(s, { serviceDeletedUid: s.uid });
        return;
      }
      services.set(keyOf(s), s);
      setIndexed(s, true);
      if (!listed.pods) return;
      const selectorChanged = JSON.stringify(before?.selector ?? null) !== JSON.stringify(s.selector ?? null) || before?.uid !== s.uid;
      if (selectorChanged) full(s);
      else send(s, { service: s });
    },
  };

  const podsHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const p = endpointPod(o, zones.get((o as PodObject).spec?.nodeName ?? ''));
        seen.add(p.uid);
        putPod(p);
      }
      for (const [u, p] of [...pods]) if (!seen.has(u)) dropPod(p);
      listed.pods = true;
      if (listed.services) for (const s of services.values()) full(s);
    },
    event(type, o) {
      const p = endpointPod(o, zones.get((o as PodObject).spec?.nodeName ?? ''));
      const before = pods.get(p.uid);
      if (type === 'DELETED') {
        dropPod(p);
        routePod(before ?? p, undefined);
      } else {
        putPod(p);
        routePod(before, p);
      }
    },
  };

  const setZone = (node: string, zone: string) => {
    if ((zones.get(node) ?? '') === zone) return;
    zones.set(node, zone);
    // the pods on it now sit in another zone
    for (const p of [...pods.values()]) {
      if (p.nodeName !== node) continue;
      const next: EndpointPod = { ...p, zone };
      if (!zone) delete next.zone;
      putPod(next);
      routePod(p, next);
    }
  };
  const nodesHandler: Handler = {
    relisted(objects) {
      for (const o of objects) setZone(o.metadata?.name ?? '', o.metadata?.labels?.[ZONE_LABEL] ?? '');
    },
    event(type, o) {
      setZone(o.metadata?.name ?? '', type === 'DELETED' ? '' : o.metadata?.labels?.[ZONE_LABEL] ?? '');
    },
  };

  // Endpoints someone deleted are written again, as upstream's handler for their deletion does
  const endpointsHandler: Handler = {
    relisted() { /* a relisted Service already carries everything its workflow compares against */ },
    event(type, o) {
      const s = services.get(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`);
      if (type === 'DELETED' && s?.selector && endpointTarget) send(s, { service: s }, endpointTarget);
    },
  };

  // A managed slice someone deleted is replaced, as upstream's slice handler makes happen: the
  // workflow is sent everything again, which makes it re-read its slices. Our own deletions come
  // back here too and cost one reconcile that finds nothing to do.
  const sliceTarget = targets.find((t) => t.controller === 'endpointslice');
  const slicesHandler: Handler = {
    relisted() { /* the Services' relist already makes every workflow re-read its slices */ },
    event(type, o) {
      const labels = o.metadata?.labels ?? {};
      if (type !== 'DELETED' || labels[MANAGED_BY_LABEL] !== CONTROLLER_NAME) return;
      const s = services.get(`${o.metadata?.namespace ?? ''}/${labels[SERVICE_NAME_LABEL] ?? ''}`);
      if (s?.selector && sliceTarget && listed.pods) send(s, { service: s, pods: podsOf(s), relist: true }, sliceTarget);
    },
  };

  return {
    handlers: new Map<string, Handler>([[SERVICES_PATH, servicesHandler], [PODS_PATH, podsHandler], [NODES_PATH, nodesHandler],
      ...(endpointTarget ? [[ENDPOINTS_PATH, endpointsHandler] as [string, Handler]] : []),
      ...(sliceTarget ? [[ENDPOINTSLICES_PATH, slicesHandler] as [string, Handler]] : [])]),
    metadataOnly: new Set([NODES_PATH, ENDPOINTS_PATH, ENDPOINTSLICES_PATH]),
    sizes: () => ({ services: services.size, endpointPods: pods.size }),
  };
}

/** Both controllers share one engine (one Service, pod and node cache); the informer builds it once. */
export const serviceEndpointsRoutes: RouteFactory = ({ input, signaller }) => serviceRoutes(input, signaller);
