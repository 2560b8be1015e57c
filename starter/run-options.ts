import * as fs from 'node:fs';
import * as net from 'node:net';
import type * as tls from 'node:tls';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../workflows/common/duration';
import { SHADOW_TASK_QUEUE_SUFFIX, SHADOW_WORKFLOW_ID_PREFIX } from '../workflows/runtime/workflow-ids';
import { FeatureGateError, parseFeatureGates, resolveFeatureGates, settingWarnings } from '../workers/feature-gates';
import { FlagSpec, FlagValues, INT32_MAX, flagDefault, parseGoBool } from '../workers/flags';
import { CONTROLLERS, controllerFlags } from '../workers/registry';
import { ALL_CONTROLLERS, DISABLED_BY_DEFAULT, UnknownControllerError, resolveEnabledControllers } from './controller-names';
import { DEFAULT_ALWAYS_ALLOW_PATHS, alwaysAllowMatcher } from './secure-serving/delegated-auth';
import { addAcceptedUpstreamFlags, resolveAcceptedUpstreamFlags, type GivenUpstreamFlag } from './upstream-flag-options';

/*
 * Flags of `temporal-kcm run`. Where a flag means what it means for kube-controller-manager it has
 * KCM's name and default, so an existing KCM command line mostly carries over.
 *
 * Commander reads the command line and the environment (`Option.env`), shows defaults and
 * variables in --help (`Option.default`), and records where each value came from
 * (`getOptionValueSource`). resolveRunOptions validates: it collects every problem, names the
 * variable a bad value came from, treats an exported-but-empty variable as unset, and tells a flag
 * given on the command line from a default (the leader-election warning needs that). It does not
 * use `Option.choices`, which would make --log-level case-sensitive.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const RUN_DEFAULTS = {
  controllers: ['*'] as readonly string[],
  kubeApiQps: 20,
  kubeApiBurst: 30,
  securePort: 10257,
  bindAddress: '0.0.0.0',
  authenticationTokenWebhookCacheTtl: '10s',
  authorizationAlwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS,
  authorizationWebhookCacheAuthorizedTtl: '10s',
  authorizationWebhookCacheUnauthorizedTtl: '10s',
  leaderElect: true,
  minResyncPeriod: '12h',
  temporalAddress: '127.0.0.1:7233',
  temporalNamespace: 'default',
  taskQueue: 'temporal-kcm',
  resyncBackoffBase: '1s',
  resyncBackoffMax: '5m',
  maxHistoryEvents: 1000,
  maxIdleHistoryEvents: 25,
  settledContinueAsNew: '15m',
  maxSignalHold: '5m',
  maxRunAge: '168h',
  useServiceAccountCredentials: false,
  informerHeartbeatTimeout: '3s',
  discoveryPeriod: '30s',
  workflowStackTraces: false,
  shadow: false,
  shadowWindow: '10s',
  logLevel: 'info' as LogLevel,
} as const;

/** Temporal refuses to grow a history past this many events, so continue-as-new must happen before. */
const TEMPORAL_HISTORY_EVENT_LIMIT = 51200;
/** a decimal number as Go's ParseFloat reads one on the command line */
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;


export interface TemporalTlsOptions {
  /** PEM client certificate; always given together with keyPath. */
  certPath?: string;
  keyPath?: string;
  /** PEM CA bundle to verify the server with; the system roots are used when absent. */
  caPath?: string;
  serverName?: string;
}

/** Go's --tls-min-version names and Node's for the same version. */
export const TLS_VERSIONS: Readonly<Record<string, tls.SecureVersion>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** How the secure port serves and whom it lets in: upstream's secure serving, delegated authentication and authorization flags. */
export interface SecureServingOptions {
  /** a self-signed pair is kept here (kube-controller-manager.{crt,key}); absent: made in memory */
  certDir?: string;
  /** given together, or not at all */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** absent: Node's default (TLS 1.2), as Go's */
  tlsMinVersion?: tls.SecureVersion;
  authenticationKubeconfig?: string;
  authenticationTokenWebhookCacheTtlMs: number;
  authenticationSkipLookup: boolean;
  authenticationTolerateLookupFailure: boolean;
  clientCaFile?: string;
  authorizationKubeconfig?: string;
  authorizationAlwaysAllowPaths: string[];
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
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
  /** every controller's own flags (its --concurrent-*-syncs and the rest), by flag name; read with flagValue(); and the feature gates that differ from their defaults (featureEnabled()) */
  controllerFlags: FlagValues;
  /** the --feature-gates settings as given (name -> value), for the start log */
  featureGates: Record<string, boolean>;
  /** upstream's warnings for GA and deprecated gates that were set */
  featureGateWarnings: string[];
  /** 0 means: do not serve health and metrics at all. */
  securePort: number;
  bindAddress: string;
  secureServing: SecureServingOptions;
  leaderElect: boolean;
  /** Set when the user asked for (or defaulted to) leader election, which this process does not do. */
  leaderElectWarning: string | undefined;
  /** An idle object's workflow re-observes it this often (no jitter: each object's timer starts at its own last reconcile); 0 turns resync off. */
  minResyncPeriodMs: number;
  temporalAddress: string;
  temporalNamespace: string;
  /** the base task queue; with --shadow, the one given plus SHADOW_TASK_QUEUE_SUFFIX */
  taskQueue: string;
  /**
   * --shadow: every write goes to the API server as a dry run and is recorded as a proposal
   * (activities/kube/shadow.ts); per-object workflow IDs start with SHADOW_WORKFLOW_ID_PREFIX
   */
  shadow: boolean;
  /** --shadow-window: the shadow ledger's `agree` window (its horizon is shadowHorizonMs of it) */
  shadowWindowMs: number;
  /** Absent: plain-text gRPC to Temporal. */
  temporalTls?: TemporalTlsOptions;
  resyncBackoffBaseMs: number;
  resyncBackoffMaxMs: number;
  maxHistoryEvents: number;
  maxIdleHistoryEvents: number;
  /** a converged run past maxIdleHistoryEvents continues as new once quiet this long; 0 only at its resync */
  settledContinueAsNewMs: number;
  /** how long a controller's signal gate may hold an object's events; 0 holds none */
  maxSignalHoldMs: number;
  /** an object workflow's run continues as new at its first turn with nothing pending once this old */
  maxRunAgeMs: number;
  informerHeartbeatTimeoutMs: number;
  /** how often the resources the collector and quota track are re-read from API discovery */
  discoveryPeriodMs: number;
  logLevel: LogLevel;
  /** each controller calls the API as its own ServiceAccount in kube-system */
  useServiceAccountCredentials: boolean;
  /** PEM CA bundle put into token Secrets and kube-root-ca.crt ConfigMaps */
  rootCaFile?: string;
  /** collect pending promises' stack traces for Temporal's stack-trace query (costly; off by default) */
  workflowStackTraces: boolean;
  /** where SIGUSR2 writes V8 heap snapshots of the main thread and each workflow thread (off when unset) */
  heapSnapshotDir?: string;
  /** the most workflow runs each controller's worker keeps cached (0: none); unset, the SDK's default from the heap limit */
  maxCachedWorkflows?: number;
  /** upstream flags given that have no option of ours (starter/upstream-flag-policy.ts), for the start log */
  upstreamFlags: GivenUpstreamFlag[];
  /** --logging-format: JSON lines (ours), or klog's text lines (upstream's default) */
  logFormat: 'json' | 'text';
}

// ---------------------------------------------------------------------------------------------
// commander

/** `--concurrent-*-syncs` and its kin (upstream's mirroring spelling included) are listed together. */
const isConcurrencyFlag = (f: FlagSpec) => /concurrent-.*-syncs$/.test(f.name);

/** A flag's name as commander's option key (`--kube-api-qps` -> `kubeApiQps`). */
export function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function splitList(value: string): string[] {
  // pflag reads `--controllers=` as an empty list, not as one empty name
  return value === '' ? [] : value.split(',').map((s) => s.trim());
}

/** An option with its default and variable, both shown in --help by commander. */
function addOption(cmd: Command, flags: string, description: string, o: { def?: string | number | boolean; env?: string } = {}): void {
  const option = new Option(flags, description);
  if (o.def !== undefined) option.default(o.def);
  if (o.env) option.env(o.env);
  cmd.addOption(option);
}

/** The flags that say where Temporal is: `run` and the operator commands (why, state, replay, ...) share them. */
export function addTemporalOptions(cmd: Command, suffix = ''): Command {
  const add = (flags: string, description: string, o: { def?: string; env?: string }) => addOption(cmd, flags, description + suffix, o);
  add('--temporal-address <host:port>', 'Temporal frontend', { def: RUN_DEFAULTS.temporalAddress, env: 'TEMPORAL_ADDRESS' });
  add('--temporal-namespace <ns>', 'Temporal namespace', { def: RUN_DEFAULTS.temporalNamespace, env: 'TEMPORAL_NAMESPACE' });
  add('--temporal-tls [bool]', 'connect to Temporal over TLS (implied by any --temporal-tls-* flag)', { env: 'TEMPORAL_TLS' });
  add('--temporal-tls-cert <path>', 'PEM client certificate; needs --temporal-tls-key', { env: 'TEMPORAL_TLS_CERT' });
  add('--temporal-tls-key <path>', 'PEM client key; needs --temporal-tls-cert', { env: 'TEMPORAL_TLS_KEY' });
  add('--temporal-tls-ca <path>', 'PEM CA bundle for the server certificate', { env: 'TEMPORAL_TLS_CA' });
  add('--temporal-tls-server-name <name>', 'server name to verify instead of the address host', { env: 'TEMPORAL_TLS_SERVER_NAME' });
  return cmd;
}

/** Adds every `run` flag to cmd; after parsing, pass cmd to resolveRunOptions. */
export function addRunOptions(cmd: Command): Command {
  const add = (flags: string, description: string, o: { def?: string | number | boolean; env?: string } = {}) => addOption(cmd, flags, description, o);
  const ours = ' [temporal-kcm]';
  const testTuning = ' [temporal-kcm; meant for tests]';
  const ignored = ' [accepted for compatibility, ignored: Temporal replaces leader election]';

  add('--kubeconfig <path>', 'kubeconfig with the API server location and credentials', { env: 'KUBECONFIG' });
  add('--master <url>', 'API server URL; overrides the server in the kubeconfig');

  cmd.addOption(
    new Option(
      '--controllers <list>',
      "controllers to run, comma-separated: '*' = every on-by-default controller, 'foo' enables foo, " +
        "'-foo' disables foo; the first entry naming a controller wins. May be repeated." +
        `\nAll controllers: ${ALL_CONTROLLERS.join(', ')}` +
        `\nDisabled-by-default controllers: ${DISABLED_BY_DEFAULT.join(', ')}`,
    )
      .default([...RUN_DEFAULTS.controllers], RUN_DEFAULTS.controllers.join(','))
      // repeated flags add up; the first one replaces the default (commander hands the default in as `previous`)
      .argParser((value: string, previous: string[]) => [...(cmd.getOptionValueSource('controllers') === 'cli' ? previous : []), ...splitList(value)]),
  );

  cmd.addOption(
    new Option(
      '--feature-gates <list>',
      "comma-separated Name=true|false pairs (optionally kube:Name=...), as upstream's; may be repeated. Every gate of kube-controller-manager " +
        'v1.35 is accepted, an unknown one or a locked gate set away from its default is an error; see docs/COMPATIBILITY.md for the gates that change what this build does',
    ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
  );
  add('--kube-api-qps <float>', 'requests per second to the API server, per controller client', { def: RUN_DEFAULTS.kubeApiQps });
  add('--kube-api-burst <int>', 'burst of requests to the API server', { def: RUN_DEFAULTS.kubeApiBurst });
  const controllerSpecs = controllerFlags();
  const addControllerFlag = (f: FlagSpec) => {
    const arg = f.kind === 'int' ? '<int>' : f.kind === 'float' ? '<float>' : f.kind === 'duration' ? '<duration>' : f.kind === 'bool' ? '[bool]' : f.kind === 'string' ? '<string>' : '<path>';
    add(`--${f.name} ${arg}`, f.help, f.kind === 'file' ? {} : { def: f.def });
  };
  // the concurrency flags, then each controller's other flags further down, as upstream groups them
  for (const f of controllerSpecs.filter(isConcurrencyFlag)) addControllerFlag(f);

  add('--secure-port <int>', 'port on which to serve /healthz, /readyz and /metrics over HTTPS with authentication and authorization; 0 disables serving', {
    def: RUN_DEFAULTS.securePort,
  });
  add('--bind-address <ip>', 'IP address to listen on for --secure-port (0.0.0.0 or :: for every interface)', { def: RUN_DEFAULTS.bindAddress });
  add('--cert-dir <dir>', 'directory for the self-signed serving certificate (kube-controller-manager.crt and .key, made when neither is there and reused after); empty: made in memory at every start. Ignored with --tls-cert-file', {
    def: '',
  });
  add('--tls-cert-file <path>', 'PEM serving certificate for the secure port (any CA certificates after it); needs --tls-private-key-file. Without it a self-signed certificate is used (see --cert-dir)');
  add('--tls-private-key-file <path>', 'PEM private key of --tls-cert-file');
  add('--tls-min-version <version>', `lowest TLS version the secure port accepts: ${Object.keys(TLS_VERSIONS).join(', ')}; default TLS 1.2`);
  add('--authentication-kubeconfig <path>', "kubeconfig of the cluster that checks bearer tokens (tokenreviews.authentication.k8s.io); optional: without it, and outside a cluster, every request is anonymous and no client CA is looked up");
  add('--authentication-token-webhook-cache-ttl <duration>', 'how long a TokenReview answer is kept', { def: RUN_DEFAULTS.authenticationTokenWebhookCacheTtl });
  add('--authentication-skip-lookup [bool]', 'do not read the client CA from configmap kube-system/extension-apiserver-authentication', { def: false });
  add('--authentication-tolerate-lookup-failure [bool]', 'start even when that configmap cannot be read (client certificates then authenticate no one)', { def: false });
  add('--client-ca-file <path>', 'PEM CA bundle: a client certificate it signed authenticates its CommonName (groups: its Organizations); replaces the looked-up client CA');
  add('--authorization-kubeconfig <path>', "kubeconfig of the cluster that authorizes requests (subjectaccessreviews.authorization.k8s.io); optional: without it, and outside a cluster, every path not always allowed is forbidden");
  cmd.addOption(
    new Option('--authorization-always-allow-paths <list>', 'comma-separated HTTP paths served without authorization (a trailing * matches a prefix); may be repeated')
      .default([...RUN_DEFAULTS.authorizationAlwaysAllowPaths], RUN_DEFAULTS.authorizationAlwaysAllowPaths.join(','))
      .argParser((value: string, previous: string[]) => [...(cmd.getOptionValueSource('authorizationAlwaysAllowPaths') === 'cli' ? previous : []), ...splitList(value)]),
  );
  add('--authorization-webhook-cache-authorized-ttl <duration>', "how long an 'authorized' SubjectAccessReview answer is kept", {
    def: RUN_DEFAULTS.authorizationWebhookCacheAuthorizedTtl,
  });
  add('--authorization-webhook-cache-unauthorized-ttl <duration>', "how long an 'unauthorized' SubjectAccessReview answer is kept", {
    def: RUN_DEFAULTS.authorizationWebhookCacheUnauthorizedTtl,
  });

  add('--leader-elect [bool]', 'leader election' + ignored, { def: RUN_DEFAULTS.leaderElect });
  add('--leader-elect-lease-duration <duration>', 'lease duration' + ignored);
  add('--leader-elect-renew-deadline <duration>', 'renew deadline' + ignored);
  add('--leader-elect-retry-period <duration>', 'retry period' + ignored);
  add('--leader-elect-resource-lock <kind>', 'lock object kind' + ignored);
  add('--leader-elect-resource-name <name>', 'lock object name' + ignored);
  add('--leader-elect-resource-namespace <ns>', 'lock object namespace' + ignored);

  add(
    '--use-service-account-credentials [bool]',
    "each controller uses its own ServiceAccount in kube-system (token from the TokenRequest API), bounded by RBAC's system:controller:* roles",
    { def: RUN_DEFAULTS.useServiceAccountCredentials },
  );
  add('--root-ca-file <path>', 'PEM CA bundle published in kube-root-ca.crt ConfigMaps and in service account token Secrets');
  for (const f of controllerSpecs.filter((f) => !isConcurrencyFlag(f))) addControllerFlag(f);

  add(
    '--min-resync-period <duration>',
    "an idle object's workflow re-observes it this often (upstream resyncs informers at a random point between this and twice this); 0 disables resync",
    { def: RUN_DEFAULTS.minResyncPeriod },
  );

  addTemporalOptions(cmd, ours);
  add('--task-queue <name>', 'task queue every replica polls' + ours, { def: RUN_DEFAULTS.taskQueue, env: 'TEMPORAL_KCM_TASK_QUEUE' });

  add('--resync-backoff-base <duration>', 'delay before the first retry of a failed reconcile; doubles per retry' + testTuning, {
    def: RUN_DEFAULTS.resyncBackoffBase,
  });
  add('--resync-backoff-max <duration>', 'longest retry delay' + testTuning, { def: RUN_DEFAULTS.resyncBackoffMax });
  add('--max-history-events <int>', 'workflow history length that triggers continue-as-new' + testTuning, { def: RUN_DEFAULTS.maxHistoryEvents });
  add('--max-idle-history-events <int>', "history length past which a converged object's workflow continues as new at its next quiet resync or once settled (--settled-continue-as-new), so that a cold wake replays few events; a new run starts at 14 to 16" + testTuning, { def: RUN_DEFAULTS.maxIdleHistoryEvents });
  add('--settled-continue-as-new <duration>', "how long a converged object's workflow, its history past --max-idle-history-events, stays quiet before it continues as new, so that a cold wake before its next resync replays few events; 0: only at the resync" + testTuning, { def: RUN_DEFAULTS.settledContinueAsNew });
  add('--max-signal-hold <duration>', "longest a controller's signal gate holds watch events its workflow would do nothing about (the echo of its own status write, a pod change no decision reads); they go out with the object's next event that needs work; after this long the gate is asked again. 0 sends every event" + ours, { def: RUN_DEFAULTS.maxSignalHold });
  add('--max-run-age <duration>', "longest an object's workflow run lives: past it the run continues as new at its first turn with nothing pending, so that a new build takes over no run older than this (the patch policy in docs/ARCHITECTURE.md counts on it)" + ours, { def: RUN_DEFAULTS.maxRunAge });
  add(
    '--max-cached-workflows <int>',
    "the most object workflows each controller keeps in memory between their reconciles; a run not kept is rebuilt by replaying its history at its next reconcile. 0 keeps none; unset, 100 for a controller whose runs wake on watch events, and the Temporal SDK's default (from the heap limit, about 2,300 with Node's default heap) for one whose every run wakes on a period (horizontal-pod-autoscaler, persistentvolume-binder, resourcequota, cronjob)" + ours,
  );
  add('--informer-heartbeat-timeout <duration>', 'a watch activity silent this long is presumed dead and restarted' + testTuning, {
    def: RUN_DEFAULTS.informerHeartbeatTimeout,
  });
  add('--discovery-period <duration>', "how often the garbage collector and resource quota re-read API discovery for resources added or removed (upstream's is 30 s, fixed)" + ours, {
    def: RUN_DEFAULTS.discoveryPeriod,
  });

  add(
    '--shadow [bool]',
    `write nothing: every write a controller decides on is sent as a server-side dry run (dryRun=All), which the API server checks and answers as the write but does not store, and is logged and counted as a proposal; the replica runs on --task-queue plus "${SHADOW_TASK_QUEUE_SUFFIX}" and its object workflows' IDs start with "${SHADOW_WORKFLOW_ID_PREFIX}" and a hash of the task queue, so it never meets a live deployment's workflows, nor another shadow deployment's` + ours,
    { def: RUN_DEFAULTS.shadow },
  );
  add(
    '--shadow-window <duration>',
    'with --shadow: a proposal and the same write by the cluster\'s own manager this close in time agree; further apart (up to six windows) they are late, and a write unmatched after six windows is settled as differing, only ours or only theirs' + ours,
    { def: RUN_DEFAULTS.shadowWindow },
  );
  add(
    '--workflow-stack-traces [bool]',
    "answer Temporal's stack-trace query (the Web UI's Stack Trace tab); the SDK then records a stack trace for every promise a workflow makes, about a quarter of the workflow thread's CPU" + ours,
    { def: RUN_DEFAULTS.workflowStackTraces },
  );
  add(
    '--heap-snapshot-dir <path>',
    'on SIGUSR2, write V8 heap snapshots of the main thread and of each workflow thread into this directory (a diagnostic: a snapshot holds whatever the process holds, its credentials included)' + ours,
  );
  add('--log-level <level>', `one of ${LOG_LEVELS.join(', ')}, any case; wins over -v`, { def: RUN_DEFAULTS.logLevel, env: 'LOG_LEVEL' });
  addAcceptedUpstreamFlags(cmd);
  return cmd;
}

// ---------------------------------------------------------------------------------------------
// validation

interface Given {
  value: unknown;
  /** How to name the value's origin in an error message. */
  origin: string;
}


/**
 * Reads parsed values with their sources. Collects every problem instead of stopping at the first,
 * so one run reports them all.
 */
/** Leaves room under Temporal's 255-character workflow IDs for the longest fixed part built on the queue name. */
const MAX_TASK_QUEUE_LENGTH = 128;

class Reader {
  readonly problems: string[] = [];

  constructor(private readonly cmd: Command) {}

  /** The value the user gave, on the command line or through the option's variable; undefined when defaulted. */
  given(flag: string): Given | undefined {
    const key = camel(flag);
    const value: unknown = this.cmd.getOptionValue(key);
    switch (this.cmd.getOptionValueSource(key)) {
      case 'cli':
        return { value, origin: `--${flag}` };
      case 'env':
        // an exported-but-empty variable means "unset", as most CLIs treat it
        if (value === '') return undefined;
        return { value, origin: `--${flag} (from env ${this.cmd.options.find((o) => o.long === `--${flag}`)?.envVar})` };
      default:
        return undefined;
    }
  }

  /** The name to blame for a value that parsed but is still wrong. */
  origin(flag: string): string {
    return this.given(flag)?.origin ?? `--${flag}`;
  }

  /** Given on the command line or through the environment. */
  isGiven(flag: string): boolean {
    return this.given(flag) !== undefined;
  }

  /** Given on the command line (not through the environment, not defaulted). */
  isSet(flag: string): boolean {
    return this.cmd.getOptionValueSource(camel(flag)) === 'cli';
  }

  fail(origin: string, value: unknown, why: string): undefined {
    this.problems.push(`${origin}: ${JSON.stringify(value)} ${why}`);
    return undefined;
  }

  string(flag: string, opts: { def: string }): string;
  string(flag: string, opts?: { def?: undefined }): string | undefined;
  string(flag: string, opts: { def?: string } = {}): string | undefined {
    const g = this.given(flag);
    if (!g) return opts.def;
    if (typeof g.value !== 'string' || g.value.trim() === '') return this.fail(g.origin, g.value, 'must be a non-empty string') ?? opts.def;
    return g.value.trim();
  }

  int(flag: string, opts: { def: number; min: number; max: number }): number {
    const g = this.given(flag);
    if (!g) return opts.def;
    const n = typeof g.value === 'number' ? g.value : typeof g.value === 'string' && /^[+-]?\d+$/.test(g.value.trim()) ? Number(g.value) : NaN;
    if (!Number.isSafeInteger(n)) return this.fail(g.origin, g.value, 'is not an integer') ?? opts.def;
    if (n < opts.min || n > opts.max) return this.fail(g.origin, g.value, `must be from ${opts.min} to ${opts.max}`) ?? opts.def;
    return n;
  }

  float(flag: string, opts: { def: number; min: number }): number {
    const g = this.given(flag);
    if (!g) return opts.def;
    const s = typeof g.value === 'string' ? g.value.trim() : undefined;
    const n = typeof g.value === 'number' ? g.value : s !== undefined && FLOAT.test(s) ? Number(s) : NaN;
    if (!Number.isFinite(n)) return this.fail(g.origin, g.value, 'is not a number') ?? opts.def;
    if (n < opts.min) return this.fail(g.origin, g.value, `must be at least ${opts.min}`) ?? opts.def;
    return n;
  }

  positiveFloat(flag: string, opts: { def: number }): number {
    const g = this.given(flag);
    if (!g) return opts.def;
    const s = typeof g.value === 'string' ? g.value.trim() : undefined;
    const n = typeof g.value === 'number' ? g.value : s !== undefined && FLOAT.test(s) ? Number(s) : NaN;
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

  bool(flag: string, opts: { def: boolean }): boolean {
    const g = this.given(flag);
    if (!g) return opts.def;
    if (typeof g.value === 'boolean') return g.value;
    const b = typeof g.value === 'string' ? parseGoBool(g.value.trim()) : undefined;
    if (b === undefined) return this.fail(g.origin, g.value, 'is not a boolean (true or false)') ?? opts.def;
    return b;
  }

  existingDir(flag: string): string | undefined {
    return this.existing(flag, 'directory');
  }

  existingFile(flag: string): string | undefined {
    return this.existing(flag, 'file');
  }

  private existing(flag: string, kind: 'file' | 'directory'): string | undefined {
    const p = this.string(flag);
    if (p === undefined) return undefined;
    const origin = this.origin(flag);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return this.fail(origin, p, 'does not exist');
    }
    if (kind === 'file' ? !st.isFile() : !st.isDirectory()) return this.fail(origin, p, `is not a ${kind}`);
    return p;
  }
}

function controllerSpecOf(r: Reader): string[] {
  const g = r.given('controllers');
  if (!g) return [...RUN_DEFAULTS.controllers];
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

/** A path flag whose empty value means "none", as upstream reads `--cert-dir=` or `--authentication-kubeconfig=`. */
function optionalPath(r: Reader, flag: string, mustExist = false): string | undefined {
  const g = r.given(flag);
  if (!g || g.value === '') return undefined;
  return mustExist ? r.existingFile(flag) : r.string(flag);
}

/** The secure port's flags (upstream's names and defaults); problems go to r. */
function secureServingOf(r: Reader): SecureServingOptions {
  const tlsCertFile = r.existingFile('tls-cert-file');
  const tlsPrivateKeyFile = r.existingFile('tls-private-key-file');
  const certGiven = r.given('tls-cert-file') !== undefined;
  const keyGiven = r.given('tls-private-key-file') !== undefined;
  if (certGiven !== keyGiven) {
    r.problems.push(certGiven ? '--tls-cert-file needs --tls-private-key-file' : '--tls-private-key-file needs --tls-cert-file');
  }
  const certDir = optionalPath(r, 'cert-dir');
  if (certDir !== undefined && fs.existsSync(certDir) && !fs.statSync(certDir).isDirectory()) r.fail(r.origin('cert-dir'), certDir, 'is not a directory');

  let tlsMinVersion: tls.SecureVersion | undefined;
  const minText = r.string('tls-min-version');
  if (minText !== undefined) {
    tlsMinVersion = TLS_VERSIONS[minText];
    if (!tlsMinVersion) r.fail(r.origin('tls-min-version'), minText, `is not one of ${Object.keys(TLS_VERSIONS).join(', ')}`);
  }

  let alwaysAllow = [...RUN_DEFAULTS.authorizationAlwaysAllowPaths];
  const paths = r.given('authorization-always-allow-paths');
  if (paths) {
    if (Array.isArray(paths.value) && paths.value.every((v): v is string => typeof v === 'string')) alwaysAllow = paths.value.filter((p) => p !== '');
    else r.fail(paths.origin, paths.value, 'must be a comma-separated list');
    try {
      alwaysAllowMatcher(alwaysAllow);
    } catch (e) {
      r.problems.push(`${paths.origin}: ${(e as Error).message}`);
    }
  }

  const ttl = (flag: string, def: string) => r.durationMs(flag, { def, allowZero: true }) ?? 10_000;
  const out: SecureServingOptions = {
    authenticationTokenWebhookCacheTtlMs: ttl('authentication-token-webhook-cache-ttl', RUN_DEFAULTS.authenticationTokenWebhookCacheTtl),
    authenticationSkipLookup: r.bool('authentication-skip-lookup', { def: false }),
    authenticationTolerateLookupFailure: r.bool('authentication-tolerate-lookup-failure', { def: false }),
    authorizationAlwaysAllowPaths: alwaysAllow,
    authorizationWebhookCacheAuthorizedTtlMs: ttl('authorization-webhook-cache-authorized-ttl', RUN_DEFAULTS.authorizationWebhookCacheAuthorizedTtl),
    authorizationWebhookCacheUnauthorizedTtlMs: ttl('authorization-webhook-cache-unauthorized-ttl', RUN_DEFAULTS.authorizationWebhookCacheUnauthorizedTtl),
  };
  const optional: Partial<SecureServingOptions> = {
    certDir,
    tlsCertFile,
    tlsPrivateKeyFile,
    tlsMinVersion,
    authenticationKubeconfig: optionalPath(r, 'authentication-kubeconfig', true),
    clientCaFile: optionalPath(r, 'client-ca-file', true),
    authorizationKubeconfig: optionalPath(r, 'authorization-kubeconfig', true),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) Object.assign(out, { [k]: v });
  return out;
}

/** Where Temporal is and how to reach it. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  /** absent: plain-text gRPC */
  tls?: TemporalTlsOptions;
}

/** The Temporal target of the flags addTemporalOptions adds; problems go to r. */
function temporalTargetOf(r: Reader): TemporalTarget {
  const address = r.string('temporal-address', { def: RUN_DEFAULTS.temporalAddress });
  if (!isHostPort(address)) r.fail(r.origin('temporal-address'), address, 'must be host:port');
  const namespace = r.string('temporal-namespace', { def: RUN_DEFAULTS.temporalNamespace });

  const tlsWanted = r.bool('temporal-tls', { def: false });
  const tlsOffBy = r.given('temporal-tls') !== undefined && !tlsWanted ? r.origin('temporal-tls') : undefined;
  const tls: TemporalTlsOptions = {
    certPath: r.existingFile('temporal-tls-cert'),
    keyPath: r.existingFile('temporal-tls-key'),
    caPath: r.existingFile('temporal-tls-ca'),
    serverName: r.string('temporal-tls-server-name'),
  };
  const certGiven = r.given('temporal-tls-cert') !== undefined;
  const keyGiven = r.given('temporal-tls-key') !== undefined;
  if (certGiven !== keyGiven) {
    r.problems.push(
      certGiven
        ? '--temporal-tls-cert needs --temporal-tls-key (a client certificate is useless without its key)'
        : '--temporal-tls-key needs --temporal-tls-cert (a client key is useless without its certificate)',
    );
  }
  const tlsMaterial = (Object.keys(tls) as (keyof TemporalTlsOptions)[]).filter((k) => tls[k] !== undefined);
  if (tlsOffBy && tlsMaterial.length) {
    r.problems.push(`${tlsOffBy} is false, but TLS certificates or a server name were given`);
  }
  for (const k of Object.keys(tls) as (keyof TemporalTlsOptions)[]) if (tls[k] === undefined) delete tls[k];
  return { address, namespace, ...(tlsWanted || tlsMaterial.length ? { tls } : {}) };
}

/** The Temporal target of an operator command (addTemporalOptions); throws InvalidArgumentError listing every bad value. */
export function resolveTemporalTarget(cmd: Command): TemporalTarget {
  const r = new Reader(cmd);
  const target = temporalTargetOf(r);
  if (r.problems.length) throw new InvalidArgumentError(r.problems.join('\n'));
  return target;
}

/**
 * Turns a parsed `run` command (addRunOptions) into RunOptions. Precedence is flag, then
 * environment variable, then default, as commander applies it. Throws InvalidArgumentError
 * listing every bad value.
 */
export function resolveRunOptions(cmd: Command): RunOptions {
  const r = new Reader(cmd);

  // KUBECONFIG may list several files, some of which need not exist; the kube client sorts that out
  const kubeconfig = r.isSet('kubeconfig') ? r.existingFile('kubeconfig') : r.string('kubeconfig');

  const master = r.string('master');
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

  let gateSettings = new Map<string, boolean>();
  const gatesGiven = r.given('feature-gates');
  if (gatesGiven) {
    const values = Array.isArray(gatesGiven.value) ? gatesGiven.value.filter((v): v is string => typeof v === 'string') : [String(gatesGiven.value)];
    try {
      gateSettings = parseFeatureGates(values);
    } catch (e) {
      if (!(e instanceof FeatureGateError)) throw e;
      r.problems.push(`${gatesGiven.origin}: ${e.message}`);
    }
  }

  const kubeApiQps = r.positiveFloat('kube-api-qps', { def: RUN_DEFAULTS.kubeApiQps });
  const kubeApiBurst = r.int('kube-api-burst', { def: RUN_DEFAULTS.kubeApiBurst, min: 1, max: INT32_MAX });

  const controllerFlagValues: Record<string, number | string | boolean | undefined> = {};
  for (const f of controllerFlags()) {
    if (f.kind === 'int') controllerFlagValues[f.name] = r.int(f.name, { def: f.def, min: f.min, max: f.max });
    else if (f.kind === 'float') controllerFlagValues[f.name] = r.float(f.name, { def: f.def, min: f.min });
    else if (f.kind === 'duration') controllerFlagValues[f.name] = r.durationMs(f.name, { def: f.def, allowZero: f.allowZero }) ?? flagDefault(f);
    else if (f.kind === 'bool') controllerFlagValues[f.name] = r.bool(f.name, { def: f.def });
    else if (f.kind === 'string') controllerFlagValues[f.name] = r.string(f.name, { def: f.def });
    else {
      const path = r.existingFile(f.name);
      if (path !== undefined) controllerFlagValues[f.name] = path;
    }
  }
  // combinations a controller forbids (upstream's option validation, whichever controllers run)
  for (const d of CONTROLLERS) r.problems.push(...(d.validateFlags?.(controllerFlagValues) ?? []));

  const securePort = r.int('secure-port', { def: RUN_DEFAULTS.securePort, min: 0, max: 65535 });
  const bindAddress = r.string('bind-address', { def: RUN_DEFAULTS.bindAddress });
  if (net.isIP(bindAddress) === 0) r.fail(r.origin('bind-address'), bindAddress, 'is not an IP address');
  const secureServing = secureServingOf(r);

  const leaderElect = r.bool('leader-elect', { def: RUN_DEFAULTS.leaderElect });
  // ignored, but a malformed value would stop upstream too, so it is still worth reporting
  for (const f of ['leader-elect-lease-duration', 'leader-elect-renew-deadline', 'leader-elect-retry-period']) {
    r.durationMs(f, { allowZero: false });
  }

  const minResyncPeriodMs = r.durationMs('min-resync-period', { def: RUN_DEFAULTS.minResyncPeriod, allowZero: true }) ?? 0;

  const temporal = temporalTargetOf(r);
  const shadow = r.bool('shadow', { def: RUN_DEFAULTS.shadow });
  const shadowWindowMs = r.durationMs('shadow-window', { def: RUN_DEFAULTS.shadowWindow, allowZero: false }) ?? 10_000;
  const taskQueue = r.string('task-queue', { def: RUN_DEFAULTS.taskQueue }) + (shadow ? SHADOW_TASK_QUEUE_SUFFIX : '');
  // singleton and informer workflow IDs are built on it, and a SQL-persisted Temporal keeps IDs in 255 characters
  if (taskQueue.length > MAX_TASK_QUEUE_LENGTH) r.fail(r.origin('task-queue'), taskQueue, `is longer than ${MAX_TASK_QUEUE_LENGTH} characters`);

  const resyncBackoffBaseMs = r.durationMs('resync-backoff-base', { def: RUN_DEFAULTS.resyncBackoffBase, allowZero: false }) ?? 1000;
  const resyncBackoffMaxMs = r.durationMs('resync-backoff-max', { def: RUN_DEFAULTS.resyncBackoffMax, allowZero: false }) ?? 300_000;
  if (resyncBackoffMaxMs < resyncBackoffBaseMs) {
    r.problems.push(`--resync-backoff-max (${resyncBackoffMaxMs}ms) must not be less than --resync-backoff-base (${resyncBackoffBaseMs}ms)`);
  }
  // a handful of events is what starting and one reconcile cost; below that a run could never progress
  const maxHistoryEvents = r.int('max-history-events', { def: RUN_DEFAULTS.maxHistoryEvents, min: 10, max: TEMPORAL_HISTORY_EVENT_LIMIT });
  const maxIdleHistoryEvents = r.int('max-idle-history-events', { def: RUN_DEFAULTS.maxIdleHistoryEvents, min: 10, max: TEMPORAL_HISTORY_EVENT_LIMIT });
  const settledContinueAsNewMs = r.durationMs('settled-continue-as-new', { def: RUN_DEFAULTS.settledContinueAsNew, allowZero: true }) ?? 900_000;
  const maxSignalHoldMs = r.durationMs('max-signal-hold', { def: RUN_DEFAULTS.maxSignalHold, allowZero: true }) ?? 300_000;
  const maxRunAgeMs = r.durationMs('max-run-age', { def: RUN_DEFAULTS.maxRunAge, allowZero: false }) ?? 7 * 24 * 3600_000;
  const informerHeartbeatTimeoutMs =
    r.durationMs('informer-heartbeat-timeout', { def: RUN_DEFAULTS.informerHeartbeatTimeout, allowZero: false }) ?? 3_000;
  const discoveryPeriodMs = r.durationMs('discovery-period', { def: RUN_DEFAULTS.discoveryPeriod, allowZero: false }) ?? 30_000;

  const useServiceAccountCredentials = r.bool('use-service-account-credentials', { def: RUN_DEFAULTS.useServiceAccountCredentials });
  const workflowStackTraces = r.bool('workflow-stack-traces', { def: RUN_DEFAULTS.workflowStackTraces });
  const heapSnapshotDir = r.existingDir('heap-snapshot-dir');
  const maxCachedWorkflows = r.isGiven('max-cached-workflows') ? r.int('max-cached-workflows', { def: 0, min: 0, max: INT32_MAX }) : undefined;
  // the SDK quietly turns 1 into 2: a run's task needs a slot beside the one it may evict
  if (maxCachedWorkflows === 1) r.fail(r.origin('max-cached-workflows'), '1', 'must be 0 (keep none) or at least 2');
  const rootCaFile = r.existingFile('root-ca-file');

  const upstream = resolveAcceptedUpstreamFlags(r);
  // upstream's switch for the collector (its quota and namespace deletion still run, as upstream's do)
  if (upstream.garbageCollectorOff) enabledControllers.delete('garbage-collector-controller');

  const levelText = r.string('log-level', { def: upstream.logLevelFromVerbosity ?? RUN_DEFAULTS.logLevel }).toLowerCase();
  const logLevel = (LOG_LEVELS as readonly string[]).includes(levelText) ? (levelText as LogLevel) : RUN_DEFAULTS.logLevel;
  if (logLevel !== levelText) r.fail(r.origin('log-level'), levelText, `must be one of ${LOG_LEVELS.join(', ')}`);

  if (r.problems.length) throw new InvalidArgumentError(r.problems.join('\n'));

  return {
    kubeconfig,
    master,
    controllerSpec,
    enabledControllers,
    kubeApiQps,
    kubeApiBurst,
    controllerFlags: { ...controllerFlagValues, ...resolveFeatureGates(gateSettings) },
    featureGates: Object.fromEntries(gateSettings),
    featureGateWarnings: settingWarnings(gateSettings),
    securePort,
    bindAddress,
    secureServing,
    leaderElect,
    leaderElectWarning: leaderElectWarning(r, leaderElect, taskQueue),
    minResyncPeriodMs,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    taskQueue,
    shadow,
    shadowWindowMs,
    ...(temporal.tls ? { temporalTls: temporal.tls } : {}),
    resyncBackoffBaseMs,
    resyncBackoffMaxMs,
    maxHistoryEvents,
    maxIdleHistoryEvents,
    settledContinueAsNewMs,
    maxSignalHoldMs,
    maxRunAgeMs,
    informerHeartbeatTimeoutMs,
    discoveryPeriodMs,
    logLevel,
    useServiceAccountCredentials,
    ...(rootCaFile ? { rootCaFile } : {}),
    workflowStackTraces,
    ...(heapSnapshotDir ? { heapSnapshotDir } : {}),
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
    upstreamFlags: upstream.given,
    logFormat: upstream.textLogs ? 'text' : 'json',
  };
}

/** The TLS files read into memory, shaped like the `tls` option of Temporal's connection options. */
export interface LoadedTemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/**
 * gRPC channel options for every Temporal client connection we open. The SDK means to take answers
 * of up to 128 MiB, but names grpc-js's option without its `grpc.` prefix, so grpc-js keeps its
 * 4 MiB default: a history page over 4 MiB (a run whose signals carry snapshots, a few hundred
 * events) could not be read by `why`, `replay` or the checks that read histories.
 */
/**
 * The Temporal client's gRPC channel. Its reconnect backoff is capped at 5 s: grpc-js's default
 * grows to 120 s, so after a Temporal outage of two minutes the client (the informer's signals,
 * the contact probe) went on failing for up to a minute after the server was back, and every
 * controller with it (chaos `outage`: converged 57.6 s after Temporal returned).
 */
export const TEMPORAL_CHANNEL_ARGS = {
  'grpc.max_receive_message_length': 128 * 1024 * 1024,
  'grpc.initial_reconnect_backoff_ms': 1_000,
  'grpc.max_reconnect_backoff_ms': 5_000,
} as const;

/** Reads the files named in TemporalTlsOptions (kept separate so option parsing stays cheap). */
export function loadTemporalTls(tls: TemporalTlsOptions): LoadedTemporalTls {
  const out: LoadedTemporalTls = {};
  if (tls.serverName) out.serverNameOverride = tls.serverName;
  if (tls.caPath) out.serverRootCACertificate = fs.readFileSync(tls.caPath);
  if (tls.certPath && tls.keyPath) out.clientCertPair = { crt: fs.readFileSync(tls.certPath), key: fs.readFileSync(tls.keyPath) };
  return out;
}
