import type { EndpointPod, ServiceView } from '../../workflows/service-endpoints/types';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';

type ContainerPortJson = { name?: string; containerPort: number; protocol?: string };

type PodObject = KubeObject & {
  spec?: {
    nodeName?: string; hostname?: string; subdomain?: string; restartPolicy?: string;
    containers?: Array<{ ports?: ContainerPortJson[] }>;
    initContainers?: Array<{ restartPolicy?: string; ports?: ContainerPortJson[] }>;
  };
  status?: { phase?: string; podIP?: string; podIPs?: Array<{ ip: string }>; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
};

type ServiceObject = KubeObject & {
  spec?: {
    selector?: Record<string, string>; ports?: Array<{ name?: string; protocol?: string; port: number; targetPort?: number | string; appProtocol?: string }>;
    clusterIP?: string; type?: string; publishNotReadyAddresses?: boolean; ipFamilies?: string[]; trafficDistribution?: string;
  };
};

const CONTAINER_PORT_FIELDS: FieldMask = { name: true, containerPort: true, protocol: true };

/** What endpointPod reads of a pod: the shared pods store keeps this much of it for the endpoints controllers. */
export const ENDPOINT_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: {
    nodeName: true, hostname: true, subdomain: true, restartPolicy: true,
    containers: { ports: CONTAINER_PORT_FIELDS },
    initContainers: { restartPolicy: true, ports: CONTAINER_PORT_FIELDS },
  },
  status: { phase: true, podIP: true, podIPs: { ip: true }, conditions: { type: true, status: true, lastTransitionTime: true } },
};

/** A pod as the endpoints and endpointslice controllers read it; `zone` is its Node's, as the watch knows it. */
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

/** What serviceView reads of a Service (the mirroring controller's selector is part of it). */
export const SERVICE_VIEW_FIELDS: FieldMask = {
  metadata: true,
  spec: {
    selector: true, ports: { name: true, protocol: true, port: true, targetPort: true, appProtocol: true },
    clusterIP: true, type: true, publishNotReadyAddresses: true, ipFamilies: true, trafficDistribution: true,
  },
};

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
