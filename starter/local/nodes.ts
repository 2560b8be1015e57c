import type * as k8s from '@kubernetes/client-node';
import { KubeError, type KubeTarget, kubeRequest } from './metrics/kube';

/**
 * kwok manages only nodes carrying this label, so it never touches a real node by mistake. A label,
 * not an annotation, because the API server's watch tells kwok when a node stops matching a label
 * selector: a node whose label is taken away goes silent (no status, no Lease renewals), as a node
 * whose kubelet died, and comes back when the label returns.
 */
export const KWOK_MANAGED_LABEL = 'kwok.x-k8s.io/node';
export const KWOK_MANAGED_VALUE = 'fake';
/**
 * kwok leaves the status of a node with this label alone even while it still hears of the node
 * (a status write right after the managing label went away can reach it): with both, a silenced
 * node stays silent.
 */
export const KWOK_SILENT_LABEL = 'kwok.temporal-kcm.dev/silent';

/** The label change that silences a kwok node (`silent`) or brings it back. */
export function silenceLabels(silent: boolean): Record<string, string | null> {
  return silent ? { [KWOK_MANAGED_LABEL]: null, [KWOK_SILENT_LABEL]: 'true' } : { [KWOK_MANAGED_LABEL]: KWOK_MANAGED_VALUE, [KWOK_SILENT_LABEL]: null };
}
export const KWOK_NODE_LABEL = 'temporal-kcm.dev/local-node';
export const ZONES = ['zone-a', 'zone-b', 'zone-c'];

export function nodeName(i: number): string {
  return `kwok-node-${i}`;
}

/** 10.0.0.10, 10.0.0.11, ...: never routed anywhere, only reported. */
export function nodeIP(i: number): string {
  const n = 10 + i;
  return `10.0.${Math.floor(n / 250)}.${n % 250}`;
}

/**
 * What a kubelet with --enable-controller-attach-detach (its default) sets on its node: the
 * attach/detach controller attaches the node's volumes.
 */
export const ATTACH_MANAGED_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';

/** A Node as a kubelet would register it; kwok's node stages then fill conditions, addresses and its Lease. */
export function nodeManifest(i: number): k8s.V1Node {
  const name = nodeName(i);
  // Far more pods than a kubelet's default 110: kwok pods cost nothing, and tests and benchmarks
  // run thousands of them on three nodes.
  const resources = { cpu: '1000', memory: '4Ti', pods: '2000', 'ephemeral-storage': '10Ti' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [ATTACH_MANAGED_ANNOTATION]: 'true' },
      labels: {
        [KWOK_MANAGED_LABEL]: KWOK_MANAGED_VALUE,
        [KWOK_NODE_LABEL]: 'true',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'kwok',
        'topology.kubernetes.io/region': 'local',
        'topology.kubernetes.io/zone': ZONES[i % ZONES.length],
      },
    },
    spec: {},
    status: {
      allocatable: resources,
      capacity: resources,
      // distinct per node, as kubelets report them; kwok keeps addresses a node already has
      addresses: [{ type: 'InternalIP', address: nodeIP(i) }, { type: 'Hostname', address: name }],
    },
  };
}

/** A request of `local up`'s, with the answers that mean "already so" (an existing object's 409, a gone one's 404) taken as done. */
export async function setupRequest<T>(t: KubeTarget, method: string, path: string, opts: { body?: unknown; contentType?: string; alreadySo?: number } = {}): Promise<T | undefined> {
  try {
    return await kubeRequest<T>(t, method, path, { ...opts, userAgent: 'temporal-kcm-local-up' });
  } catch (e) {
    if (opts.alreadySo !== undefined && e instanceof KubeError && e.code === opts.alreadySo) return undefined;
    throw e;
  }
}

const NODES = '/api/v1/nodes';
const stackNodes = async (t: KubeTarget) =>
  (await setupRequest<k8s.V1NodeList>(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(`${KWOK_NODE_LABEL}=true`)}`))!.items;

/** Exactly `count` fake nodes: missing ones are registered, surplus ones (from an earlier `--nodes`) removed. */
export async function ensureNodes(t: KubeTarget, count: number): Promise<void> {
  const existing = await stackNodes(t);
  const have = new Set(existing.map((n) => n.metadata?.name));
  // nodes a stack of an earlier version registered: kwok then selected them by an annotation, and
  // they lacked the controller-managed attach annotation
  for (const n of existing) {
    const labelled = n.metadata?.labels?.[KWOK_MANAGED_LABEL] !== undefined;
    const attachManaged = n.metadata?.annotations?.[ATTACH_MANAGED_ANNOTATION] !== undefined;
    if (labelled && attachManaged) continue;
    const metadata = {
      ...(labelled ? {} : { labels: { [KWOK_MANAGED_LABEL]: KWOK_MANAGED_VALUE } }),
      ...(attachManaged ? {} : { annotations: { [ATTACH_MANAGED_ANNOTATION]: 'true' } }),
    };
    await setupRequest(t, 'PATCH', `${NODES}/${n.metadata!.name!}`, { body: { metadata }, contentType: 'application/merge-patch+json' });
  }
  for (let i = 0; i < count; i++) {
    if (!have.has(nodeName(i))) await setupRequest(t, 'POST', NODES, { body: nodeManifest(i), alreadySo: 409 });
  }
  const wanted = new Set(Array.from({ length: count }, (_, i) => nodeName(i)));
  for (const n of existing) {
    const name = n.metadata?.name;
    if (name && !wanted.has(name)) await setupRequest(t, 'DELETE', `${NODES}/${name}`, { alreadySo: 404 });
  }
}

export function isNodeReady(n: k8s.V1Node): boolean {
  return (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export async function readyNodeCount(t: KubeTarget): Promise<{ ready: number; total: number }> {
  const nodes = await stackNodes(t);
  return { ready: nodes.filter(isNodeReady).length, total: nodes.length };
}

/** Stack nodes carrying `key`'s taint with `effect`. */
export async function nodesTainted(t: KubeTarget, key: string, effect: string): Promise<string[]> {
  return (await stackNodes(t)).filter((n) => (n.spec?.taints ?? []).some((x) => x.key === key && x.effect === effect)).map((n) => n.metadata!.name!);
}

/**
 * The ServiceAccount admission plugin refuses pods in a namespace without a `default`
 * ServiceAccount; the serviceaccount controller is what creates it. Until this project runs that
 * controller, the stack creates it in the `default` namespace so the quickstart's first
 * Deployment gets its pods.
 */
export async function ensureDefaultServiceAccount(t: KubeTarget): Promise<void> {
  await setupRequest(t, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }, alreadySo: 409 });
}
