import type { ControllerRefView, PdbPodView } from '../../workflows/disruption/types';
import { ApiError } from '../kube/rest';

/*
 * Upstream's pod controller finders (pkg/controller/disruption): the scale a budget's pods are
 * counted against is the sum, over the distinct controllers of its pods, of each controller's
 * replicas. Built-in workloads are looked up by kind; anything else through its scale subresource.
 */

/** A workload as the finders read it. */
export interface Workload {
  uid: string;
  replicas: number;
  controllerRef?: { apiVersion: string; kind: string; uid: string; name: string };
}

export type WorkloadKind = 'ReplicationController' | 'ReplicaSet' | 'Deployment' | 'StatefulSet';

/** What the finders ask of the cluster; the activity answers from the shared cache or the API. */
export interface WorkloadLookup {
  /** the named workload, or undefined when there is none */
  get(kind: WorkloadKind, namespace: string, name: string): Promise<Workload | undefined>;
  /**
   * The scale subresource of whatever the reference names: its UID and replicas, undefined when
   * the object is not found; throws (with upstream's message) when the kind is unknown or has no
   * scale subresource.
   */
  scale(ref: ControllerRefView, namespace: string): Promise<{ uid: string; replicas: number } | undefined>;
}

/** schema.ParseGroupVersion: '' is the empty version, 'v1' the core group, one slash at most. */
export function groupOf(apiVersion: string): string {
  if (apiVersion === '' || apiVersion === '/') return '';
  const parts = apiVersion.split('/');
  if (parts.length === 1) return '';
  if (parts.length === 2) return parts[0];
  throw new Error(`unexpected GroupVersion string: ${apiVersion}`);
}

function isKind(ref: { apiVersion: string; kind: string }, kind: string, groups: readonly string[]): boolean {
  const group = groupOf(ref.apiVersion);
  return ref.kind === kind && groups.includes(group);
}

type Finder = (ref: ControllerRefView, ns: string, lookup: WorkloadLookup) => Promise<Workload | undefined>;

const APPS = ['apps', 'extensions'];

const replicationController: Finder = async (ref, ns, lookup) => {
  if (!isKind(ref, 'ReplicationController', [''])) return undefined;
  const rc = await lookup.get('ReplicationController', ns, ref.name);
  return rc?.uid === ref.uid ? rc : undefined;
};

/** a ReplicaSet under a Deployment counts as its Deployment */
const deployment: Finder = async (ref, ns, lookup) => {
  if (!isKind(ref, 'ReplicaSet', APPS)) return undefined;
  const rs = await lookup.get('ReplicaSet', ns, ref.name);
  if (!rs || rs.uid !== ref.uid || !rs.controllerRef) return undefined;
  if (!isKind(rs.controllerRef, 'Deployment', APPS)) return undefined;
  const d = await lookup.get('Deployment', ns, rs.controllerRef.name);
  return d?.uid === rs.controllerRef.uid ? d : undefined;
};

/** a ReplicaSet on its own; one a Deployment controls is left to the Deployment's finder */
const replicaSet: Finder = async (ref, ns, lookup) => {
  if (!isKind(ref, 'ReplicaSet', APPS)) return undefined;
  const rs = await lookup.get('ReplicaSet', ns, ref.name);
  if (!rs || rs.uid !== ref.uid) return undefined;
  if (rs.controllerRef?.kind === 'Deployment') return undefined;
  return rs;
};

const statefulSet: Finder = async (ref, ns, lookup) => {
  if (!isKind(ref, 'StatefulSet', ['apps'])) return undefined;
  const ss = await lookup.get('StatefulSet', ns, ref.name);
  return ss?.uid === ref.uid ? ss : undefined;
};

const scaleSubresource: Finder = async (ref, ns, lookup) => {
  groupOf(ref.apiVersion);
  const s = await lookup.scale(ref, ns);
  return s?.uid === ref.uid ? { uid: s.uid, replicas: s.replicas } : undefined;
};

const FINDERS: readonly Finder[] = [replicationController, deployment, replicaSet, statefulSet, scaleSubresource];

/**
 * Upstream's getExpectedScale: each pod's controller is found once (by the first finder that
 * knows it) and the scales of the distinct controllers are added up. Pods without a controller
 * are skipped (the workflow warns of them); a pod whose controller no finder knows is an error.
 * A transient API failure is thrown, to be retried.
 */
export async function expectedScale(namespace: string, pods: readonly PdbPodView[], lookup: WorkloadLookup): Promise<{ expectedCount: number } | { error: string }> {
  const scales = new Map<string, number>();
  const seenRefs = new Set<string>();
  try {
    for (const pod of pods) {
      const ref = pod.controllerRef;
      if (!ref) continue;
      if (seenRefs.has(ref.uid) || scales.has(ref.uid)) continue;
      let found: Workload | undefined;
      for (const find of FINDERS) {
        found = await find(ref, namespace, lookup);
        if (found) break;
      }
      if (!found) return { error: `found no controllers for pod ${JSON.stringify(pod.name)}` };
      seenRefs.add(ref.uid);
      scales.set(found.uid, found.replicas);
    }
  } catch (e) {
    // a throttled or failing API server is retried; a definite answer becomes the budget's error
    if (e instanceof ApiError && e.transient) throw e;
    return { error: e instanceof Error ? e.message : String(e) };
  }
  let total = 0;
  for (const n of scales.values()) total += n;
  return { expectedCount: total };
}
