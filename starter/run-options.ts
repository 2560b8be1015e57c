import * as fs from 'node:fs';
import * as net from 'node:net';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../workflows/common/duration';
import { FlagSpec, FlagValues, INT32_MAX, flagDefault } from '../workers/flags';
import { controllerFlags } from '../workers/registry';
import { ALL_CONTROLLERS, DISABLED_BY_DEFAULT, UnknownControllerError, resolveEnabledControllers } from './controller-names';

/*
 * Flags of `temporal-kcm run`. Where a flag means what it means for kube-controller-manager it has
 * KCM's name and default, so an existing KCM command line mostly carries over.
 *
 * Commander only collects strings here; defaults, environment fallbacks and validation all live in
 * resolveRunOptions, because that is the one place that can tell "given on the command line" from
 * "defaulted" (env precedence and the leader-election warning need that distinction).
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const RUN_DEFAULTS = {
  controllers: ['*'] as readonly string[],
  kubeApiQps: 20,
  kubeApiBurst: 30,
  securePort: 10257,
  bindAddress: '0.0.0.0',
  leaderElect: true,
  minResyncPeriod: '12h',
  temporalAddress: '127.0.0.1:7233',
  temporalNamespace: 'default',
  taskQueue: 'temporal-kcm',
  resyncBackoffBase: '1s',
  resyncBackoffMax: '5m',
  maxHistoryEvents: 10000,
  useServiceAccountCredentials: false,
  informerHeartbeatTimeout: '15s',
  logLevel: 'info' as LogLevel,
} as const;

/** Temporal refuses to grow a history past this many events, so continue-as-new must happen before. */
const TEMPORAL_HISTORY_EVENT_LIMIT = 51200;


export interface TemporalTlsOptions {
  /** PEM client certificate; always given together with keyPath. */
  certPath?: string;
  keyPath?: string;
  /** PEM CA bundle to verify the server with; the system roots are used when absent. */
  caPath?: string;
  serverName?: string;
}

export interface RunOptions {
  /** Absent: the kube client falls back to in-cluster config. From env it may be a path list. */
  kubeconfig?: string;
  /** Replaces the server URL of the kubeconfig. */
  master?: string;
  /** The --controllers entries as given, for logging. */
  controllerSpec: string[];
  /** Canonical names of the controllers to run (includes names temporal-kcm does not implement). */
  enabledControllers: Set<string>;
  kubeApiQps: number;
  kubeApiBurst: number;
  /** every controller's own flags (its --concurrent-*-syncs and the rest), by flag name; read with flagValue() */
  controllerFlags: FlagValues;
  /** 0 means: do not serve health and metrics at all. */
  securePort: number;
  bindAddress: string;
  leaderElect: boolean;
  /** Set when the user asked for (or defaulted to) leader election, which this process does not do. */
  leaderElectWarning: string | undefined;
  /** An idle object's workflow re-observes it this often (no jitter: each object's timer starts at its own last reconcile); 0 turns resync off. */
  minResyncPeriodMs: number;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  /** Absent: plain-text gRPC to Temporal. */
  temporalTls?: TemporalTlsOptions;
  resyncBackoffBaseMs: number;
  resyncBackoffMaxMs: number;
  maxHistoryEvents: number;
  informerHeartbeatTimeoutMs: number;
  logLevel: LogLevel;
  /** each controller calls the API as its own ServiceAccount in kube-system */
  useServiceAccountCredentials: boolean;
  /** PEM CA bundle put into token Secrets and kube-root-ca.crt ConfigMaps */
  rootCaFile?: string;
}

// ---------------------------------------------------------------------------------------------
// commander

/** `--concurrent-*-syncs` and its kin (upstream's mirroring spelling included) are listed together. */
const isConcurrencyFlag = (f: FlagSpec) => /concurrent-.*-syncs$/.test(f.name);

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function withDefault(text: string, opts: { def?: unknown; env?: string }): string {
  const extra: string[] = [];
  if (opts.def !== undefined) extra.push(`default: ${String(opts.def)}`);
  if (opts.env) extra.push(`env ${opts.env}`);
  return extra.length ? `${text} (${extra.join('; ')})` : text;
}

function splitList(value: string): string[] {
  // pflag reads `--controllers=` as an empty list, not as one empty name
  return value === '' ? [] : value.split(',').map((s) => s.trim());
}

/** Adds every `run` flag to cmd. Values stay raw strings; pass cmd.opts() to resolveRunOptions. */
export function addRunOptions(cmd: Command): Command {
  const add = (flags: string, description: string) => cmd.addOption(new Option(flags, description));
  const ours = ' [temporal-kcm]';
  const testTuning = ' [temporal-kcm; meant for tests]';
  const ignored = ' [accepted for compatibility, ignored: Temporal replaces leader election]';

  add('--kubeconfig <path>', withDefault('kubeconfig with the API server location and credentials', { env: 'KUBECONFIG' }));
  add('--master <url>', 'API server URL; overrides the server in the kubeconfig');

  cmd.addOption(
    new Option(
      '--controllers <list>',
      withDefault(
        "controllers to run, comma-separated: '*' = every on-by-default controller, 'foo' enables foo, " +
          "'-foo' disables foo; the first entry naming a controller wins. May be repeated.",
        { def: RUN_DEFAULTS.controllers.join(',') },
      ) +
        `\nAll controllers: ${ALL_CONTROLLERS.join(', ')}` +
        `\nDisabled-by-default controllers: ${DISABLED_BY_DEFAULT.join(', ')}`,
    ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...splitList(value)]),
  );

  add('--kube-api-qps <float>', withDefault('requests per second to the API server, per controller client', { def: RUN_DEFAULTS.kubeApiQps }));
  add('--kube-api-burst <int>', withDefault('burst of requests to the API server', { def: RUN_DEFAULTS.kubeApiBurst }));
  const controllerSpecs = controllerFlags();
  const addControllerFlag = (f: FlagSpec) => {
    const arg = f.kind === 'int' ? '<int>' : f.kind === 'duration' ? '<duration>' : '<path>';
    add(`--${f.name} ${arg}`, f.kind === 'file' ? f.help : withDefault(f.help, { def: f.def }));
  };
  // the concurrency flags, then each controller's other flags further down, as upstream groups them
  for (const f of controllerSpecs.filter(isConcurrencyFlag)) addControllerFlag(f);

  add(
    '--secure-port <int>',
    withDefault('port for /healthz, /readyz and /metrics (plain HTTP here, HTTPS upstream); 0 disables serving', {
      def: RUN_DEFAULTS.securePort,
    }),
  );
  add('--bind-address <ip>', withDefault('IP address to serve health and metrics on', { def: RUN_DEFAULTS.bindAddress }));

  add('--leader-elect [bool]', withDefault('leader election' + ignored, { def: RUN_DEFAULTS.leaderElect }));
  add('--leader-elect-lease-duration <duration>', 'lease duration' + ignored);
  add('--leader-elect-renew-deadline <duration>', 'renew deadline' + ignored);
  add('--leader-elect-retry-period <duration>', 'retry period' + ignored);
  add('--leader-elect-resource-lock <kind>', 'lock object kind' + ignored);
  add('--leader-elect-resource-name <name>', 'lock object name' + ignored);
  add('--leader-elect-resource-namespace <ns>', 'lock object namespace' + ignored);

  add(
    '--use-service-account-credentials [bool]',
    withDefault("each controller uses its own ServiceAccount in kube-system (token from the TokenRequest API), bounded by RBAC's system:controller:* roles", {
      def: RUN_DEFAULTS.useServiceAccountCredentials,
    }),
  );
  add('--root-ca-file <path>', 'PEM CA bundle published in kube-root-ca.crt ConfigMaps and in service account token Secrets');
  for (const f of controllerSpecs.filter((f) => !isConcurrencyFlag(f))) addControllerFlag(f);

  add(
    '--min-resync-period <duration>',
    withDefault("an idle object's workflow re-observes it this often (upstream resyncs informers at a random point between this and twice this); 0 disables resync", {
      def: RUN_DEFAULTS.minResyncPeriod,
    }),
  );

  add('--temporal-address <host:port>', withDefault('Temporal frontend' + ours, { def: RUN_DEFAULTS.temporalAddress, env: 'TEMPORAL_ADDRESS' }));
  add('--temporal-namespace <ns>', withDefault('Temporal namespace' + ours, { def: RUN_DEFAULTS.temporalNamespace, env: 'TEMPORAL_NAMESPACE' }));
  add(
    '--task-queue <name>',
    withDefault('task queue every replica polls' + ours, { def: RUN_DEFAULTS.taskQueue, env: 'TEMPORAL_KCM_TASK_QUEUE' }),
  );
  add('--temporal-tls', withDefault('connect to Temporal over TLS (implied by any --temporal-tls-* flag)' + ours, { env: 'TEMPORAL_TLS' }));
  add('--temporal-tls-cert <path>', withDefault('PEM client certificate; needs --temporal-tls-key' + ours, { env: 'TEMPORAL_TLS_CERT' }));
  add('--temporal-tls-key <path>', withDefault('PEM client key; needs --temporal-tls-cert' + ours, { env: 'TEMPORAL_TLS_KEY' }));
  add('--temporal-tls-ca <path>', withDefault('PEM CA bundle for the server certificate' + ours, { env: 'TEMPORAL_TLS_CA' }));
  add(
    '--temporal-tls-server-name <name>',
    withDefault('server name to verify instead of the address host' + ours, { env: 'TEMPORAL_TLS_SERVER_NAME' }),
  );

  add(
    '--resync-backoff-base <duration>',
    withDefault('delay before the first retry of a failed reconcile; doubles per retry' + testTuning, {
      def: RUN_DEFAULTS.resyncBackoffBase,
    }),
  );
  add('--resync-backoff-max <duration>', withDefault('longest retry delay' + testTuning, { def: RUN_DEFAULTS.resyncBackoffMax }));
  add(
    '--max-history-events <int>',
    withDefault('workflow history length that triggers continue-as-new' + testTuning, { def: RUN_DEFAULTS.maxHistoryEvents }),
  );
  add(
    '--informer-heartbeat-timeout <duration>',
    withDefault('a watch activity silent this long is presumed dead and restarted' + testTuning, {
      def: RUN_DEFAULTS.informerHeartbeatTimeout,
    }),
  );

  add('--log-level <level>', withDefault(`one of ${LOG_LEVELS.join(', ')}`, { def: RUN_DEFAULTS.logLevel, env: 'LOG_LEVEL' }));
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// validation

interface Given {
  value: unknown;
  /** How to name the value's origin in an error message. */
  origin: string;
}

/** Parses Go's strconv.ParseBool spellings, which is what pflag accepts for `--flag=value`. */
function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  return undefined;
}

/** Collects every problem instead of stopping at the first, so one run reports them all. */
class Reader {
  readonly problems: string[] = [];

  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  given(flag: string, envName?: string): Given | undefined {
    const v = this.raw[camel(flag)];
    if (v !== undefined) return { value: v, origin: `--${flag}` };
    // an exported-but-empty variable means "unset", as most CLIs treat it
    const e = envName ? this.env[envName] : undefined;
    if (e !== undefined && e !== '') return { value: e, origin: `--${flag} (from env ${envName})` };
    return undefined;
  }

  /** The name to blame for a value that parsed but is still wrong. */
  origin(flag: string, envName?: string): string {
    return this.given(flag, envName)?.origin ?? `--${flag}`;
  }

  isSet(flag: string): boolean {
    return this.raw[camel(flag)] !== undefined;
  }

  fail(origin: string, value: unknown, why: string): undefined {
    this.problems.push(`${origin}: ${JSON.stringify(value)} ${why}`);
    return undefined;
  }

  string(flag: string, opts: { env?: string; def: string }): string;
  string(flag: string, opts: { env?: string; def?: undefined }): string | undefined;
  string(flag: string, opts: { env?: string; def?: string }): string | undefined {
    const g = this.given(flag, opts.env);
    if (!g) return opts.def;
    if (typeof g.value !== 'string' || g.value.trim() === '') return this.fail(g.origin, g.value, 'must be a non-empty string') ?? opts.def;
    return g.value.trim();
  }

  int(flag: string, opts: { env?: string; def: number; min: number; max: number }): number {
    const g = this.given(flag, opts.env);
    if (!g) return opts.def;
    const n = typeof g.value === 'number' ? g.value : typeof g.value === 'string' && /^[+-]?\d+$/.test(g.value.trim()) ? Number(g.value) : NaN;
    if (!Number.isSafeInteger(n)) return this.fail(g.origin, g.value, 'is not an integer') ?? opts.def;
    if (n < opts.min || n > opts.max) return this.fail(g.origin, g.value, `must be from ${opts.min} to ${opts.max}`) ?? opts.def;
    return n;
  }

  positiveFloat(flag: string, opts: { def: number }): number {
    const g = this.given(flag);
    if (!g) return opts.def;
    const s = typeof g.value === 'string' ? g.value.trim() : undefined;
    const n = typeof g.value === 'number' ? g.value : s !== undefined && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : NaN;
    if (!Number.isFinite(n)) return this.fail(g.origin, g.value, 'is not a number') ?? opts.def;
    if (n <= 0) return this.fail(g.origin, g.value, 'must be greater than 0') ?? opts.def;
    return n;
  }

  durationMs(flag: string, opts: { def?: string; allowZero: boolean }): number | undefined {
    const g = this.given(flag);
    const text = g ? g.value : opts.def;
    if (text === undefined) return undefined;
    const origin = this.origin(flag);
    if (typeof text !== 'string') return this.fail(origin, text, 'is not a duration');
    let ms: number;
    try {
      ms = parseGoDuration(text.trim());
    } catch (e) {
      return this.fail(origin, text, `is not a duration like 30s, 5m or 1h30m (${(e as Error).message})`);
    }
    if (ms < 0 || (ms === 0 && !opts.allowZero)) {
      return this.fail(origin, text, opts.allowZero ? 'must not be negative' : 'must be greater than 0');
    }
    return ms;
  }

  bool(flag: string, opts: { env?: string; def: boolean }): boolean {
    const g = this.given(flag, opts.env);
    if (!g) return opts.def;
    if (typeof g.value === 'boolean') return g.value;
    const b = typeof g.value === 'string' ? parseGoBool(g.value.trim()) : undefined;
    if (b === undefined) return this.fail(g.origin, g.value, 'is not a boolean (true or false)') ?? opts.def;
    return b;
  }

  existingFile(flag: string, envName?: string): string | undefined {
    const p = this.string(flag, { env: envName });
    if (p === undefined) return undefined;
    const origin = this.origin(flag, envName);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return this.fail(origin, p, 'does not exist');
    }
    if (!st.isFile()) return this.fail(origin, p, 'is not a file');
    return p;
  }
}

function controllerSpecOf(r: Reader): string[] {
  const g = r.given('controllers');
  if (!g) return [...RUN_DEFAULTS.controllers];
  if (typeof g.value === 'string') return splitList(g.value);
  if (Array.isArray(g.value) && g.value.every((v): v is string => typeof v === 'string')) return [...g.value];
  r.fail(g.origin, g.value, 'must be a comma-separated list');
  return [...RUN_DEFAULTS.controllers];
}

function isHostPort(value: string): boolean {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : 0;
  return port >= 1 && port <= 65535;
}

const LEADER_ELECT_FLAGS = [
  'leader-elect',
  'leader-elect-lease-duration',
  'leader-elect-renew-deadline',
  'leader-elect-retry-period',
  'leader-elect-resource-lock',
  'leader-elect-resource-name',
  'leader-elect-resource-namespace',
] as const;

function leaderElectWarning(r: Reader, leaderElect: boolean, taskQueue: string): string | undefined {
  const tuning = LEADER_ELECT_FLAGS.filter((f) => f !== 'leader-elect' && r.isSet(f));
  // an explicit --leader-elect=false with nothing else is the user acknowledging the difference
  if (!leaderElect && tuning.length === 0) return undefined;
  const named = leaderElect && r.isSet('leader-elect') ? ['leader-elect', ...tuning] : tuning;
  const why = named.length
    ? `ignoring ${named.map((f) => `--${f}`).join(', ')}`
    : '--leader-elect defaults to true as upstream; pass --leader-elect=false to silence this';
  return (
    'leader election is not used: Temporal replaces it. Every replica runs a worker on task queue ' +
    `${JSON.stringify(taskQueue)} and Temporal gives each object's workflow to one worker at a time, ` +
    `so replicas share the work instead of standing by (${why})`
  );
}

/**
 * Turns commander's raw option values (plus the environment) into RunOptions.
 * Precedence is flag, then environment variable, then default.
 * Throws InvalidArgumentError listing every bad value.
 */
export function resolveRunOptions(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): RunOptions {
  const r = new Reader(raw, env);

  // KUBECONFIG may list several files, some of which need not exist; the kube client sorts that out
  const kubeconfig = r.isSet('kubeconfig') ? r.existingFile('kubeconfig') : r.string('kubeconfig', { env: 'KUBECONFIG' });

  const master = r.string('master', {});
  if (master !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(master).protocol);
    } catch {
      // reported below
    }
    if (!ok) r.fail(r.origin('master'), master, 'must be an http:// or https:// URL');
  }

  const controllerSpec = controllerSpecOf(r);
  let enabledControllers = new Set<string>();
  try {
    enabledControllers = resolveEnabledControllers(controllerSpec);
  } catch (e) {
    if (!(e instanceof UnknownControllerError)) throw e;
    r.problems.push(`--controllers: ${e.message}`);
  }

  const kubeApiQps = r.positiveFloat('kube-api-qps', { def: RUN_DEFAULTS.kubeApiQps });
  const kubeApiBurst = r.int('kube-api-burst', { def: RUN_DEFAULTS.kubeApiBurst, min: 1, max: INT32_MAX });

  const controllerFlagValues: Record<string, number | string | undefined> = {};
  for (const f of controllerFlags()) {
    if (f.kind === 'int') controllerFlagValues[f.name] = r.int(f.name, { def: f.def, min: f.min, max: f.max });
    else if (f.kind === 'duration') controllerFlagValues[f.name] = r.durationMs(f.name, { def: f.def, allowZero: f.allowZero }) ?? flagDefault(f);
    else {
      const path = r.existingFile(f.name);
      if (path !== undefined) controllerFlagValues[f.name] = path;
    }
  }

  const securePort = r.int('secure-port', { def: RUN_DEFAULTS.securePort, min: 0, max: 65535 });
  const bindAddress = r.string('bind-address', { def: RUN_DEFAULTS.bindAddress });
  if (net.isIP(bindAddress) === 0) r.fail(r.origin('bind-address'), bindAddress, 'is not an IP address');

  const leaderElect = r.bool('leader-elect', { def: RUN_DEFAULTS.leaderElect });
  // ignored, but a malformed value would stop upstream too, so it is still worth reporting
  for (const f of ['leader-elect-lease-duration', 'leader-elect-renew-deadline', 'leader-elect-retry-period']) {
    r.durationMs(f, { allowZero: false });
  }

  const minResyncPeriodMs = r.durationMs('min-resync-period', { def: RUN_DEFAULTS.minResyncPeriod, allowZero: true }) ?? 0;

  const temporalAddress = r.string('temporal-address', { env: 'TEMPORAL_ADDRESS', def: RUN_DEFAULTS.temporalAddress });
  if (!isHostPort(temporalAddress)) r.fail(r.origin('temporal-address', 'TEMPORAL_ADDRESS'), temporalAddress, 'must be host:port');
  const temporalNamespace = r.string('temporal-namespace', { env: 'TEMPORAL_NAMESPACE', def: RUN_DEFAULTS.temporalNamespace });
  const taskQueue = r.string('task-queue', { env: 'TEMPORAL_KCM_TASK_QUEUE', def: RUN_DEFAULTS.taskQueue });

  const tlsWanted = r.bool('temporal-tls', { env: 'TEMPORAL_TLS', def: false });
  const tlsExplicitlyOff = !r.isSet('temporal-tls') && env.TEMPORAL_TLS !== undefined && parseGoBool(env.TEMPORAL_TLS) === false;
  const tls: TemporalTlsOptions = {
    certPath: r.existingFile('temporal-tls-cert', 'TEMPORAL_TLS_CERT'),
    keyPath: r.existingFile('temporal-tls-key', 'TEMPORAL_TLS_KEY'),
    caPath: r.existingFile('temporal-tls-ca', 'TEMPORAL_TLS_CA'),
    serverName: r.string('temporal-tls-server-name', { env: 'TEMPORAL_TLS_SERVER_NAME' }),
  };
  const certGiven = r.given('temporal-tls-cert', 'TEMPORAL_TLS_CERT') !== undefined;
  const keyGiven = r.given('temporal-tls-key', 'TEMPORAL_TLS_KEY') !== undefined;
  if (certGiven !== keyGiven) {
    r.problems.push(
      certGiven
        ? '--temporal-tls-cert needs --temporal-tls-key (a client certificate is useless without its key)'
        : '--temporal-tls-key needs --temporal-tls-cert (a client key is useless without its certificate)',
    );
  }
  const tlsMaterial = (Object.keys(tls) as (keyof TemporalTlsOptions)[]).filter((k) => tls[k] !== undefined);
  if (tlsExplicitlyOff && tlsMaterial.length) {
    r.problems.push('TEMPORAL_TLS is false, but TLS certificates or a server name were given');
  }
  for (const k of Object.keys(tls) as (keyof TemporalTlsOptions)[]) if (tls[k] === undefined) delete tls[k];
  const temporalTls = tlsWanted || tlsMaterial.length ? tls : undefined;

  const resyncBackoffBaseMs = r.durationMs('resync-backoff-base', { def: RUN_DEFAULTS.resyncBackoffBase, allowZero: false }) ?? 1000;
  const resyncBackoffMaxMs = r.durationMs('resync-backoff-max', { def: RUN_DEFAULTS.resyncBackoffMax, allowZero: false }) ?? 300_000;
  if (resyncBackoffMaxMs < resyncBackoffBaseMs) {
    r.problems.push(`--resync-backoff-max (${resyncBackoffMaxMs}ms) must not be less than --resync-backoff-base (${resyncBackoffBaseMs}ms)`);
  }
  // a handful of events is what starting and one reconcile cost; below that a run could never progress
  const maxHistoryEvents = r.int('max-history-events', { def: RUN_DEFAULTS.maxHistoryEvents, min: 10, max: TEMPORAL_HISTORY_EVENT_LIMIT });
  const informerHeartbeatTimeoutMs =
    r.durationMs('informer-heartbeat-timeout', { def: RUN_DEFAULTS.informerHeartbeatTimeout, allowZero: false }) ?? 15_000;

  const useServiceAccountCredentials = r.bool('use-service-account-credentials', { def: RUN_DEFAULTS.useServiceAccountCredentials });
  const rootCaFile = r.existingFile('root-ca-file');

  const levelText = r.string('log-level', { env: 'LOG_LEVEL', def: RUN_DEFAULTS.logLevel }).toLowerCase();
  const logLevel = (LOG_LEVELS as readonly string[]).includes(levelText) ? (levelText as LogLevel) : RUN_DEFAULTS.logLevel;
  if (logLevel !== levelText) r.fail(r.origin('log-level', 'LOG_LEVEL'), levelText, `must be one of ${LOG_LEVELS.join(', ')}`);

  if (r.problems.length) throw new InvalidArgumentError(r.problems.join('\n'));

  return {
    kubeconfig,
    master,
    controllerSpec,
    enabledControllers,
    kubeApiQps,
    kubeApiBurst,
    controllerFlags: controllerFlagValues,
    securePort,
    bindAddress,
    leaderElect,
    leaderElectWarning: leaderElectWarning(r, leaderElect, taskQueue),
    minResyncPeriodMs,
    temporalAddress,
    temporalNamespace,
    taskQueue,
    ...(temporalTls ? { temporalTls } : {}),
    resyncBackoffBaseMs,
    resyncBackoffMaxMs,
    maxHistoryEvents,
    informerHeartbeatTimeoutMs,
    logLevel,
    useServiceAccountCredentials,
    ...(rootCaFile ? { rootCaFile } : {}),
  };
}

/** The TLS files read into memory, shaped like the `tls` option of Temporal's connection options. */
export interface LoadedTemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** Reads the files named in TemporalTlsOptions (kept separate so option parsing stays cheap). */
export function loadTemporalTls(tls: TemporalTlsOptions): LoadedTemporalTls {
  const out: LoadedTemporalTls = {};
  if (tls.serverName) out.serverNameOverride = tls.serverName;
  if (tls.caPath) out.serverRootCACertificate = fs.readFileSync(tls.caPath);
  if (tls.certPath && tls.keyPath) out.clientCertPair = { crt: fs.readFileSync(tls.certPath), key: fs.readFileSync(tls.keyPath) };
  return out;
}
