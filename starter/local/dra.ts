import type * as k8s from '@kubernetes/client-node';
import { clientNode } from './client-node';
import { nodeName } from './nodes';

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

function errorCode(e: unknown): number | undefined {
  const err = e as { code?: number; statusCode?: number; response?: { statusCode?: number } };
  return err.code ?? err.statusCode ?? err.response?.statusCode;
}

/** The DeviceClass and one ResourceSlice per kwok node (slices of nodes beyond `count` removed). */
export async function ensureDra(kc: k8s.KubeConfig, count: number): Promise<void> {
  const api = kc.makeApiClient(clientNode().CustomObjectsApi);
  const create = async (plural: string, body: object) => {
    try {
      await api.createClusterCustomObject({ group: GROUP, version: VERSION, plural, body });
    } catch (e) {
      if (errorCode(e) !== 409) throw e;
    }
  };
  await create('deviceclasses', deviceClassManifest());
  for (let i = 0; i < count; i++) await create('resourceslices', resourceSliceManifest(i));
  const wanted = new Set(Array.from({ length: count }, (_, i) => resourceSliceName(nodeName(i))));
  const list = (await api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'resourceslices' })) as { items?: Array<{ metadata?: { name?: string }; spec?: { driver?: string } }> };
  for (const s of list.items ?? []) {
    const name = s.metadata?.name;
    if (!name || s.spec?.driver !== DRA_DRIVER || wanted.has(name)) continue;
    try {
      await api.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'resourceslices', name });
    } catch (e) {
      if (errorCode(e) !== 404) throw e;
    }
  }
}
