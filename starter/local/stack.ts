import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { clientNode } from './client-node';
import { BASE_BINARIES, BinaryName, Logger, POSTGRES_TOPOLOGY_BINARIES, ensureBinaries, findOnPath, locateBinary } from './binaries';
import { repoRoot } from './paths';
import {
  AggregationPki, CLIENTS, FRONT_PROXY_CLIENT_CN, METRICS_SERVICE, Pki, SERVICE_CLUSTER_IP_RANGE, aggregationPkiPaths, ensureAggregationPki,
  ensurePki, ensureTemporalPki, pkiPaths, temporalPkiPaths,
} from './pki';
import { renderKubeconfig } from './kubeconfig';
import { PortAllocator, isPortFree } from './ports';
import type { KubeTarget } from './metrics/kube';
import { PidRecord, isOurs, readPid, removePid, startDetached, stopProcess, tailLog } from './processes';
import { probe } from './http-probe';
import { liftBootTaints } from './boot-taints';
import { ensureDra } from './dra';
import { KWOK_MANAGED_LABEL, KWOK_MANAGED_VALUE, KWOK_SILENT_LABEL, ensureDefaultServiceAccount, ensureNodes, readyNodeCount } from './nodes';
import { ensureDevSearchAttributes, ensureNamespace, temporalHealthy } from './temporal-dev';
import type { TemporalTarget } from '../run-options';
import {
  ServerPorts, TemporalTopology, chooseTopology, renderDynamicConfigYaml, renderServerConfigYaml, renderUiServerConfigYaml, serverArgs,
  serverConfigPaths, stackTemporalTarget, temporalTlsEnv, uiServerArgs, uiServerConfigPaths,
} from './temporal-topology';
import {
  POSTGRES_USER, RunAs, ensurePostgresCluster, ensureTemporalSchemas, postgresArgs, postgresBinDir, postgresPaths, postgresReady,
  postgresRunAs, readPostgresPassword,
} from './postgres';
import { applyWiring, unavailableApiServices } from './metrics/wiring';

export type ComponentName = 'etcd' | 'postgres' | 'temporal' | 'temporal-ui' | 'kube-apiserver' | 'kube-scheduler' | 'kwok' | 'metrics-standin';

/** The postgres topology's server ports nobody outside the server dials: picked free, no flags. */
export const INTERNAL_SERVER_PORT_NAMES = [
  'temporalFrontendMembership', 'temporalInternalFrontend', 'temporalInternalFrontendHttp', 'temporalInternalFrontendMembership',
  'temporalHistory', 'temporalHistoryMembership', 'temporalMatching', 'temporalMatchingMembership', 'temporalWorker', 'temporalWorkerMembership',
] as const;
type InternalServerPortName = (typeof INTERNAL_SERVER_PORT_NAMES)[number];

export type PortName =
  | 'etcd' | 'etcdPeer' | 'apiserver' | 'scheduler' | 'kwok' | 'temporal' | 'temporalUi' | 'temporalHttp' | 'temporalMetrics' | 'metricsStandin'
  | 'postgres' | InternalServerPortName;

export const PORT_NAMES: PortName[] = [
  'etcd', 'etcdPeer', 'apiserver', 'scheduler', 'kwok', 'temporal', 'temporalUi', 'temporalHttp', 'temporalMetrics', 'metricsStandin',
  'postgres', ...INTERNAL_SERVER_PORT_NAMES,
];

/**
 * Written by `up` into <data>/state.json; `env`, `status` and tests read it. `ports` holds the
 * ports of the topology's parts only (no `postgres` port on a dev-server stack).
 */
export interface StackState {
  dataDir: string;
  nodes: number;
  /** absent in state files written before the postgres topology: the dev server */
  temporal?: TemporalTopology;
  ports: Record<PortName, number>;
  binaries: Partial<Record<BinaryName, string>>;
}

export function topologyOf(state: Pick<StackState, 'temporal'> | undefined): TemporalTopology {
  return state?.temporal ?? 'dev';
}

/** How the stack's clients reach its Temporal (address, namespace, mTLS files for the postgres topology). */
export function stackTemporal(state: StackState): TemporalTarget {
  return stackTemporalTarget(state.dataDir, topologyOf(state), state.ports.temporal);
}

export interface UpOptions {
  dataDir: string;
  nodes?: number;
  /** which Temporal to run (default: the one the data dir ran last, else the dev server) */
  temporal?: TemporalTopology;
  /** explicit ports; a busy one is an error. Others are picked free (previous ones preferred). */
  ports?: Partial<Record<PortName, number>>;
  log?: Logger;
  timeoutMs?: number;
  /**
   * false: a part whose dependency is started again keeps running, as kubelets and schedulers
   * keep running when a cluster's kube-apiserver restarts (the chaos restarts); the restarted
   * part must then get its old port back, or `up` fails. Default true: dependents start again
   * too, since a dependency may come back on another port.
   */
  restartDependents?: boolean;
}

export class StackError extends Error {}

interface Ctx {
  dataDir: string;
  topology: TemporalTopology;
  ports: Record<PortName, number>;
  pki: Pki;
  agg: AggregationPki;
  bins: Record<BinaryName, string>;
  advertiseAddress?: string;
}

interface Component {
  name: ComponentName;
  /** 'node': a script of this repository run by the node that runs us; 'postgres': the machine's PostgreSQL */
  binary: BinaryName | 'node' | 'postgres';
  ports: PortName[];
  dependsOn: ComponentName[];
  args(ctx: Ctx): string[];
  healthy(ctx: Ctx): Promise<boolean>;
  /** work before each start: files the part reads, its database */
  prepare?(ctx: Ctx, log: Logger): Promise<void>;
  /** whom it runs as, when not as us */
  runAs?(): RunAs | undefined;
  /** where it starts (default: the data dir) */
  cwd?(ctx: Ctx): string;
  /** default SIGTERM */
  stopSignal?: NodeJS.Signals;
}

/**
 * The dev server keeps everything in one SQLite file behind a single history shard, so every
 * history write of every workflow queues for that file. SQLite's defaults (a rollback journal,
 * synchronous=FULL) sync the file several times per commit; with a write-ahead log and
 * synchronous=NORMAL a commit survives a crash of the server process (its data is in the log)
 * and is synced at checkpoints only, which is what a local stack needs.
 */
export const SQLITE_PRAGMAS = ['journal_mode=WAL', 'synchronous=NORMAL'];

const kubeconfigPath = (dataDir: string, who: string) => path.join(dataDir, `${who}.kubeconfig`);

const ETCD: Component =
  {
    name: 'etcd',
    binary: 'etcd',
    ports: ['etcd', 'etcdPeer'],
    dependsOn: [],
    args: ({ dataDir, ports }) => [
      '--name=temporal-kcm-local',
      `--data-dir=${path.join(dataDir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-cluster=temporal-kcm-local=http://127.0.0.1:${ports.etcdPeer}`,
      '--listen-metrics-urls=',
      '--log-level=warn',
      '--quota-backend-bytes=8589934592',
    ],
    healthy: async ({ ports }) => {
      const r = await probe(`http://127.0.0.1:${ports.etcd}/health`);
      return r.status === 200 && r.body.includes('"true"');
    },
  };

const TEMPORAL_DEV: Component =
  {
    name: 'temporal',
    binary: 'temporal',
    ports: ['temporal', 'temporalUi', 'temporalHttp', 'temporalMetrics'],
    dependsOn: [],
    args: ({ dataDir, ports }) => [
      'server', 'start-dev',
      '--ip', '127.0.0.1',
      '--ui-ip', '127.0.0.1',
      '--port', String(ports.temporal),
      '--ui-port', String(ports.temporalUi),
      '--http-port', String(ports.temporalHttp),
      '--metrics-port', String(ports.temporalMetrics),
      '--db-filename', path.join(dataDir, 'temporal', 'temporal.db'),
      ...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]),
      '--namespace', 'default',
      '--log-level', 'warn',
    ],
    healthy: ({ ports }) => temporalHealthy(`127.0.0.1:${ports.temporal}`),
  };

/** The postgres topology's database: Debian's PostgreSQL, a cluster in <data>/postgres. */
const POSTGRES: Component = {
  name: 'postgres',
  binary: 'postgres',
  ports: ['postgres'],
  dependsOn: [],
  args: ({ dataDir, ports }) => postgresArgs(postgresPaths(dataDir), ports.postgres),
  healthy: ({ ports }) => postgresReady(postgresBinDir(), ports.postgres),
  prepare: async ({ dataDir }) => { ensurePostgresCluster(dataDir, postgresBinDir(), postgresRunAs()); },
  runAs: () => postgresRunAs(),
  // its own dir: the postgres user may not read the data dir itself
  cwd: ({ dataDir }) => postgresPaths(dataDir).dir,
  stopSignal: 'SIGINT',
};

/** The ports the postgres topology's server config names. */
function serverPorts(p: Record<PortName, number>): ServerPorts {
  return {
    frontend: p.temporal, frontendHttp: p.temporalHttp, frontendMembership: p.temporalFrontendMembership,
    internalFrontend: p.temporalInternalFrontend, internalFrontendHttp: p.temporalInternalFrontendHttp,
    internalFrontendMembership: p.temporalInternalFrontendMembership,
    history: p.temporalHistory, historyMembership: p.temporalHistoryMembership,
    matching: p.temporalMatching, matchingMembership: p.temporalMatchingMembership,
    worker: p.temporalWorker, workerMembership: p.temporalWorkerMembership,
    metrics: p.temporalMetrics,
  };
}

/** Shards are fixed when the store is first used; 4 spread a local fleet's history writes over 4 locks. */
export const NUM_HISTORY_SHARDS = 4;

/** The postgres topology's Temporal: `temporal-server start` with every service, mTLS on the frontend. */
const TEMPORAL_SERVER: Component = {
  name: 'temporal',
  binary: 'temporal-server',
  ports: ['temporal', 'temporalHttp', 'temporalMetrics', ...INTERNAL_SERVER_PORT_NAMES],
  dependsOn: ['postgres'],
  args: ({ dataDir }) => serverArgs(dataDir),
  // temporal-system is there as soon as the server serves: its store and frontend TLS work
  healthy: ({ dataDir, ports }) => temporalHealthy(stackTemporalTarget(dataDir, 'postgres', ports.temporal), 'temporal-system'),
  prepare: async ({ dataDir, ports, bins }, log) => {
    const files = serverConfigPaths(dataDir);
    fs.mkdirSync(files.configDir, { recursive: true });
    const password = readPostgresPassword(dataDir);
    await ensureTemporalSchemas(bins['temporal-sql-tool'], ports.postgres, password, log);
    fs.writeFileSync(files.dynamicConfigFile, renderDynamicConfigYaml());
    // 0600: it holds the database password
    fs.writeFileSync(files.configFile, renderServerConfigYaml({
      ports: serverPorts(ports),
      postgres: { port: ports.postgres, user: POSTGRES_USER, password },
      pki: temporalPkiPaths(dataDir),
      dynamicConfigFile: files.dynamicConfigFile,
      numHistoryShards: NUM_HISTORY_SHARDS,
      logLevel: 'warn',
    }), { mode: 0o600 });
  },
};

/**
 * The Web UI as it answers the browser: its HTTP API lists namespaces through the frontend, so a
 * 200 means the UI server runs and its mTLS client reaches the frontend (GET needs no CSRF token).
 */
export async function temporalUiHealthy(url: string): Promise<boolean> {
  return (await probe(`${url}/api/v1/namespaces`)).status === 200;
}

/** Where the stack's Temporal Web UI answers: the dev server's own, or the postgres topology's UI server. */
export function temporalUiUrl(state: Pick<StackState, 'ports'>): string {
  return `http://127.0.0.1:${state.ports.temporalUi}`;
}

/**
 * The postgres topology's Web UI: temporalio/ui-server, the UI the dev server embeds, run on its
 * own as production runs it, a client of the mTLS frontend with the stack's client certificate.
 * It depends on temporal: its config names the frontend's port, which a restart may change.
 */
const TEMPORAL_UI: Component = {
  name: 'temporal-ui',
  binary: 'temporal-ui-server',
  ports: ['temporalUi'],
  dependsOn: ['temporal'],
  args: ({ dataDir }) => uiServerArgs(dataDir),
  healthy: ({ ports }) => temporalUiHealthy(temporalUiUrl({ ports })),
  prepare: async ({ dataDir, ports }) => {
    const files = uiServerConfigPaths(dataDir);
    fs.mkdirSync(files.configDir, { recursive: true });
    fs.writeFileSync(files.configFile, renderUiServerConfigYaml({ frontendPort: ports.temporal, port: ports.temporalUi, pki: temporalPkiPaths(dataDir) }));
  },
};

const KUBE_PARTS: Component[] = [
  {
    name: 'kube-apiserver',
    binary: 'kube-apiserver',
    ports: ['apiserver'],
    dependsOn: ['etcd'],
    args: ({ dataDir, ports, pki, agg, advertiseAddress }) => [
      `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${path.join(dataDir, 'apiserver')}`,
      `--tls-cert-file=${pki.apiserverCert}`,
      `--tls-private-key-file=${pki.apiserverKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=Node,RBAC',
      // bootstrap tokens authenticate (as kubeadm's apiserver): a kubelet's TLS bootstrap, the csrapproving e2e
      '--enable-bootstrap-token-auth',
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      // who wrote what: tests prove each controller writes as its own ServiceAccount
      `--audit-policy-file=${auditPolicyPath(dataDir)}`,
      `--audit-log-path=${auditLogPath(dataDir)}`,
      '--audit-log-maxsize=500',
      '--audit-log-maxbackup=1',
      '--allow-privileged=true',
      '--profiling=false',
      // The aggregation layer, for the metrics stand-in's APIServices: dial the Service's endpoint
      // (there is no kube-proxy to reach a ClusterIP), present the front-proxy client cert (the
      // stand-in accepts no other caller), and trust that CA's requestheader identities.
      '--enable-aggregator-routing=true',
      `--proxy-client-cert-file=${agg.frontProxyClientCert}`,
      `--proxy-client-key-file=${agg.frontProxyClientKey}`,
      `--requestheader-client-ca-file=${agg.frontProxyCaCert}`,
      `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_CN}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      // The `kubernetes` Service's endpoints may not be loopback (API validation), and this
      // apiserver listens on loopback only; with no other address to offer we publish none.
      ...(advertiseAddress
        ? [`--advertise-address=${advertiseAddress}`]
        : ['--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none']),
    ],
    healthy: async ({ ports, pki }) => {
      const admin = pki.client('admin');
      const r = await probe(`https://127.0.0.1:${ports.apiserver}/readyz`, {
        ca: fs.readFileSync(pki.caCert), cert: fs.readFileSync(admin.cert), key: fs.readFileSync(admin.key),
      });
      return r.status === 200;
    },
  },
  {
    name: 'kube-scheduler',
    binary: 'kube-scheduler',
    ports: ['scheduler'],
    dependsOn: ['kube-apiserver'],
    args: ({ dataDir, ports }) => {
      const kc = kubeconfigPath(dataDir, 'kube-scheduler');
      return [
        `--kubeconfig=${kc}`,
        `--authentication-kubeconfig=${kc}`,
        `--authorization-kubeconfig=${kc}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.scheduler}`,
        `--cert-dir=${path.join(dataDir, 'scheduler')}`,
        '--leader-elect=false',
      ];
    },
    healthy: async ({ ports }) => (await probe(`https://127.0.0.1:${ports.scheduler}/healthz`, { insecure: true })).status === 200,
  },
  {
    name: 'kwok',
    binary: 'kwok',
    ports: ['kwok'],
    dependsOn: ['kube-apiserver'],
    args: ({ dataDir, ports }) => [
      `--kubeconfig=${kubeconfigPath(dataDir, 'admin')}`,
      `--config=${path.join(repoRoot, 'hack', 'kwok', 'stages.yaml')}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-label-selector=${KWOK_MANAGED_LABEL}=${KWOK_MANAGED_VALUE}`,
      `--disregard-status-with-label-selector=${KWOK_SILENT_LABEL}=true`,
      '--node-lease-duration-seconds=40',
      '--cidr=10.244.0.0/16',
      `--server-address=127.0.0.1:${ports.kwok}`,
    ],
    healthy: async ({ ports }) => (await probe(`http://127.0.0.1:${ports.kwok}/healthz`)).status === 200,
  },
  {
    // metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io from annotations and a
    // ConfigMap (kwok's kubelets have no real usage); served through kube-apiserver's aggregator
    name: 'metrics-standin',
    binary: 'node',
    ports: ['metricsStandin'],
    dependsOn: ['kube-apiserver'],
    args: ({ dataDir, ports, pki, agg, advertiseAddress }) => [
      metricsStandinScript(),
      `--apiserver=https://127.0.0.1:${ports.apiserver}`,
      `--ca-file=${pki.caCert}`,
      `--client-cert-file=${pki.client('admin').cert}`,
      `--client-key-file=${pki.client('admin').key}`,
      `--bind-address=${advertiseAddress ?? ''}`,
      `--secure-port=${ports.metricsStandin}`,
      `--tls-cert-file=${agg.metricsCert}`,
      `--tls-private-key-file=${agg.metricsKey}`,
      `--requestheader-client-ca-file=${agg.frontProxyCaCert}`,
      `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_CN}`,
    ],
    healthy: async ({ dataDir, ports, agg }) => {
      const addr = metricsStandinAddress(dataDir);
      if (!addr) return false;
      const r = await probe(`https://${addr}:${ports.metricsStandin}/healthz`, {
        ca: fs.readFileSync(pkiPaths(dataDir).caCert), cert: fs.readFileSync(agg.frontProxyClientCert), key: fs.readFileSync(agg.frontProxyClientKey),
        servername: `${METRICS_SERVICE.name}.${METRICS_SERVICE.namespace}.svc`,
      });
      return r.status === 200;
    },
  },
];

/** The parts of a topology, in start order. */
function componentsFor(topology: TemporalTopology): Component[] {
  return topology === 'dev' ? [ETCD, TEMPORAL_DEV, ...KUBE_PARTS] : [ETCD, POSTGRES, TEMPORAL_SERVER, TEMPORAL_UI, ...KUBE_PARTS];
}

/** Every part either topology may have started, in start order (`down` stops them all by pid file). */
const ALL_COMPONENTS: Component[] = [ETCD, POSTGRES, TEMPORAL_SERVER, TEMPORAL_UI, ...KUBE_PARTS];

/** Parts started together, each wave once the one before is healthy. */
function wavesFor(topology: TemporalTopology): ComponentName[][] {
  const kube: ComponentName[][] = [['kube-apiserver'], ['kube-scheduler', 'kwok', 'metrics-standin']];
  // the server needs its database, and overlaps the apiserver's start instead of etcd's; its UI
  // needs it serving, and starts with the apiserver's clients
  return topology === 'dev' ? [['etcd', 'temporal'], ...kube] : [['etcd', 'postgres'], ['temporal', 'kube-apiserver'], [...kube[1], 'temporal-ui']];
}

/** The stand-in runs from the build (dist/), also when the stack is started from sources by jest. */
function metricsStandinScript(): string {
  return path.join(repoRoot, 'dist', 'starter', 'local', 'metrics', 'main.js');
}

/** Where the running stand-in listens: the --bind-address it was started with. */
function metricsStandinAddress(dataDir: string): string | undefined {
  const args = readPid(dataDir, 'metrics-standin')?.args ?? [];
  return args.find((a) => a.startsWith('--bind-address='))?.slice('--bind-address='.length) || undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a restart waits for a stopped part's port to come free. */
const PORT_RELEASE_MS = 15_000;

/** Whether `port` came free within `timeoutMs`. */
async function waitForPort(port: number, host: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await isPortFree(port, host)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(200);
  }
}

export function statePath(dataDir: string): string {
  return path.join(dataDir, 'state.json');
}

export function readState(dataDir: string): StackState | undefined {
  try {
    return JSON.parse(fs.readFileSync(statePath(dataDir), 'utf8')) as StackState;
  } catch {
    return undefined;
  }
}

/** A non-loopback IPv4 of this machine, for the `kubernetes` Service's endpoints. */
function hostAddress(): string | undefined {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** Serialise `up`/`down` on one data dir; a lock left by a dead process is taken over. */
async function withLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dataDir, 'run', 'stack.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      const holder = Number(fs.readFileSync(lock, 'utf8').trim());
      let alive = false;
      try { process.kill(holder, 0); alive = holder !== process.pid; } catch { alive = false; }
      if (!alive) { fs.rmSync(lock, { force: true }); continue; }
      if (Date.now() > deadline) throw new StackError(`another temporal-kcm (pid ${holder}) holds ${lock}`);
      await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function writeKubeconfigs(ctx: Ctx): void {
  for (const c of CLIENTS) {
    const { cert, key } = ctx.pki.client(c.file);
    fs.writeFileSync(
      kubeconfigPath(ctx.dataDir, c.file),
      renderKubeconfig({ server: `https://127.0.0.1:${ctx.ports.apiserver}`, caCertFile: ctx.pki.caCert, clientCertFile: cert, clientKeyFile: key, user: c.commonName }),
      { mode: 0o600 },
    );
  }
}

function executable(ctx: Pick<Ctx, 'bins'>, c: Component): string {
  if (c.binary === 'node') return process.execPath;
  if (c.binary === 'postgres') return path.join(postgresBinDir(), 'postgres');
  return ctx.bins[c.binary];
}

/**
 * A running part whose flags this version of the stack would set differently is restarted: the
 * apiserver (a record from before its flags were kept predates the aggregation flags) and the
 * metrics stand-in (the host address it binds may have changed). So is a stand-in older than its
 * build (`npm run build` since it started), as a changed binary would be by its version dir.
 */
function outdated(c: Component, rec: PidRecord, ctx: Ctx): boolean {
  if (c.name !== 'kube-apiserver' && c.name !== 'metrics-standin') return false;
  if (!rec.args) return true;
  if (JSON.stringify(rec.args) !== JSON.stringify(c.args(ctx))) return true;
  return c.name === 'metrics-standin' && metricsStandinBuiltAt() > Date.parse(rec.startedAt);
}

/** When the stand-in's build last changed (0 when not built). */
function metricsStandinBuiltAt(): number {
  const dir = path.dirname(metricsStandinScript());
  try {
    return Math.max(0, ...fs.readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => fs.statSync(path.join(dir, f)).mtimeMs));
  } catch {
    return 0;
  }
}

async function startAndWait(ctx: Ctx, c: Component, timeoutMs: number, log: Logger): Promise<void> {
  const t0 = Date.now();
  fs.mkdirSync(path.join(ctx.dataDir, 'temporal'), { recursive: true });
  await c.prepare?.(ctx, log);
  const runAs = c.runAs?.();
  const rec: PidRecord = startDetached(ctx.dataDir, {
    name: c.name, binary: executable(ctx, c), args: c.args(ctx), cwd: c.cwd?.(ctx), ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  // a process is taken for dead only when two looks 200 ms apart agree: one read of /proc just
  // after the spawn has been seen to miss a server that went on to run (a CI run, 2026-11-28)
  let notSeen = 0;
  for (;;) {
    if (await c.healthy(ctx)) break;
    notSeen = isOurs(rec) ? 0 : notSeen + 1;
    if (notSeen >= 2) {
      removePid(ctx.dataDir, c.name);
      throw new StackError(
        `${c.name} exited during start-up. Last lines of ${path.join(ctx.dataDir, 'logs', c.name + '.log')}:\n` +
          tailLog(ctx.dataDir, c.name) + '\n' + recoveryHint(ctx.dataDir, c.name),
      );
    }
    if (Date.now() - t0 > timeoutMs) {
      await stopProcess(ctx.dataDir, c.name, undefined, c.stopSignal);
      throw new StackError(`${c.name} did not become healthy within ${timeoutMs / 1000}s; it was stopped. Last log lines:\n${tailLog(ctx.dataDir, c.name)}`);
    }
    await sleep(200);
  }
  log(`  ${c.name.padEnd(15)} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (pid ${rec.pid})`);
}

function recoveryHint(dataDir: string, name: ComponentName): string {
  if (name === 'etcd' || name === 'temporal' || name === 'postgres') {
    return `If its data was left damaged by a crash, \`temporal-kcm local down --purge --data-dir ${dataDir}\` removes the data dir and the next \`up\` starts clean.`;
  }
  return `Fix the cause above and run \`temporal-kcm local up\` again; parts already running are kept.`;
}

/**
 * Bring the stack up, or complete it: parts already running (by pid file) are kept, dead ones are
 * started again on their data, and a part whose dependency restarted is restarted too (its
 * kubeconfig may name a new apiserver port).
 */
/**
 * Writes, lists and watches, events left out, at Metadata level (who wrote what, how many lists and
 * watches each client opened); except that the updates, patches and deletes of controllers (kube-system
 * service accounts, as both managers write with --use-service-account-credentials) are kept at
 * Request level, bodies included, so a checker can see the preconditions they carry. Secrets stay at
 * Metadata whoever writes them: no Secret bytes in the log.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection, list, watch]
  resources:
  - group: ""
    resources: [secrets]
- level: Request
  userGroups: ["system:serviceaccounts:kube-system"]
  verbs: [update, patch, delete]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection, list, watch]
- level: None
`;

export const auditPolicyPath = (dataDir: string) => path.join(dataDir, 'audit-policy.yaml');
export const auditLogPath = (dataDir: string) => path.join(dataDir, 'logs', 'audit.log');

export async function up(opts: UpOptions): Promise<StackState> {
  const dataDir = path.resolve(opts.dataDir);
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const nodes = opts.nodes ?? readState(dataDir)?.nodes ?? 3;
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 1000) throw new StackError(`--nodes must be 1..1000, got ${nodes}`);
  fs.mkdirSync(dataDir, { recursive: true });
  const prevState = readState(dataDir);
  const chosen = chooseTopology(opts.temporal, prevState?.temporal ?? (prevState ? 'dev' : undefined), isOurs(readPid(dataDir, 'temporal')));
  if ('error' in chosen) throw new StackError(chosen.error);
  const topology = chosen.topology;
  const components = componentsFor(topology);
  const bins = await ensureBinaries(topology === 'postgres' ? [...BASE_BINARIES, ...POSTGRES_TOPOLOGY_BINARIES] : BASE_BINARIES, log);
  return withLock(dataDir, async () => {
    const t0 = Date.now();
    const prev = readState(dataDir);
    const pki = ensurePki(dataDir);
    if (topology === 'postgres') ensureTemporalPki(dataDir);
    const agg = ensureAggregationPki(dataDir);
    const advertiseAddress = hostAddress();
    // the apiserver reads its audit policy at start: a changed policy restarts it
    const policyChanged = fs.existsSync(auditPolicyPath(dataDir)) && fs.readFileSync(auditPolicyPath(dataDir), 'utf8') !== AUDIT_POLICY;
    fs.writeFileSync(auditPolicyPath(dataDir), AUDIT_POLICY);

    const willStart = new Set<ComponentName>();
    for (const c of components) {
      const rec = readPid(dataDir, c.name);
      const running = isOurs(rec) && prev !== undefined;
      const depRestarts = opts.restartDependents !== false && c.dependsOn.some((d) => willStart.has(d));
      const reconfigured = running && !depRestarts && (
        (c.name === 'kube-apiserver' && policyChanged) ||
        // a running part keeps its ports, so the previous ones give the flags it would get now
        c.ports.every((p) => prev!.ports[p] !== undefined) && outdated(c, rec, { dataDir, topology, ports: prev!.ports, pki, agg, bins, advertiseAddress })
      );
      if (running && !depRestarts && !reconfigured) continue;
      if (running) await stopProcess(dataDir, c.name, undefined, c.stopSignal);
      else removePid(dataDir, c.name); // stale pid file from a crash
      willStart.add(c.name);
    }

    const alloc = new PortAllocator();
    const ports = {} as Record<PortName, number>;
    for (const c of components.filter((c) => !willStart.has(c.name))) {
      for (const p of c.ports) { ports[p] = prev!.ports[p]; alloc.reserve(ports[p]); }
    }
    for (const c of components.filter((c) => willStart.has(c.name))) {
      // the stand-in binds the host address, which other stacks on this machine may bind too
      const host = c.name === 'metrics-standin' && advertiseAddress ? advertiseAddress : '127.0.0.1';
      for (const p of c.ports) {
        const purpose = `${c.name} (${p})`;
        const requested = opts.ports?.[p] ?? 0;
        const previous = prev?.ports[p];
        if (requested > 0) ports[p] = await alloc.take(purpose, requested, host);
        else if (opts.restartDependents === false && previous) {
          // parts left running hold its old address in their kubeconfigs
          // a part just stopped can hold its listening socket a moment longer (its last threads
          // still exiting): the port is waited for before it is called taken
          if (!(await waitForPort(previous, host, PORT_RELEASE_MS))) throw new StackError(`${purpose}: port ${previous} is taken, and the parts that depend on it were asked to keep running`);
          ports[p] = await alloc.take(purpose, previous, host);
        }
        // Same port as last time when we can: Web UI bookmarks and exported env stay valid.
        else if (previous && (await isPortFree(previous, host))) ports[p] = await alloc.take(purpose, previous, host).catch(() => alloc.take(purpose, 0, host));
        else ports[p] = await alloc.take(purpose, 0, host);
      }
    }

    if (willStart.has('metrics-standin')) {
      if (!advertiseAddress) {
        throw new StackError('the metrics stand-in needs a non-loopback IPv4 address on this machine (kube-apiserver rejects loopback ' +
          'endpoints, and its aggregator dials the endpoint); none was found in os.networkInterfaces()');
      }
      if (!fs.existsSync(metricsStandinScript())) {
        throw new StackError(`${metricsStandinScript()} is missing: run \`npm run build\` first (the metrics stand-in runs from the build)`);
      }
    }
    const ctx: Ctx = { dataDir, topology, ports, pki, agg, bins, advertiseAddress };
    writeKubeconfigs(ctx);
    const state: StackState = { dataDir, nodes, temporal: topology, ports, binaries: bins };

    const timeoutMs = opts.timeoutMs ?? 120_000;
    if (willStart.size) log(`starting ${[...willStart].join(', ')} (data in ${dataDir})`);
    try {
      for (const wave of wavesFor(topology)) {
        await Promise.all(
          components.filter((c) => wave.includes(c.name) && willStart.has(c.name)).map((c) => startAndWait(ctx, c, timeoutMs, log)),
        );
      }
    } finally {
      fs.writeFileSync(statePath(dataDir), JSON.stringify(state, null, 2) + '\n');
    }

    // The APIServices go in only once the stand-in answers (an unavailable one breaks discovery
    // for the garbage collector and namespace controller); their wait overlaps the steps below.
    const metricsApis = ensureMetricsApis(ctx, timeoutMs, log).then(() => undefined, (e: unknown) => e);
    const temporal = stackTemporal(state);
    // a real server starts with no namespace of ours (the dev server makes it from its --namespace)
    if (topology === 'postgres') await ensureNamespace(temporal);
    await ensureDevSearchAttributes(temporal, temporal.namespace);
    // the admin's own https requests: loading client-node costs a cold process tens of seconds
    const kube = adminTarget(ctx);
    await ensureNodes(kube, nodes);
    await ensureDefaultServiceAccount(kube);
    await ensureDra(kube, nodes);
    await waitFor(async () => {
      const { ready, total } = await readyNodeCount(kube);
      return ready === nodes && total === nodes;
    }, timeoutMs, `${nodes} kwok nodes to become Ready (see ${path.join(dataDir, 'logs', 'kwok.log')})`);
    await liftBootTaints({ kube, dataDir, temporal, timeoutMs, log });
    const metricsErr = await metricsApis;
    if (metricsErr) throw metricsErr;
    log(`local stack up in ${((Date.now() - t0) / 1000).toFixed(1)}s (Temporal topology: ${topology})`);
    return state;
  });
}

/** The cluster as its admin reaches it: the API server's address, the CA and the admin client certificate. */
export function adminTarget(ctx: Pick<Ctx, 'ports' | 'pki'>): KubeTarget {
  const admin = ctx.pki.client('admin');
  return {
    server: `https://127.0.0.1:${ctx.ports.apiserver}`,
    ca: fs.readFileSync(ctx.pki.caCert), cert: fs.readFileSync(admin.cert), key: fs.readFileSync(admin.key),
  };
}

/** Service, EndpointSlice and APIServices of the metrics stand-in, then wait until the three are Available. */
async function ensureMetricsApis(ctx: Ctx, timeoutMs: number, log: Logger): Promise<void> {
  const t0 = Date.now();
  const t = adminTarget(ctx);
  const address = metricsStandinAddress(ctx.dataDir);
  if (!address) throw new StackError('the metrics stand-in is not running');
  // retried: right after kube-apiserver starts, a Service's IP allocation can fail until its ServiceCIDR is ready
  await waitFor(async () => {
    await applyWiring(t, { ...METRICS_SERVICE, address, port: ctx.ports.metricsStandin, caBundle: fs.readFileSync(ctx.pki.caCert) });
    return true;
  }, timeoutMs, 'the metrics stand-in\'s Service, EndpointSlice and APIServices to be applied', 200);
  let why = '';
  await waitFor(async () => (why = await unavailableApiServices(t)) === '', timeoutMs,
    () => `the metrics APIServices to become Available (${why}; see ${path.join(ctx.dataDir, 'logs', 'metrics-standin.log')})`, 100);
  log(`  metrics APIs    available in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string | (() => string), everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > deadline) throw new StackError(`timed out waiting for ${typeof what === 'string' ? what : what()}${lastErr ? `: ${String(lastErr)}` : ''}`);
    await sleep(everyMs);
  }
}

export function adminKubeConfig(dataDir: string): k8s.KubeConfig {
  const kc = new (clientNode().KubeConfig)();
  kc.loadFromFile(kubeconfigPath(path.resolve(dataDir), 'admin'));
  return kc;
}

/** Stop every part `up` started (reverse order), by pid file; processes we did not start are never signalled. */
export async function down(dataDir: string, opts: { purge?: boolean; log?: Logger } = {}): Promise<ComponentName[]> {
  dataDir = path.resolve(dataDir);
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  if (!fs.existsSync(dataDir)) return [];
  const stopped = await withLock(dataDir, async () => {
    const out: ComponentName[] = [];
    // every part either topology starts: a pid file names exactly what runs, whichever topology it was
    for (const c of [...ALL_COMPONENTS].reverse()) {
      if ((await stopProcess(dataDir, c.name, undefined, c.stopSignal)) === 'stopped') {
        out.push(c.name);
        log(`stopped ${c.name}`);
      }
    }
    return out;
  });
  if (opts.purge) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    log(`removed ${dataDir}`);
  }
  return stopped;
}

export interface PartStatus {
  name: ComponentName;
  pid?: number;
  running: boolean;
  healthy: boolean;
  address: string;
}

export async function status(dataDir: string): Promise<{ state?: StackState; parts: PartStatus[] }> {
  dataDir = path.resolve(dataDir);
  const state = readState(dataDir);
  const parts: PartStatus[] = [];
  for (const c of componentsFor(topologyOf(state))) {
    const rec = readPid(dataDir, c.name);
    const running = isOurs(rec);
    let healthy = false;
    if (running && state) {
      const ctx: Ctx = { dataDir, topology: topologyOf(state), ports: state.ports, pki: pkiPaths(dataDir), agg: aggregationPkiPaths(dataDir), bins: state.binaries as Record<BinaryName, string> };
      healthy = await c.healthy(ctx).catch(() => false);
    }
    parts.push({ name: c.name, pid: running ? rec?.pid : undefined, running, healthy, address: state ? describeAddress(c.name, state) : '-' });
  }
  return { state, parts };
}

function describeAddress(name: ComponentName, s: StackState): string {
  const p = s.ports;
  switch (name) {
    case 'etcd': return `http://127.0.0.1:${p.etcd}`;
    case 'postgres': return `127.0.0.1:${p.postgres} (databases temporal, temporal_visibility; data ${postgresPaths(s.dataDir).data})`;
    case 'temporal': return topologyOf(s) === 'dev'
      ? `127.0.0.1:${p.temporal} (Web UI http://127.0.0.1:${p.temporalUi})`
      : `127.0.0.1:${p.temporal} (temporal-server, mTLS)`;
    case 'temporal-ui': return `${temporalUiUrl(s)} (Temporal Web UI server, mTLS to 127.0.0.1:${p.temporal})`;
    case 'kube-apiserver': return `https://127.0.0.1:${p.apiserver}`;
    case 'kube-scheduler': return `https://127.0.0.1:${p.scheduler}`;
    case 'kwok': return `http://127.0.0.1:${p.kwok} (${s.nodes} nodes)`;
    case 'metrics-standin': return `https://${metricsStandinAddress(s.dataDir) ?? '?'}:${p.metricsStandin} (metrics.k8s.io, custom.metrics.k8s.io, external.metrics.k8s.io)`;
  }
}

/** The binaries `env` puts on PATH: what a user of the stack runs by hand. */
export const PATH_BINARIES: BinaryName[] = ['kubectl', 'temporal'];

/**
 * PATH with the directories of `binaries` first, for `env` to print. Entries npm prepended for this
 * process (`npx`: every node_modules/.bin up to /, and its node-gyp-bin) are dropped, so they do
 * not leak into the user's shell. A binary that PATH already finds first needs nothing (so a
 * second `eval` adds nothing); a directory holding the PATH delimiter cannot go on PATH at all.
 * Undefined when there is nothing to add.
 */
export function pathWithBinaries(
  binaries: string[],
  currentPath: string,
  find: (name: string, pathVar: string) => string | undefined = findOnPath,
): string | undefined {
  let entries = currentPath.split(path.delimiter);
  const npmEnd = entries.map((e) => /[\\/]node-gyp-bin$/.test(e)).lastIndexOf(true);
  if (npmEnd >= 0) entries = entries.slice(npmEnd + 1);
  entries = entries.filter((e) => e !== '');
  const userPath = entries.join(path.delimiter);
  const add: string[] = [];
  for (const bin of binaries) {
    const dir = path.dirname(bin);
    if (dir.includes(path.delimiter) || add.includes(dir)) continue;
    const found = find(path.basename(bin), userPath);
    if (found !== undefined && path.resolve(found) === path.resolve(bin)) continue;
    add.push(dir);
  }
  return add.length ? [...add, ...entries].join(path.delimiter) : undefined;
}

/** The stack's own binary (as `up` recorded it), else where binaries.ts finds it now. */
function stackBinary(name: BinaryName, state: StackState): string | undefined {
  const recorded = state.binaries[name];
  try {
    if (recorded) {
      fs.accessSync(recorded, fs.constants.X_OK);
      return recorded;
    }
  } catch { /* moved or deleted since `up` */ }
  try {
    return locateBinary(name)?.path;
  } catch {
    return undefined; // a *_BIN variable naming no executable: nothing to put on PATH
  }
}

/** The values `env` prints; throws if the stack is not fully running. */
export async function connectionEnv(dataDir: string): Promise<Record<string, string>> {
  dataDir = path.resolve(dataDir);
  const { state, parts } = await status(dataDir);
  const down = parts.filter((p) => !p.running);
  if (!state || down.length) {
    throw new StackError(
      `the local stack in ${dataDir} is not running` + (state ? ` (${down.map((d) => d.name).join(', ')} down)` : '') +
        `; start it with \`temporal-kcm local up${dataDir === path.resolve('.local') ? '' : ` --data-dir ${dataDir}`}\``,
    );
  }
  const temporal = stackTemporal(state);
  const env: Record<string, string> = {
    KUBECONFIG: kubeconfigPath(dataDir, 'admin'),
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_UI_URL: temporalUiUrl(state),
    ...temporalTlsEnv(temporal.tls),
    TEMPORAL_KCM_DATA_DIR: dataDir,
  };
  const bins = PATH_BINARIES.map((b) => stackBinary(b, state)).filter((b): b is string => b !== undefined);
  const withBins = pathWithBinaries(bins, process.env.PATH ?? '');
  if (withBins !== undefined) env.PATH = withBins;
  return env;
}

export function describeStack(s: StackState): string {
  const temporal = topologyOf(s) === 'dev'
    ? [
      `temporal        127.0.0.1:${s.ports.temporal}   namespace default (dev server)`,
      `Temporal Web UI ${temporalUiUrl(s)}`,
    ]
    : [
      `postgres        127.0.0.1:${s.ports.postgres}   databases temporal, temporal_visibility`,
      `temporal        127.0.0.1:${s.ports.temporal}   namespace default (temporal-server, frontend mTLS: client cert ${temporalPkiPaths(s.dataDir).clientCert})`,
      `Temporal Web UI ${temporalUiUrl(s)}   (ui-server, mTLS to the frontend)`,
    ];
  return [
    `kube-apiserver  https://127.0.0.1:${s.ports.apiserver}   kubeconfig ${kubeconfigPath(s.dataDir, 'admin')}`,
    `etcd            http://127.0.0.1:${s.ports.etcd}`,
    `kube-scheduler  https://127.0.0.1:${s.ports.scheduler}`,
    `kwok            http://127.0.0.1:${s.ports.kwok}   ${s.nodes} nodes`,
    `metrics         https://${metricsStandinAddress(s.dataDir) ?? '?'}:${s.ports.metricsStandin}   metrics.k8s.io, custom.metrics.k8s.io, external.metrics.k8s.io (via kube-apiserver)`,
    ...temporal,
    `logs            ${path.join(s.dataDir, 'logs')}`,
  ].join('\n');
}
