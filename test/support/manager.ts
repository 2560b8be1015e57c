import { ChildProcess, spawn } from 'node:child_process';
import type { Client } from '@temporalio/client';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PortAllocator } from '../../starter/local/ports';
import { OPEN_METRICS_ARGS, probeSecurePort } from '../../starter/local/http-probe';
import { repoRoot } from '../../starter/local/paths';
import { pkiPaths } from '../../starter/local/pki';
import { readState, stackTemporal } from '../../starter/local/stack';
import { temporalTlsArgs } from '../../starter/local/temporal-topology';
import { TEST_DATA_DIR } from './stack';

/** A `temporal-kcm run` replica started by a test, as a separate process it can kill -9. */
export interface ManagerProcess {
  pid: number;
  port: number;
  logFile: string;
  child: ChildProcess;
  metrics(): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const ports = new PortAllocator();

/** Flags that give a replica the local cluster's signing key and CA, as a real cluster's KCM has them. */
export function clusterIdentityArgs(): string[] {
  const pki = pkiPaths(TEST_DATA_DIR);
  return ['--service-account-private-key-file', pki.serviceAccountKey, '--root-ca-file', pki.caCert];
}

/**
 * The manager as kubeadm runs it: its own identity is system:kube-controller-manager (the stack's
 * kube-controller-manager.kubeconfig, bound by upstream's bootstrap RBAC), and each controller
 * writes as its own ServiceAccount. A test that means to run otherwise passes its own
 * `--use-service-account-credentials=false` and says why.
 */
export function productionIdentityArgs(dataDir: string, extraArgs: readonly string[] = [], kubeconfig = managerKubeconfig(dataDir)): string[] {
  const own = extraArgs.some((a) => a.startsWith('--use-service-account-credentials'));
  return ['--kubeconfig', kubeconfig, ...(own ? [] : ['--use-service-account-credentials'])];
}

/** The manager's own kubeconfig on a stack (system:kube-controller-manager). */
export function managerKubeconfig(dataDir: string = TEST_DATA_DIR): string {
  return path.join(dataDir, 'kube-controller-manager.kubeconfig');
}

/**
 * `controllers` replaces the default `replicaset,replicationcontroller`; a `--controllers` in
 * extraArgs adds to it instead (the flag may be repeated). `openMetrics: false` leaves the secure
 * port's always-allowed paths at their default, for a test of the port itself (metrics() then
 * needs a token). `dataDir` runs it against another stack than the shared test stack (a file's own),
 * with that stack's Temporal flags (its mTLS files for the postgres topology). `temporalAddress`
 * points it elsewhere (a relay the test cuts); with `untilReady: false` it is returned once it
 * serves /healthz. `kubeconfig` replaces the manager's own (one naming a proxy in front of the API server).
 */
export async function startManagerProcess(
  taskQueue: string,
  extraArgs: string[] = [],
  opts: { controllers?: string; openMetrics?: boolean; dataDir?: string; temporalAddress?: string; untilReady?: boolean; kubeconfig?: string } = {},
): Promise<ManagerProcess> {
  const dataDir = opts.dataDir ?? TEST_DATA_DIR;
  const state = readState(dataDir);
  if (!state) throw new Error(`no stack up in ${dataDir}`);
  const temporal = stackTemporal(state);
  const port = await ports.take('manager metrics');
  const logFile = path.join(dataDir, 'logs', `manager-${taskQueue}-${port}.log`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [
    path.join(repoRoot, 'bin', 'temporal-kcm.js'), 'run',
    ...productionIdentityArgs(dataDir, extraArgs, opts.kubeconfig ?? managerKubeconfig(dataDir)),
    '--temporal-address', opts.temporalAddress ?? temporal.address,
    ...temporalTlsArgs(temporal.tls),
    '--task-queue', taskQueue,
    '--bind-address', '127.0.0.1',
    '--secure-port', String(port),
    '--leader-elect=false',
    '--controllers', opts.controllers ?? 'replicaset,replicationcontroller',
    // metrics() reads /metrics without a token
    ...(opts.openMetrics === false ? [] : OPEN_METRICS_ARGS),
    ...extraArgs,
  ], { stdio: ['ignore', out, out], env: { ...process.env, LOG_LEVEL: 'info' } });
  fs.closeSync(out);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`manager exited with ${child.exitCode}; see ${logFile}`);
    // a replica meant to wait for Temporal is up once it serves /healthz
    if ((await probeSecurePort(port, opts.untilReady === false ? '/healthz' : '/readyz')).status === 200) break;
    if (Date.now() > deadline) throw new Error(`manager not ready in 60s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    pid: child.pid!,
    port,
    logFile,
    child,
    metrics: async () => (await probeSecurePort(port, '/metrics')).body,
    kill: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Sum of a Prometheus counter's samples whose labels include every given label. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have: Record<string, string> = {};
    for (const kv of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) have[kv[1]] = kv[2];
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/**
 * A test file's replicas of ours, started with the file's controllers and flags and stopped
 * together: after each test and at the end, for a failed test must not leave one behind to race
 * the next.
 */
export class OurReplicas {
  private readonly running: ManagerProcess[] = [];

  constructor(private readonly controllers: string, private readonly args: string[] = ['--use-service-account-credentials']) {}

  /** A replica on `taskQueue`; `opts` replaces the file's flags or controllers for this one. */
  async start(taskQueue: string, opts: { args?: string[]; controllers?: string } = {}): Promise<ManagerProcess> {
    const m = await startManagerProcess(taskQueue, opts.args ?? this.args, { controllers: opts.controllers ?? this.controllers });
    this.running.push(m);
    return m;
  }

  /** A replica the test killed itself: no longer one to stop. */
  forget(m: ManagerProcess): void {
    const i = this.running.indexOf(m);
    if (i >= 0) this.running.splice(i, 1);
  }

  /** Stops every replica, in the order they were started. */
  async stop(): Promise<void> {
    for (const m of this.running.splice(0)) await m.kill();
  }

  /** Upstream's manager first, then ours: what the files' afterEach and afterAll do. */
  async stopAfter(upstream: { stop(): Promise<void> }): Promise<void> {
    await upstream.stop();
    await this.stop();
  }
}

/** The pid in a worker identity (`<host>-<pid>`, as `run` names its workers), if there is one. */
export function pidOfIdentity(identity: string | null | undefined): number | undefined {
  const pid = Number(/-(\d+)$/.exec(identity ?? '')?.[1]);
  return Number.isFinite(pid) && pid > 0 ? pid : undefined;
}

/**
 * The pid of the replica doing a workflow's work now: the one running its pending activity; else,
 * as the replicaset and deployment controllers call the API from local activities, which run
 * inside a workflow task, the one that started its open workflow task, or failing that its last
 * one (the replica it is sticky to, which runs its next task). Undefined before any task ran.
 */
export async function pidWorkingOn(client: Client, workflowId: string): Promise<number | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  const activity = pidOfIdentity(d.raw.pendingActivities?.[0]?.lastWorkerIdentity);
  if (activity !== undefined) return activity;
  let open: string | undefined;
  let last: string | undefined;
  for (const e of (await handle.fetchHistory()).events ?? []) {
    if (e.workflowTaskStartedEventAttributes) open = last = e.workflowTaskStartedEventAttributes.identity ?? undefined;
    else if (e.workflowTaskCompletedEventAttributes || e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) open = undefined;
  }
  return pidOfIdentity(open ?? last);
}
