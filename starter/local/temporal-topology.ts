import * as path from 'node:path';
import { stringify } from 'yaml';
import type { TemporalTarget, TemporalTlsOptions } from '../run-options';
import { TEMPORAL_SERVER_NAME, type TemporalPki, temporalPkiPaths } from './pki';

/**
 * Which Temporal the local stack runs.
 *  - `dev`: `temporal server start-dev`, one process with its SQLite file, Web UI, no TLS (the default).
 *  - `postgres`: the Temporal server as production clusters run it: `temporal-server start` with
 *    its frontend, internal-frontend, history, matching and worker services (in one process here),
 *    persistence and visibility on PostgreSQL, a frontend that requires client certificates, and
 *    the Web UI server (temporalio/ui-server) as a process of its own, a client of that frontend.
 */
export type TemporalTopology = 'dev' | 'postgres';
export const TEMPORAL_TOPOLOGIES: readonly TemporalTopology[] = ['dev', 'postgres'];

export function isTemporalTopology(v: string): v is TemporalTopology {
  return (TEMPORAL_TOPOLOGIES as readonly string[]).includes(v);
}

/**
 * The topology `up` runs: the flag's, else the one the data dir ran last (as --nodes), else dev.
 * A different one than a running stack's is refused: its Temporal state is in another store, and
 * quietly swapping the server under a running manager would lose every workflow it runs.
 */
export function chooseTopology(
  requested: TemporalTopology | undefined,
  previous: TemporalTopology | undefined,
  temporalRunning: boolean,
): { topology: TemporalTopology } | { error: string } {
  const topology = requested ?? previous ?? 'dev';
  if (temporalRunning && previous !== undefined && previous !== topology) {
    return { error: `this data dir runs the ${previous} Temporal topology; \`temporal-kcm local down\` it first (or use another --data-dir) to run ${topology}` };
  }
  return { topology };
}

/** The namespace every topology serves the manager in. */
export const STACK_NAMESPACE = 'default';

/** How clients of the stack reach its Temporal: plain gRPC (dev) or mTLS with the stack's Temporal client cert. */
export function stackTemporalTarget(dataDir: string, topology: TemporalTopology, port: number): TemporalTarget {
  const address = `127.0.0.1:${port}`;
  if (topology === 'dev') return { address, namespace: STACK_NAMESPACE };
  const t = temporalPkiPaths(dataDir);
  return { address, namespace: STACK_NAMESPACE, tls: { certPath: t.clientCert, keyPath: t.clientKey, caPath: t.caCert, serverName: TEMPORAL_SERVER_NAME } };
}

/** `run`'s flags for the target's TLS (none for plain gRPC). */
export function temporalTlsArgs(tls: TemporalTlsOptions | undefined): string[] {
  if (!tls) return [];
  return [
    ...(tls.certPath ? ['--temporal-tls-cert', tls.certPath] : []),
    ...(tls.keyPath ? ['--temporal-tls-key', tls.keyPath] : []),
    ...(tls.caPath ? ['--temporal-tls-ca', tls.caPath] : []),
    ...(tls.serverName ? ['--temporal-tls-server-name', tls.serverName] : []),
    ...(Object.keys(tls).length ? [] : ['--temporal-tls']),
  ];
}

/**
 * The variables `local env` prints for the target's TLS: the manager's (TEMPORAL_TLS_CERT, ...,
 * read by `run`'s --temporal-tls-* flags) and the temporal CLI's (TEMPORAL_TLS_CLIENT_CERT_PATH,
 * ...), so both `temporal-kcm run` and `temporal workflow list` work after one eval.
 */
export function temporalTlsEnv(tls: TemporalTlsOptions | undefined): Record<string, string> {
  if (!tls) return {};
  const env: Record<string, string> = { TEMPORAL_TLS: 'true' };
  if (tls.certPath) env.TEMPORAL_TLS_CERT = env.TEMPORAL_TLS_CLIENT_CERT_PATH = tls.certPath;
  if (tls.keyPath) env.TEMPORAL_TLS_KEY = env.TEMPORAL_TLS_CLIENT_KEY_PATH = tls.keyPath;
  if (tls.caPath) env.TEMPORAL_TLS_CA = env.TEMPORAL_TLS_SERVER_CA_CERT_PATH = tls.caPath;
  if (tls.serverName) env.TEMPORAL_TLS_SERVER_NAME = tls.serverName;
  return env;
}

/** The ports of the postgres topology's server, besides `temporal` (frontend gRPC), `temporalHttp` and `temporalMetrics`. */
export interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  internalFrontend: number;
  internalFrontendHttp: number;
  internalFrontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  metrics: number;
}

export interface ServerConfigInput {
  ports: ServerPorts;
  postgres: { port: number; user: string; password: string };
  pki: TemporalPki;
  dynamicConfigFile: string;
  numHistoryShards: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

interface SqlStore {
  sql: {
    pluginName: 'postgres12'; databaseName: string; connectAddr: string; connectProtocol: 'tcp'; user: string; password: string;
    maxConns: number; maxIdleConns: number; maxConnLifetime: string;
  };
}
interface ServiceRpc {
  rpc: { grpcPort: number; membershipPort: number; bindOnIP: string; httpPort?: number };
}
interface ServerTls {
  certFile: string; keyFile: string; requireClientAuth: boolean; clientCaFiles: string[];
}
type ArchivalOff = { history: { state: 'disabled' }; visibility: { state: 'disabled' } };

/** The part of go.temporal.io/server's common/config.Config this stack sets (YAML keys as there). */
export interface ServerConfig {
  log: { stdout: boolean; level: string };
  persistence: { defaultStore: string; visibilityStore: string; numHistoryShards: number; datastores: Record<string, SqlStore> };
  global: {
    membership: { maxJoinDuration: string; broadcastAddress: string };
    pprof: { port: number };
    tls: { frontend: { server: ServerTls; client: { serverName: string; rootCaFiles: string[] } }; internode?: unknown };
    metrics: { prometheus: { framework: string; timerType: string; listenAddress: string } };
  };
  services: Record<(typeof SERVER_SERVICES)[number], ServiceRpc>;
  clusterMetadata: {
    enableGlobalNamespace: boolean; failoverVersionIncrement: number; masterClusterName: string; currentClusterName: string;
    clusterInformation: Record<string, { enabled: boolean; initialFailoverVersion: number; rpcName: string; rpcAddress: string; httpAddress: string }>;
  };
  dcRedirectionPolicy: { policy: string };
  archival: ArchivalOff;
  namespaceDefaults: { archival: ArchivalOff };
  dynamicConfigClient: { filepath: string; pollInterval: string };
  publicClient?: { hostPort: string };
}

/** The databases of the default store and of the visibility store. */
export const TEMPORAL_DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;

/** The services `temporal-server start` runs (each a --service flag; all in one process here). */
export const SERVER_SERVICES = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'] as const;

/**
 * The server's static config, as an object for YAML. Keys follow go.temporal.io/server's
 * common/config (Config, Persistence, SQL, RootTLS, Services).
 *
 * Why an internal-frontend: the frontend requires client certificates, and the server's own system
 * worker (schedules, batch operations, namespace deletion) must reach a frontend too. The
 * internal-frontend is the frontend service for the cluster's own callers, found through
 * membership and reached with the internode TLS settings (none here: every service is on
 * loopback in one process), so the system worker needs no client certificate of ours.
 */
export function renderServerConfig(c: ServerConfigInput): ServerConfig {
  const sql = (databaseName: string, maxConns: number): SqlStore => ({
    sql: {
      pluginName: 'postgres12' as const,
      databaseName,
      connectAddr: `127.0.0.1:${c.postgres.port}`,
      connectProtocol: 'tcp' as const,
      user: c.postgres.user,
      password: c.postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, httpPort?: number): ServiceRpc => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...(httpPort ? { httpPort } : {}) },
  });
  const p = c.ports;
  return {
    log: { stdout: true, level: c.logLevel },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: c.numHistoryShards,
      datastores: {
        'postgres-default': sql(TEMPORAL_DATABASES.default, 20),
        'postgres-visibility': sql(TEMPORAL_DATABASES.visibility, 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      // pprof off: one port fewer to allocate, nothing here reads it
      pprof: { port: 0 },
      tls: {
        frontend: {
          server: { certFile: c.pki.serverCert, keyFile: c.pki.serverKey, requireClientAuth: true, clientCaFiles: [c.pki.caCert] },
          // what the server's own clients of the public frontend would verify it with
          client: { serverName: TEMPORAL_SERVER_NAME, rootCaFiles: [c.pki.caCert] },
        },
      },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${p.metrics}` } },
    },
    services: {
      frontend: rpc(p.frontend, p.frontendMembership, p.frontendHttp),
      'internal-frontend': rpc(p.internalFrontend, p.internalFrontendMembership, p.internalFrontendHttp),
      history: rpc(p.history, p.historyMembership),
      matching: rpc(p.matching, p.matchingMembership),
      worker: rpc(p.worker, p.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${p.frontend}`, httpAddress: `127.0.0.1:${p.frontendHttp}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    // archival off: a local stack has nowhere durable to archive to
    archival: archivalOff(),
    namespaceDefaults: { archival: archivalOff() },
    dynamicConfigClient: { filepath: c.dynamicConfigFile, pollInterval: '10s' },
  };
}

function archivalOff(): ArchivalOff {
  return { history: { state: 'disabled' }, visibility: { state: 'disabled' } };
}

export function renderServerConfigYaml(c: ServerConfigInput): string {
  return '# Written by `temporal-kcm local up --temporal postgres` at every start; edits are overwritten.\n' + stringify(renderServerConfig(c));
}

/**
 * Dynamic config, kept as a file as production does (the server re-reads it, so it is tuned
 * without a restart). One value differs from the server's default, as the dev server's does:
 * visibility calls (list and count workflows: `temporal-kcm why`, the tests' and an operator's
 * queries by search attribute) are limited to 10 per second per namespace by default, which
 * a test or a Web UI session polling lists meets at once.
 */
export function renderDynamicConfigYaml(): string {
  return '# Written by `temporal-kcm local up --temporal postgres`; the server re-reads it every 10s.\n' + stringify({
    'frontend.namespaceRPS.visibility': [{ value: 100 }],
  });
}

/** Where the server's files go in the data dir: config/<env>.yaml (what `--config`/`--env` load), dynamic config. */
export function serverConfigPaths(dataDir: string): { root: string; configDir: string; env: string; configFile: string; dynamicConfigFile: string } {
  const root = path.join(dataDir, 'temporal-server');
  const env = 'temporal-kcm';
  return {
    root,
    configDir: path.join(root, 'config'),
    env,
    configFile: path.join(root, 'config', `${env}.yaml`),
    dynamicConfigFile: path.join(root, 'config', 'dynamicconfig.yaml'),
  };
}

/** `temporal-server` arguments: every service in this one process, config from serverConfigPaths. */
export function serverArgs(dataDir: string): string[] {
  const p = serverConfigPaths(dataDir);
  return [
    '--root', p.root, '--config', 'config', '--env', p.env,
    // no authorizer: the frontend's mTLS is the gate (any client cert of the stack's Temporal CA)
    '--allow-no-auth',
    'start', ...SERVER_SERVICES.flatMap((s) => ['--service', s]),
  ];
}

/** What the Web UI server of the postgres topology is given. */
export interface UiServerConfigInput {
  /** the frontend's gRPC port (the stack's `temporal` port) */
  frontendPort: number;
  /** where the UI listens (the stack's `temporalUi` port, on loopback) */
  port: number;
  pki: TemporalPki;
}

/** The part of github.com/temporalio/ui-server/v2's server/config.Config this stack sets (YAML keys as there). */
export interface UiServerConfig {
  temporalGrpcAddress: string;
  host: string;
  port: number;
  publicPath: string;
  enableUi: boolean;
  defaultNamespace: string;
  hideLogs: boolean;
  cors: { cookieInsecure: boolean };
  tls: { caFile: string; certFile: string; keyFile: string; serverName: string; enableHostVerification: boolean };
}

/**
 * The Web UI server's config: the UI the dev server embeds, as its own process, serving the
 * browser's UI and the HTTP API the UI reads (/api/v1/...) on loopback, and calling the frontend
 * over the same mTLS every stack client uses.
 */
export function renderUiServerConfig(c: UiServerConfigInput): UiServerConfig {
  return {
    temporalGrpcAddress: `127.0.0.1:${c.frontendPort}`,
    host: '127.0.0.1',
    port: c.port,
    publicPath: '',
    enableUi: true,
    defaultNamespace: STACK_NAMESPACE,
    // one line per HTTP request otherwise: an open UI polls, and the log file would grow all day
    hideLogs: true,
    // plain HTTP on loopback, as the dev server serves it: a Secure CSRF cookie would never reach
    // the browser, and every write action of the UI (terminate, signal, reset) would be refused
    cors: { cookieInsecure: true },
    tls: {
      caFile: c.pki.caCert,
      certFile: c.pki.clientCert,
      keyFile: c.pki.clientKey,
      serverName: TEMPORAL_SERVER_NAME,
      // the UI server skips verifying the frontend's certificate unless told (InsecureSkipVerify)
      enableHostVerification: true,
    },
  };
}

export function renderUiServerConfigYaml(c: UiServerConfigInput): string {
  return '# Written by `temporal-kcm local up --temporal postgres` at every start; edits are overwritten.\n' + stringify(renderUiServerConfig(c));
}

/** Where the Web UI server's config goes in the data dir: config/<env>.yaml, what its --root, --config and --env load. */
export function uiServerConfigPaths(dataDir: string): { root: string; configDir: string; env: string; configFile: string } {
  const root = path.join(dataDir, 'temporal-ui');
  const env = 'temporal-kcm';
  return { root, configDir: path.join(root, 'config'), env, configFile: path.join(root, 'config', `${env}.yaml`) };
}

/** The Web UI server's arguments: its config from uiServerConfigPaths. */
export function uiServerArgs(dataDir: string): string[] {
  const p = uiServerConfigPaths(dataDir);
  return ['--root', p.root, '--config', 'config', '--env', p.env, 'start'];
}
