import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { KWOK_NODE_LABEL, nodeManifest, silenceLabels } from '../../starter/local/nodes';
import type { KubeRest } from '../../activities/kube/rest';
import { eventually } from './cluster';
import { TEST_DATA_DIR } from './stack';

/*
 * Nodes of a test's own, beside the stack's: kwok runs them as it runs the stack's, and a test
 * may taint them, silence them or delete them without touching any other test's pods.
 */

export const kubeconfigPath = () => path.join(TEST_DATA_DIR, 'admin.kubeconfig');

let kubectlBin: string | undefined;

/** kubectl against the test stack, as a user would type it. */
export async function kubectl(...args: string[]): Promise<string> {
  kubectlBin ??= (await ensureBinaries(['kubectl'])).kubectl;
  return new Promise((resolve, reject) => {
    execFile(kubectlBin!, ['--kubeconfig', kubeconfigPath(), ...args], { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout));
  });
}

export type NodeObject = {
  metadata?: { name?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { taints?: Array<{ key: string; value?: string; effect: string; timeAdded?: string }>; unschedulable?: boolean };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }> };
};

/**
 * Registers kwok node number `index` (900 and up stay clear of `local up --nodes`) under the
 * test's own name, not labelled as a stack node, in `zone`, and waits until kwok has it Ready.
 */
export async function addTestNode(rest: KubeRest, name: string, index: number, opts: { zone?: string; labels?: Record<string, string> } = {}): Promise<NodeObject> {
  const m = nodeManifest(index);
  const labels = { ...m.metadata!.labels!, 'kubernetes.io/hostname': name, ...opts.labels } as Record<string, string>;
  delete labels[KWOK_NODE_LABEL];
  if (opts.zone) labels['topology.kubernetes.io/zone'] = opts.zone;
  await rest.request('POST', '/api/v1/nodes', { body: { ...m, metadata: { ...m.metadata, name, labels },
    status: { ...m.status, addresses: [m.status!.addresses![0], { type: 'Hostname', address: name }] } } });
  return eventually(`node ${name} Ready`, async () => {
    const n = (await rest.request<NodeObject>('GET', `/api/v1/nodes/${name}`)).body;
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
  }, 60_000);
}

/**
 * Deletes a test's node and the Lease kwok renewed for it. The Lease is owned by the node, so a
 * garbage collector would remove it; but the test that made it runs none, and a later test that
 * runs one would first have to work through every Lease left this way before its own objects.
 */
export async function deleteTestNode(rest: KubeRest, name: string): Promise<void> {
  await rest.request('DELETE', `/api/v1/nodes/${name}`).catch(() => undefined);
  await rest.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`).catch(() => undefined);
}

/** deleteTestNode for many, 20 at a time. */
export async function deleteTestNodes(rest: KubeRest, names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((n) => deleteTestNode(rest, n)));
}

/** kwok stops heartbeating a node that loses its label: its Lease and status go stale, as a dead kubelet's would. */
export async function silenceNode(name: string): Promise<void> {
  await kubectl('label', 'node', name, ...labelArgs(silenceLabels(true)));
}

/** kwok takes the node back: it posts a Ready status at once and renews the Lease again. */
export async function reviveNode(name: string): Promise<void> {
  await kubectl('label', '--overwrite', 'node', name, ...labelArgs(silenceLabels(false)));
}

/** The same, for many nodes at once, by merge patch. */
export async function setSilent(rest: KubeRest, names: readonly string[], silent: boolean): Promise<void> {
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(names.slice(i, i + 20).map((name) => rest.request('PATCH', `/api/v1/nodes/${name}`, {
      contentType: 'application/merge-patch+json', body: { metadata: { labels: silenceLabels(silent) } },
    })));
  }
}

const labelArgs = (labels: Record<string, string | null>) => Object.entries(labels).map(([k, v]) => (v === null ? `${k}-` : `${k}=${v}`));
