/**
 * What makes kube-apiserver's aggregation layer route the three metrics APIs to the stand-in:
 * a Service without a selector, an EndpointSlice the stack writes itself, and one APIService per
 * group-version. All three are applied (server-side apply, same field manager) on every `local up`,
 * so a changed host address or port is picked up.
 *
 * Why an EndpointSlice and no Endpoints: the 1.35 aggregator resolves a Service through
 * EndpointSlices only (k8s.io/apiserver/pkg/util/proxy ResolveEndpoint, and the APIService
 * availability controller), indexed by the kubernetes.io/service-name label whatever the manager.
 * The endpointslice controller leaves selectorless Services alone and only touches slices labelled
 * managed-by endpointslice-controller.k8s.io; the mirroring controller only mirrors Endpoints (there
 * are none) into slices labelled managed-by endpointslicemirroring-controller.k8s.io; the endpoints
 * controller skips selectorless Services. So nothing else writes or deletes these objects.
 */
import { KubeError, KubeTarget, kubeRequest } from './kube';
import { GROUP_VERSIONS } from './logic';

export const FIELD_MANAGER = 'temporal-kcm-local';
export const MANAGED_BY = 'temporal-kcm-local';
export const SERVICE_PORT = 443;
export const PORT_NAME = 'https';

export const apiServiceName = (g: { group: string; version: string }) => `${g.version}.${g.group}`;
export const API_SERVICE_NAMES = GROUP_VERSIONS.map(apiServiceName);

export interface WiringInput {
  namespace: string;
  name: string;
  address: string;
  port: number;
  /** PEM of the CA that signed the stand-in's serving cert */
  caBundle: Buffer;
}

/** The objects, as applied (exported for the unit tests). */
export function wiringObjects(w: WiringInput): Array<{ path: string; body: Record<string, unknown> }> {
  const labels = { 'app.kubernetes.io/name': 'temporal-kcm-metrics-standin', 'app.kubernetes.io/managed-by': MANAGED_BY };
  return [
    {
      path: `/api/v1/namespaces/${w.namespace}/services/${w.name}`,
      body: {
        apiVersion: 'v1', kind: 'Service',
        metadata: { name: w.name, namespace: w.namespace, labels },
        spec: { type: 'ClusterIP', ports: [{ name: PORT_NAME, port: SERVICE_PORT, targetPort: w.port, protocol: 'TCP' }] },
      },
    },
    {
      path: `/apis/discovery.k8s.io/v1/namespaces/${w.namespace}/endpointslices/${w.name}`,
      body: {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
        metadata: {
          name: w.name, namespace: w.namespace,
          labels: { ...labels, 'kubernetes.io/service-name': w.name, 'endpointslice.kubernetes.io/managed-by': MANAGED_BY },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [w.address], conditions: { ready: true, serving: true, terminating: false } }],
        ports: [{ name: PORT_NAME, port: w.port, protocol: 'TCP' }],
      },
    },
    ...GROUP_VERSIONS.map((g) => ({
      path: `/apis/apiregistration.k8s.io/v1/apiservices/${apiServiceName(g)}`,
      body: {
        apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService',
        metadata: { name: apiServiceName(g), labels },
        spec: {
          group: g.group, version: g.version,
          service: { namespace: w.namespace, name: w.name, port: SERVICE_PORT },
          caBundle: w.caBundle.toString('base64'),
          groupPriorityMinimum: 100, versionPriority: 100,
        },
      },
    })),
  ];
}

export async function applyWiring(t: KubeTarget, w: WiringInput): Promise<void> {
  // the slice and Service first: an APIService that resolves to nothing is unavailable
  for (const o of wiringObjects(w)) {
    await kubeRequest(t, 'PATCH', `${o.path}?fieldManager=${FIELD_MANAGER}&force=true`, { body: o.body, contentType: 'application/apply-patch+yaml' });
  }
}

interface ApiService {
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

/** Why each APIService is not Available yet ('' once all are). */
export async function unavailableApiServices(t: KubeTarget): Promise<string> {
  const why: string[] = [];
  for (const name of API_SERVICE_NAMES) {
    try {
      const s = await kubeRequest<ApiService>(t, 'GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
      const c = s.status?.conditions?.find((x) => x.type === 'Available');
      if (c?.status !== 'True') why.push(`${name}: ${c ? `${c.reason}: ${c.message}` : 'no Available condition yet'}`);
    } catch (e) {
      why.push(`${name}: ${e instanceof KubeError ? e.message : String(e)}`);
    }
  }
  return why.join('; ');
}
