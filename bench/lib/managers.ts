import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { OPEN_METRICS_ARGS, probeSecurePort } from '../../starter/local/http-probe';
import { repoRoot } from '../../starter/local/paths';
import { PortAllocator } from '../../starter/local/ports';
import { BenchStack } from './stack';
import { waitFor } from './util';

export type Impl = 'upstream' | 'ours';

/** The client-side API rate limit both managers get, by name. */
export interface Setting {
  name: 'default' | 'lifted';
  qps: number;
  burst: number;
}

export const SETTINGS: Record<Setting['name'], Setting> = {
  // kube-controller-manager's own defaults
  default: { name: 'default', qps: 20, burst: 30 },
  lifted: { name: 'lifted', qps: 1000, burst: 2000 },
};

export interface ManagerOptions {
  impl: Impl;
  /** short names both accept, e.g. ['replicaset', 'deployment'] */
  controllers: string[];
  setting: Setting;
  /** upstream: Lease leader election on; ours: several `run` replicas on one task queue */
  leaderElect?: boolean;
  /** ours: the task queue; a restart with the same queue finds its workflows again */
  taskQueue?: string;
  /** a label for log file names */
  tag: string;
  /** ours: run under node --cpu-prof, writing into a directory of this one named after the process */
  cpuProfileDir?: string;
  /** that directory's name (default `${tag}-${index}`): a scenario whose managers do different work names them by it */
  cpuProfileName?: string;
  /** ours: more `run` flags (the cache-cap bench's --max-cached-workflows) */
  extraFlags?: string[];
  /** ours: environment variables set on top of this process's (the memory study's MALLOC_ARENA_MAX) */
  env?: Record<string, string>;
  /**
   * both: each controller writes as its own ServiceAccount (`--use-service-account-credentials`), as
   * kubeadm runs the manager, so the audit log tells the controllers' writes from kwok's and the
   * harness's; on unless false
   */
  serviceAccountCredentials?: boolean;
  /**
   * both: the kubeconfig the controllers talk to the API server with (default the stack's
   * system:kube-controller-manager one, as kubeadm gives it; chaos: its fault proxy)
   */
  kubeconfigPath?: string;
  /** ours: the Temporal address (default the stack's; chaos: a relay it cuts) */
  temporalAddress?: string;
}

/** One controller-manager process we started, and only ever signal by its own pid. */
export interface ManagedProcess {
  pid: number;
  port: number;
  logFile: string;
  alive(): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const ports = new PortAllocator();
const running = new Set<ManagedProcess>();

/** Whatever a failing run left behind: every process started through this module, by pid. */
export async function killAllStarted(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill('SIGKILL')));
}

function track(child: ChildProcess, port: number, logFile: string): ManagedProcess {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc: ManagedProcess = {
    pid: child.pid!,
    port,
    logFile,
    alive: () => child.exitCode === null && child.signalCode === null,
    kill: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (proc.alive()) child.kill(signal);
      const t = setTimeout(() => proc.alive() && child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
      running.delete(proc);
    },
  };
  running.add(proc);
  return proc;
}

function openLog(stack: BenchStack, name: string): { fd: number; file: string } {
  const file = path.join(stack.dataDir, 'logs', `bench-${name}.log`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a');
  fs.writeSync(fd, `\n===== ${new Date().toISOString()}\n`);
  return { fd, file };
}

async function waitHealthy(proc: ManagedProcess, port: number, path: string): Promise<void> {
  await waitFor(`${path} on port ${port} (see ${proc.logFile})`, async () => {
    if (!proc.alive()) throw new Error(`exited during start-up; see ${proc.logFile}`);
    return (await probeSecurePort(port, path)).status === 200;
  }, 120_000, 200);
}

let upstreamBinary: Promise<string> | undefined;

export async function startUpstream(stack: BenchStack, o: ManagerOptions, index: number): Promise<ManagedProcess> {
  upstreamBinary ??= ensureBinaries(['kube-controller-manager']).then((b) => b['kube-controller-manager']);
  const binary = await upstreamBinary;
  const port = await ports.take('bench upstream kcm');
  const kc = stack.managerKubeconfigPath;
  const { fd, file } = openLog(stack, `upstream-${o.tag}-${index}`);
  const child = spawn(binary, [
    `--kubeconfig=${o.kubeconfigPath ?? kc}`, `--authentication-kubeconfig=${kc}`, `--authorization-kubeconfig=${kc}`,
    `--controllers=${o.controllers.join(',')}`,
    `--leader-elect=${o.leaderElect ? 'true' : 'false'}`,
    '--bind-address=127.0.0.1', `--secure-port=${port}`,
    `--cert-dir=${path.join(stack.dataDir, 'bench-kcm-certs', String(port))}`,
    `--kube-api-qps=${o.setting.qps}`, `--kube-api-burst=${o.setting.burst}`,
    `--use-service-account-credentials=${o.serviceAccountCredentials !== false}`,
  ], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const proc = track(child, port, file);
  await waitHealthy(proc, port, '/healthz');
  return proc;
}

export async function startOurs(stack: BenchStack, o: ManagerOptions, index: number): Promise<ManagedProcess> {
  if (!o.taskQueue) throw new Error('ours needs a task queue');
  const port = await ports.take('bench temporal-kcm');
  const { fd, file } = openLog(stack, `ours-${o.tag}-${index}`);
  // worker threads (the workflow sandbox) get their own profile files next to the main thread's
  const profiling = o.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(o.cpuProfileDir, o.cpuProfileName ?? `${o.tag}-${index}`)] : [];
  const child = spawn(process.execPath, [
    ...profiling,
    path.join(repoRoot, 'bin', 'temporal-kcm.js'), 'run',
    '--kubeconfig', o.kubeconfigPath ?? stack.managerKubeconfigPath,
    '--temporal-address', o.temporalAddress ?? stack.temporalAddress,
    '--task-queue', o.taskQueue,
    '--controllers', o.controllers.join(','),
    // no Lease either way: replicas share the task queue instead
    '--leader-elect=false',
    '--bind-address', '127.0.0.1', '--secure-port', String(port),
    '--kube-api-qps', String(o.setting.qps), '--kube-api-burst', String(o.setting.burst),
    '--log-level', process.env.BENCH_LOG_LEVEL ?? 'warn',
    // the counters are read from /metrics without a token
    ...OPEN_METRICS_ARGS,
    `--use-service-account-credentials=${o.serviceAccountCredentials !== false}`,
    ...(o.extraFlags ?? []),
  ], { stdio: ['ignore', fd, fd], env: { ...process.env, ...o.env } });
  fs.closeSync(fd);
  const proc = track(child, port, file);
  await waitHealthy(proc, port, '/readyz');
  return proc;
}

export function startManager(stack: BenchStack, o: ManagerOptions, index = 0): Promise<ManagedProcess> {
  return o.impl === 'upstream' ? startUpstream(stack, o, index) : startOurs(stack, o, index);
}

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';

/** The Lease's holder, if it is held and renewed recently. */
export async function leaseHolder(stack: BenchStack): Promise<string | undefined> {
  const r = await stack.rest.request<{ spec?: { holderIdentity?: string; renewTime?: string } }>('GET', LEASE).catch(() => undefined);
  const s = r?.body.spec;
  if (!s?.holderIdentity || !s.renewTime) return undefined;
  return Date.now() - Date.parse(s.renewTime) < 15_000 ? s.holderIdentity : undefined;
}
