import * as path from 'node:path';
import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { repoRoot } from '../../starter/local/paths';
import { readPid } from '../../starter/local/processes';
import { StackState, adminKubeConfig, down, readState, status, up } from '../../starter/local/stack';
import { Log, sleep } from './util';

export const BENCH_DATA_DIR = path.resolve(process.env.TEMPORAL_KCM_BENCH_DATA_DIR ?? path.join(repoRoot, '.local', 'bench-stack'));

export interface BenchStack {
  dataDir: string;
  state: StackState;
  kubeconfigPath: string;
  /** system:kube-controller-manager's kubeconfig: what both managers run with, as kubeadm runs them */
  managerKubeconfigPath: string;
  temporalAddress: string;
  /** Unthrottled admin client: the benchmark's own calls must not queue behind a limit. */
  rest: KubeRest;
  /** The Temporal dev server's pid, to sample it apart from our manager processes. */
  temporalPid(): number | undefined;
  /** True when this process brought the stack up and so must take it down. */
  startedHere: boolean;
}

function attach(dataDir: string, state: StackState, startedHere: boolean): BenchStack {
  return {
    dataDir,
    state,
    kubeconfigPath: path.join(dataDir, 'admin.kubeconfig'),
    managerKubeconfigPath: path.join(dataDir, 'kube-controller-manager.kubeconfig'),
    temporalAddress: `127.0.0.1:${state.ports.temporal}`,
    rest: new KubeRest(adminKubeConfig(dataDir), new TokenBucket(0, 0)),
    temporalPid: () => readPid(dataDir, 'temporal')?.pid,
    startedHere,
  };
}

/**
 * Bring the bench stack up (reusing a running one) with enough kwok capacity for the largest scenario.
 * A stack started here starts from empty stores, so runs start alike: Temporal's SQLite file kept
 * from earlier runs is half a GiB after one curve, and every history write goes into it.
 */
export async function startBenchStack(dataDir: string, log: Log): Promise<BenchStack> {
  const before = await status(dataDir);
  const wasRunning = before.parts.every((p) => p.healthy);
  if (!wasRunning) await down(dataDir, { purge: true, log: (l) => log(`[stack] ${l}`) });
  const state = await up({ dataDir, nodes: 3, log: (l) => log(`[stack] ${l}`) });
  return attach(dataDir, state, !wasRunning);
}

/** A stack somebody else runs (the e2e test stack): never stopped by us. */
export function attachRunningStack(dataDir: string): BenchStack {
  const state = readState(dataDir);
  if (!state) throw new Error(`no local stack state in ${dataDir}`);
  return attach(dataDir, state, false);
}

export async function stopBenchStack(stack: BenchStack, log: Log): Promise<void> {
  if (!stack.startedHere || process.env.BENCH_KEEP_STACK === '1') return;
  await down(stack.dataDir, { log: (l) => log(`[stack] ${l}`) });
}

/**
 * A namespace of its own per scenario run, with the `default` ServiceAccount created here: the
 * serviceaccount controller is not among the controllers a scenario enables, and pods are refused
 * in a namespace without that account.
 */
export async function freshNamespace(rest: KubeRest, prefix: string): Promise<string> {
  const name = `bench-${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels: { 'temporal-kcm.dev/bench': prefix } } } });
  await rest.request('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { body: { metadata: { name: 'default' } } });
  return name;
}

/**
 * Take every finalizer off the pods of a namespace, by hand: once the job controller is stopped,
 * nothing else removes its tracking finalizers, and `cleanNamespace` would wait for those pods in vain.
 */
export async function releasePodFinalizers(rest: KubeRest, ns: string): Promise<void> {
  const pods = await rest.request<{ items: Array<{ metadata?: { name?: string; finalizers?: string[] } }> | null }>('GET', `/api/v1/namespaces/${ns}/pods`)
    .then((r) => r.body.items ?? [], () => []);
  for (const pod of pods) {
    if (!(pod.metadata?.finalizers ?? []).length) continue;
    await rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/${pod.metadata?.name}`, {
      body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json',
    }).catch(() => undefined);
  }
}

/**
 * Empty a namespace without the garbage collector or namespace controller (neither runs in a
 * scenario): owners first, so a still-running manager stops replacing pods, then the pods, waiting
 * until kwok has removed them so the next scenario starts on an empty cluster.
 */
export async function cleanNamespace(rest: KubeRest, ns: string, timeoutMs = 120_000): Promise<void> {
  for (const p of [`/apis/apps/v1/namespaces/${ns}/deployments`, `/apis/apps/v1/namespaces/${ns}/replicasets`, `/api/v1/namespaces/${ns}/pods`]) {
    await rest.request('DELETE', p, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const left = await rest.request<{ items: unknown[] | null }>('GET', `/api/v1/namespaces/${ns}/pods?limit=1`, {
      accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    }).then((r) => (r.body.items ?? []).length, () => 1);
    if (!left) break;
    await sleep(500);
  }
  await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
}
