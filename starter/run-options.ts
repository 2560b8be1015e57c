import * as fs from 'node:fs';
import * as net from 'node:net';
import { Command, InvalidArgumentError, Option } from 'commander';
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

interface ConcurrentSyncsFlag {
  readonly flag: string;
  readonly default: number;
  readonly description: string;
}

/**
 * KCM's per-controller `--concurrent-*-syncs` flags, keyed by canonical controller name so a worker
 * can look its own value up. Adding a controller's flag is one entry here.
 */
export const CONCURRENT_SYNCS = {
  'replicaset-controller': {
    flag: 'concurrent-replicaset-syncs',
    default: 5,
    description: 'how many replica sets may reconcile at the same time',
  },
  'garbage-collector-controller': {
    flag: 'concurrent-gc-syncs',
    default: 20,
    description: 'how many objects the garbage collector may process at the same time',
  },
  'deployment-controller': {
    flag: 'concurrent-deployment-syncs',
    default: 5,
    description: 'how many deployments may reconcile at the same time',
  },
  // upstream registers this one as concurrent_rc_syncs and relies on pflag turning _ into -
  'replicationcontroller-controller': {
    flag: 'concurrent-rc-syncs',
    default: 5,
    description: 'how many replication controllers may reconcile at the same time',
  },
  'namespace-controller': {
    flag: 'concurrent-namespace-syncs',
    default: 10,
    description: 'how many namespaces may be emptied at the same time',
  },
  'serviceaccount-token-controller': {
    flag: 'concurrent-serviceaccount-token-syncs',
    default: 5,
    description: 'how many service account token secrets may be filled at the same time',
  },
  'resourcequota-controller': {
    flag: 'concurrent-resource-quota-syncs',
    default: 5,
    description: 'how many resource quotas may be recounted at the same time',
  },
  'endpoints-controller': {
    flag: 'concurrent-endpoint-syncs',
    default: 5,
    description: "how many services' Endpoints may be written at the same time",
  },
  'endpointslice-controller': {
    flag: 'concurrent-service-endpoint-syncs',
    default: 5,
    description: "how many services' EndpointSlices may be written at the same time",
  },
  'endpointslice-mirroring-controller': {
    flag: 'mirroring-concurrent-service-endpoint-syncs',
    default: 5,
    description: "how many services' custom Endpoints may be mirrored at the same time",
  },
  'job-controller': {
    flag: 'concurrent-job-syncs',
    default: 5,
    description: 'how many jobs may reconcile at the same time',
  },
  'cronjob-controller': {
    flag: 'concurrent-cron-job-syncs',
    default: 5,
    description: 'how many cron jobs may reconcile at the same time',
  },
  'ttl-after-finished-controller': {
    flag: 'concurrent-ttl-after-finished-syncs',
    default: 5,
    description: 'how many finished jobs may be cleaned up at the same time',
  },
} as const satisfies Record<string, ConcurrentSyncsFlag>;

/** Controllers upstream gives a fixed number of workers, with no flag to change it. */
export const FIXED_SYNCS: Readonly<Record<string, number>> = {
  'serviceaccount-controller': 1,
  'root-ca-certificate-publisher-controller': 1,
  'clusterrole-aggregation-controller': 5,
  'pod-garbage-collector-controller': 1,
};

export type ConcurrentSyncsController = keyof typeof CONCURRENT_SYNCS;

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
  namespaceSyncPeriod: '5m',
  resourceQuotaSyncPeriod: '5m',
  maxEndpointsPerSlice: 100,
  mirroringMaxEndpointsPerSubset: 1000,
  terminatedPodGcThreshold: 12500,
  useServiceAccountCredentials: false,
  informerHeartbeatTimeout: '15s',
  logLevel: 'info' as LogLevel,
} as const;

/** Temporal refuses to grow a history past this many events, so continue-as-new must happen before. */
const TEMPORAL_HISTORY_EVENT_LIMIT = 51200;

/** Upstream keeps counts in int32 fields. */
const INT32_MAX = 2 ** 31 - 1;

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
  concurrentSyncs: Readonly<Record<ConcurrentSyncsController, number>>;
  /** 0 means: do not serve health and metrics at all. */
  securePort: number;
  bindAddress: string;
  leaderElect: boolean;
  /** Set when the user asked for (or defaulted to) leader election, which this process does not do. */
  leaderElectWarning: string | undefined;
  /** Informer resync happens at a random point between this and twice this; 0 turns resync off. */
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
  /** PEM key that signs service account token Secrets; without it that controller does not run */
  serviceAccountPrivateKeyFile?: string;
  /** PEM CA bundle put into token Secrets and kube-root-ca.crt ConfigMaps */
  rootCaFile?: string;
  /** podgc deletes terminated pods beyond this many, oldest first; 0 turns that off */
  terminatedPodGcThreshold: number;
  namespaceSyncPeriodMs: number;
  resourceQuotaSyncPeriodMs: number;
  maxEndpointsPerSlice: number;
  mirroringMaxEndpointsPerSubset: number;
}

// ---------------------------------------------------------------------------------------------
// Go durations

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu; Go accepts both spellings
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** time.Duration is an int64 of nanoseconds; anything larger is an error in Go, so here too. */
const MAX_DURATION_NS = (1n << 63n) - 1n;

/**
 * Milliseconds in a Go duration string ("300ms", "1.5h", "1h30m", "-2s", "0").
 * Accepts exactly what Go's time.ParseDuration accepts; the result can be fractional (ns, us).
 * Arithmetic is done in integer nanoseconds so "1.1s" is exactly 1100.
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new Error(`invalid duration ${JSON.stringify(text)}`);
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  // a bare zero is the one number Go lets through without a unit
  if (s === '0') return 0;
  if (s === '') throw invalid();

  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let totalNs = 0n;
  let i = 0;
  while (i < s.length) {
    if (!isDigit(s[i]) && s[i] !== '.') throw invalid();
    const intStart = i;
    while (isDigit(s[i])) i++;
    const intDigits = s.slice(intStart, i);
    let fracDigits = '';
    if (s[i] === '.') {
      i++;
      const fracStart = i;
      while (isDigit(s[i])) i++;
      fracDigits = s.slice(fracStart, i);
    }
    if (intDigits === '' && fracDigits === '') throw invalid();

    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unit = s.slice(unitStart, i);
    if (unit === '') throw new Error(`missing unit in duration ${JSON.stringify(text)}`);
    const perUnit = NS_PER_UNIT[unit];
    if (perUnit === undefined) {
      throw new Error(`unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)} (use ns, us, ms, s, m or h)`);
    }

    let ns = BigInt(intDigits || '0') * perUnit;
    if (fracDigits) ns += (BigInt(fracDigits) * perUnit) / 10n ** BigInt(fracDigits.length);
    totalNs += ns;
    if (totalNs > MAX_DURATION_NS + (negative ? 1n : 0n)) throw invalid();
  }
  const ms = Number(totalNs) / 1e6;
  return negative ? -ms : ms;
}

// ---------------------------------------------------------------------------------------------
// commander

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

  add('--kube-api-qps <float>', withDefault('requests per second to the API server', { def: RUN_DEFAULTS.kubeApiQps }));
  add('--kube-api-burst <int>', withDefault('burst of requests to the API server', { def: RUN_DEFAULTS.kubeApiBurst }));
  for (const spec of Object.values(CONCURRENT_SYNCS)) {
    add(`--${spec.flag} <int>`, withDefault(spec.description, { def: spec.default }));
  }

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
  add('--service-account-private-key-file <path>', 'PEM private key that signs service account tokens; the serviceaccount-token controller needs it');
  add('--root-ca-file <path>', 'PEM CA bundle published in kube-root-ca.crt ConfigMaps and in service account token Secrets');
  add('--namespace-sync-period <duration>', withDefault('how often a terminating namespace is looked at again', { def: RUN_DEFAULTS.namespaceSyncPeriod }));
  add(
    '--resource-quota-sync-period <duration>',
    withDefault('how often every resource quota is recounted in full', { def: RUN_DEFAULTS.resourceQuotaSyncPeriod }),
  );

  add('--max-endpoints-per-slice <int>', withDefault('most endpoints one EndpointSlice holds (1..1000)', { def: RUN_DEFAULTS.maxEndpointsPerSlice }));
  add(
    '--mirroring-max-endpoints-per-subset <int>',
    withDefault('most addresses of one Endpoints subset mirrored into EndpointSlices (1..1000)', { def: RUN_DEFAULTS.mirroringMaxEndpointsPerSubset }),
  );
  add(
    '--terminated-pod-gc-threshold <int>',
    withDefault('terminated pods kept before the oldest are deleted; 0 keeps them all', { def: RUN_DEFAULTS.terminatedPodGcThreshold }),
  );

  add(
    '--min-resync-period <duration>',
    withDefault('informers resync at a random point between this and twice this; 0 disables resync', {
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

  const concurrentSyncs = {} as Record<ConcurrentSyncsController, number>;
  for (const [controller, spec] of Object.entries(CONCURRENT_SYNCS) as [ConcurrentSyncsController, ConcurrentSyncsFlag][]) {
    concurrentSyncs[controller] = r.int(spec.flag, { def: spec.default, min: 1, max: INT32_MAX });
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
  const serviceAccountPrivateKeyFile = r.existingFile('service-account-private-key-file');
  const rootCaFile = r.existingFile('root-ca-file');
  const namespaceSyncPeriodMs = r.durationMs('namespace-sync-period', { def: RUN_DEFAULTS.namespaceSyncPeriod, allowZero: false }) ?? 300_000;
  const resourceQuotaSyncPeriodMs =
    r.durationMs('resource-quota-sync-period', { def: RUN_DEFAULTS.resourceQuotaSyncPeriod, allowZero: false }) ?? 300_000;

  const maxEndpointsPerSlice = r.int('max-endpoints-per-slice', { def: RUN_DEFAULTS.maxEndpointsPerSlice, min: 1, max: 1000 });
  const mirroringMaxEndpointsPerSubset = r.int('mirroring-max-endpoints-per-subset', { def: RUN_DEFAULTS.mirroringMaxEndpointsPerSubset, min: 1, max: 1000 });
  const terminatedPodGcThreshold = r.int('terminated-pod-gc-threshold', { def: RUN_DEFAULTS.terminatedPodGcThreshold, min: 0, max: INT32_MAX });

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
    concurrentSyncs,
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
    ...(serviceAccountPrivateKeyFile ? { serviceAccountPrivateKeyFile } : {}),
    ...(rootCaFile ? { rootCaFile } : {}),
    namespaceSyncPeriodMs,
    resourceQuotaSyncPeriodMs,
    maxEndpointsPerSlice,
    mirroringMaxEndpointsPerSubset,
    terminatedPodGcThreshold,
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
