import type { KubeRest } from '../../activities/kube/rest';

/** One pod behind one Service, and whether it is (or should be shown) Ready. */
export interface PodReadiness {
  service: string;
  pod: string;
  ready: boolean;
}

/** Per Service, per pod name: Ready or not, or `conflict` when the pod is listed both ways at once. */
export type ShownReadiness = Map<string, Map<string, boolean | 'conflict'>>;

interface EndpointAddress { ip?: string; targetRef?: { name?: string } }

export interface EndpointsObject {
  metadata?: { name?: string };
  subsets?: Array<{ addresses?: EndpointAddress[]; notReadyAddresses?: EndpointAddress[] }>;
}

export interface EndpointSliceObject {
  metadata?: { labels?: Record<string, string> };
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean }; targetRef?: { name?: string } }>;
}

const SERVICE_NAME = 'kubernetes.io/service-name';

function note(shown: ShownReadiness, service: string, pod: string | undefined, ready: boolean): void {
  if (!pod) return;
  let pods = shown.get(service);
  if (!pods) shown.set(service, (pods = new Map()));
  const prev = pods.get(pod);
  pods.set(pod, prev === undefined || prev === ready ? ready : 'conflict');
}

/** What Endpoints objects say about each pod: `addresses` are Ready, `notReadyAddresses` are not. */
export function readinessInEndpoints(items: EndpointsObject[]): ShownReadiness {
  const shown: ShownReadiness = new Map();
  for (const e of items) {
    const service = e.metadata?.name;
    if (!service) continue;
    for (const s of e.subsets ?? []) {
      for (const a of s.addresses ?? []) note(shown, service, a.targetRef?.name ?? a.ip, true);
      for (const a of s.notReadyAddresses ?? []) note(shown, service, a.targetRef?.name ?? a.ip, false);
    }
  }
  return shown;
}

/** What EndpointSlices say about each pod, by the Service named in their label; `ready` unset counts as not Ready. */
export function readinessInSlices(items: EndpointSliceObject[]): ShownReadiness {
  const shown: ShownReadiness = new Map();
  for (const sl of items) {
    const service = sl.metadata?.labels?.[SERVICE_NAME];
    if (!service) continue;
    for (const ep of sl.endpoints ?? []) note(shown, service, ep.targetRef?.name ?? ep.addresses?.[0], ep.conditions?.ready === true);
  }
  return shown;
}

/** How many of the wanted pods are missing, shown in the other state, or shown both ways. */
export function disagreements(want: PodReadiness[], shown: ShownReadiness): number {
  return want.filter((w) => shown.get(w.service)?.get(w.pod) !== w.ready).length;
}

/** Pods whose readiness the namespace's Endpoints or EndpointSlices do not show as wanted (two LISTs). */
export async function readinessLag(rest: KubeRest, ns: string, want: PodReadiness[]): Promise<{ endpoints: number; slices: number }> {
  const [eps, slices] = await Promise.all([
    rest.request<{ items: EndpointsObject[] | null }>('GET', `/api/v1/namespaces/${ns}/endpoints`),
    rest.request<{ items: EndpointSliceObject[] | null }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`),
  ]);
  return {
    endpoints: disagreements(want, readinessInEndpoints(eps.body.items ?? [])),
    slices: disagreements(want, readinessInSlices(slices.body.items ?? [])),
  };
}
