import type * as k8s from '@kubernetes/client-node';
import type { KubeTarget } from './metrics/kube';
import { nodeName, setupRequest } from './nodes';

/**
 * The stand-in for a DRA driver, as kwok is for kubelets: a DeviceClass and, for each kwok node, a
 * ResourceSlice of a few devices, so kube-scheduler's DynamicResourceAllocation plugin (on by
 * default, the API being GA in 1.35) can allocate ResourceClaims and bind their pods. No driver
 * runs: kwok starts the pods whatever their claims, and nothing prepares the devices.
 */
export const DRA_DRIVER = 'gpu.example.com';
export const DRA_DEVICE_CLASS = 'gpu.example.com';
export const DRA_DEVICES_PER_NODE = 4;

const GROUP = 'resource.k8s.io';
const VERSION = 'v1';

export function deviceClassManifest(): k8s.KubernetesObject & { spec: object } {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeviceClass',
    metadata: { name: DRA_DEVICE_CLASS },
    spec: { selectors: [{ cel: { expression: `device.driver == "${DRA_DRIVER}"` } }] },
  };
}

export const resourceSliceName = (node: string): string => `${node}-${DRA_DRIVER}`;

export function resourceSliceManifest(i: number): k8s.KubernetesObject & { spec: object } {
  const node = nodeName(i);
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ResourceSlice',
    metadata: { name: resourceSliceName(node) },
    spec: {
      driver: DRA_DRIVER,
      nodeName: node,
      pool: { name: node, generation: 1, resourceSliceCount: 1 },
      devices: Array.from({ length: DRA_DEVICES_PER_NODE }, (_, d) => ({ name: `gpu-${d}`, attributes: { index: { int: d } } })),
    },
  };
}

/** The DeviceClass and one ResourceSlice per kwok node (slices of nodes beyond `count` removed). */
export async function ensureDra(t: KubeTarget, count: number): Promise<void> {
  const base = `/apis/${GROUP}/${VERSION}`;
  await setupRequest(t, 'POST', `${base}/deviceclasses`, { body: deviceClassManifest(), alreadySo: 409 });
  for (let i = 0; i < count; i++) await setupRequest(t, 'POST', `${base}/resourceslices`, { body: resourceSliceManifest(i), alreadySo: 409 });
  const wanted = new Set(Array.from({ length: count }, (_, i) => resourceSliceName(nodeName(i))));
  const list = await setupRequest<{ items?: Array<{ metadata?: { name?: string }; spec?: { driver?: string } }> }>(t, 'GET', `${base}/resourceslices`);
  for (const s of list?.items ?? []) {
    const name = s.metadata?.name;
    if (!name || s.spec?.driver !== DRA_DRIVER || wanted.has(name)) continue;
    await setupRequest(t, 'DELETE', `${base}/resourceslices/${name}`, { alreadySo: 404 });
  }
}
