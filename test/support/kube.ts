import type { ClusterAccess } from '../../activities/kube/kubeconfig';
import { ApiError, KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import type { KubeObject } from '../../activities/kube/projections';
import { testClusterAccess } from './cluster';

/** Plain REST against the test cluster (no client-side rate limit), for arbitrary patches. */
export function testRest(kc: ClusterAccess = testClusterAccess()): KubeRest {
  return new KubeRest(kc, new TokenBucket(0, 0));
}

export interface PodObject extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']>;
}

export async function listPods(rest: KubeRest, ns: string, labelSelector?: string): Promise<PodObject[]> {
  const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
  return (await rest.request<{ items: PodObject[] }>('GET', `/api/v1/namespaces/${ns}/pods${q}`)).body.items;
}

/** The first container's image of a pod. */
export const podImage = (p: PodObject) => (p.spec as { containers: Array<{ image: string }> }).containers[0].image;

/** Pods that count for a controller: not being deleted, not finished. */
export const livePods = (pods: PodObject[]) => pods.filter((p) => !p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(String(p.status?.phase)));

export function controllerUid(o: KubeObject): string | undefined {
  return o.metadata?.ownerReferences?.find((r) => r.controller)?.uid;
}

export function mergePatch(rest: KubeRest, path: string, body: unknown) {
  return rest.request<KubeObject>('PATCH', path, { body, contentType: 'application/merge-patch+json' });
}

export async function eventsFor(rest: KubeRest, ns: string, name: string, reason?: string): Promise<Array<{ reason: string; message: string; type: string; count?: number }>> {
  const r = await rest.request<{ items: Array<{ reason: string; message: string; type: string; count?: number; involvedObject: { name: string } }> }>(
    'GET', `/api/v1/namespaces/${ns}/events`);
  return r.body.items.filter((e) => e.involvedObject.name === name && (!reason || e.reason === reason));
}

/**
 * How many times an object's Events of a reason were recorded: a repeat is counted up on the first
 * Event (its `count`), as client-go's recorder does, so the number of Event objects is not it.
 */
export async function eventCount(rest: KubeRest, ns: string, name: string, reason: string): Promise<number> {
  return (await eventsFor(rest, ns, name, reason)).reduce((n, e) => n + (e.count ?? 1), 0);
}

/**
 * Remove what a test created in its namespace: owners first (their workflows end), then pods.
 * Nothing else would: no namespace or garbage collector controller runs yet, and leftover pods
 * fill the kwok nodes for the tests after.
 */
export async function cleanNamespace(rest: KubeRest, ns: string): Promise<void> {
  for (const path of [`/apis/apps/v1/namespaces/${ns}/replicasets`, `/api/v1/namespaces/${ns}/replicationcontrollers`, `/api/v1/namespaces/${ns}/pods`]) {
    await rest.request('DELETE', path, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  }
}

/** GET one object; undefined when it does not exist (404), any other failure thrown. */
export async function getIfExists<T>(rest: KubeRest, path: string): Promise<T | undefined> {
  try {
    return (await rest.request<T>('GET', path)).body;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}
