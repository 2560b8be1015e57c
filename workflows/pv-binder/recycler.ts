import { roundUpToInteger, tryParseQuantity } from '../common/quantity';
import type { VolumeView } from './types';

/*
 * Upstream's recycler for host-path and NFS volumes with the Recycle policy: a pod named
 * `recycler-for-<volume>` mounts the volume at /scrub and empties it; the volume is Available
 * again once the pod has succeeded. The pod is built from a template (upstream's default, or the
 * --pv-recycler-pod-template-filepath-* file), its first volume pointed at the volume and its
 * activeDeadlineSeconds set from the volume's size.
 */

/** A pod as the API's JSON, as much of it as the recycler sets (the rest of a template rides along). */
export interface RecyclerPodJson {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; generateName?: string; namespace?: string; [k: string]: unknown };
  spec?: { activeDeadlineSeconds?: number; volumes?: Array<{ name: string; [source: string]: unknown }>; [k: string]: unknown };
  [k: string]: unknown;
}

/** Upstream's NewPersistentVolumeRecyclerPodTemplate. */
export function defaultRecyclerTemplate(): RecyclerPodJson {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'pv-recycler-', namespace: 'default' },
    spec: {
      activeDeadlineSeconds: 60,
      restartPolicy: 'Never',
      volumes: [{ name: 'vol' }],
      containers: [{
        name: 'pv-recycler',
        image: 'registry.k8s.io/build-image/debian-base:bookworm-v1.0.6',
        command: ['/bin/sh'],
        args: ['-c', 'test -e /scrub && find /scrub -mindepth 1 -delete && test -z "$(ls -A /scrub)" || exit 1'],
        volumeMounts: [{ name: 'vol', mountPath: '/scrub' }],
      }],
    },
  };
}

/** Upstream's ValidateRecyclerPodTemplate: the template must have a volume to point at the volume. */
export function recyclerTemplateError(t: RecyclerPodJson): string | undefined {
  return (t.spec?.volumes ?? []).length === 0 ? 'does not contain any volume(s)' : undefined;
}

export interface RecyclerTiming {
  minimumSeconds: number;
  incrementSeconds: number;
}

const GI = 1073741824n;

/** CalculateTimeoutForVolume: the increment per whole Gi of capacity (Value() rounds up to bytes), at least the minimum. */
export function recyclerTimeoutSeconds(capacity: string | undefined, t: RecyclerTiming): number {
  const q = tryParseQuantity(capacity);
  let bytes = 0n;
  if (q) {
    const r = roundUpToInteger(q);
    bytes = r.scale >= 0 ? r.value * 10n ** BigInt(r.scale) : r.value / 10n ** BigInt(-r.scale);
  }
  const timeout = Number(bytes / GI) * t.incrementSeconds;
  return Math.max(timeout, t.minimumSeconds);
}

export const recyclerPodName = (volumeName: string) => `recycler-for-${volumeName}`;

/** The recycler pod for a host-path or NFS volume. */
export function recyclerPod(template: RecyclerPodJson, v: VolumeView, timing: RecyclerTiming): RecyclerPodJson {
  const pod = structuredClone(template);
  const volumes = [...(pod.spec?.volumes ?? [])];
  const source = v.nfs ? { nfs: { server: v.nfs.server, path: v.nfs.path } } : { hostPath: { path: v.hostPath ?? '' } };
  volumes[0] = { name: volumes[0].name, ...source };
  const { generateName: _generated, ...meta } = pod.metadata ?? {};
  return {
    ...pod,
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...meta, name: recyclerPodName(v.name), namespace: meta.namespace || 'default' },
    spec: { ...pod.spec, activeDeadlineSeconds: recyclerTimeoutSeconds(v.capacity, timing), volumes },
  };
}
