import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { DISABLED_BY_DEFAULT } from '../../starter/controller-names';
import { RunOptions, addRunOptions, addTemporalOptions, loadTemporalTls, resolveRunOptions, resolveTemporalTarget } from '../../starter/run-options';
import { parseGoDuration } from '../../workflows/common/duration';
import { CONTROLLERS, controllerFlags } from '../../workers/registry';
import { flagDefault } from '../../workers/flags';
import { concurrencyOf } from '../../workers/descriptor';
import { parseWithEnv } from '../support/parse-with-env';

function run(args: string[], env: NodeJS.ProcessEnv = {}): RunOptions {
  return resolveRunOptions(parseWithEnv(addRunOptions(new Command('run')), args, env));
}

function problem(args: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    run(args, env);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as Error).message;
  }
  throw new Error(`expected ${args.join(' ')} to be rejected`);
}

let dir: string;
let cert: string;
let key: string;
let ca: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-options-'));
  [cert, key, ca] = ['cert.pem', 'key.pem', 'ca.pem'].map((f) => {
    const p = path.join(dir, f);
    fs.writeFileSync(p, `-----BEGIN ${f}-----\n`);
    return p;
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('--shadow: its own task queue, and writes become proposals', () => {
  expect(run([])).toMatchObject({ shadow: false, taskQueue: 'temporal-kcm' });
  expect(run(['--shadow', '--task-queue', 'prod'])).toMatchObject({ shadow: true, taskQueue: 'prod-shadow' });
  expect(problem(['--shadow', '--task-queue', 'q'.repeat(125)])).toMatch('is longer than 128 characters');
});

describe('parseGoDuration', () => {
  test.each([
    ['0', 0],
    ['30s', 30_000],
    ['5m', 300_000],
    ['12h', 43_200_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['1.1s', 1100],
    ['.5s', 500],
    ['1.s', 1000],
    ['300ms', 300],
    ['1500us', 1.5],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['10ns', 0.00001],
    ['2h45m30.5s', 9_930_500],
    ['+1s', 1000],
    ['-1m', -60_000],
  ])('%s = %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  test.each([
    ['', 'invalid duration'],
    ['1', 'missing unit'],
    ['10', 'missing unit'],
    ['1d', 'unknown unit "d"'],
    ['s', 'invalid duration'],
    ['.s', 'invalid duration'],
    ['1h 30m', 'unknown unit "h "'],
    ['-', 'invalid duration'],
    ['3000000h', 'invalid duration'],
  ])('%j is rejected (%s)', (text, msg) => {
    expect(() => parseGoDuration(text)).toThrow(msg);
  });
});

describe('resolveRunOptions defaults', () => {
  test('no flags gives the kube-controller-manager defaults and ours', () => {
    const o = run([]);
    expect(o).toMatchObject({
      controllerSpec: ['*'],
      kubeApiQps: 20,
      kubeApiBurst: 30,
      controllerFlags: { 'concurrent-replicaset-syncs': 5, 'concurrent-rc-syncs': 5 },
      securePort: 10257,
      bindAddress: '0.0.0.0',
      leaderElect: true,
      minResyncPeriodMs: 12 * 3600_000,
      temporalAddress: '127.0.0.1:7233',
      temporalNamespace: 'default',
      taskQueue: 'temporal-kcm',
      resyncBackoffBaseMs: 1000,
      resyncBackoffMaxMs: 300_000,
      maxHistoryEvents: 1000,
      informerHeartbeatTimeoutMs: 3_000,
      discoveryPeriodMs: 30_000,
      logLevel: 'info',
    });
    expect(o.kubeconfig).toBeUndefined();
    expect(o.master).toBeUndefined();
    expect(o.temporalTls).toBeUndefined();
    expect(o.enabledControllers.has('replicaset-controller')).toBe(true);
    for (const d of DISABLED_BY_DEFAULT) expect(o.enabledControllers.has(d)).toBe(false);
  });

  test('every controller flag resolves to its declared default', () => {
    const o = run([]);
    for (const f of controllerFlags()) expect(o.controllerFlags[f.name]).toBe(flagDefault(f));
  });

  test('every implemented controller declares how many of its objects reconcile at once', () => {
    const o = run([]);
    for (const d of CONTROLLERS) expect(concurrencyOf(d, o.controllerFlags)).toBeGreaterThanOrEqual(1);
  });
});

describe('resolveRunOptions flags', () => {
  test('numbers, durations and addresses are parsed', () => {
    const o = run([
      '--kube-api-qps', '50.5',
      '--kube-api-burst=100',
      '--concurrent-replicaset-syncs', '10',
      '--concurrent-rc-syncs', '2',
      '--secure-port', '0',
      '--bind-address', '::1',
      '--min-resync-period', '30m',
      '--resync-backoff-base', '50ms',
      '--resync-backoff-max', '2s',
      '--max-history-events', '200',
      '--informer-heartbeat-timeout', '1.5s',
      '--discovery-period', '5s',
      '--log-level', 'DEBUG',
      '--master', 'https://10.0.0.1:6443',
    ]);
    expect(o).toMatchObject({
      kubeApiQps: 50.5,
      kubeApiBurst: 100,
      controllerFlags: expect.objectContaining({ 'concurrent-replicaset-syncs': 10, 'concurrent-rc-syncs': 2 }),
      securePort: 0,
      bindAddress: '::1',
      minResyncPeriodMs: 1_800_000,
      resyncBackoffBaseMs: 50,
      resyncBackoffMaxMs: 2000,
      maxHistoryEvents: 200,
      informerHeartbeatTimeoutMs: 1500,
      discoveryPeriodMs: 5000,
      logLevel: 'debug',
      master: 'https://10.0.0.1:6443',
    });
  });

  test('--controllers takes KCM syntax, aliases, and repeats', () => {
    const o = run(['--controllers', 'replicaset,-deployment', '--controllers=replicationcontroller-controller']);
    expect(o.controllerSpec).toEqual(['replicaset', '-deployment', 'replicationcontroller-controller']);
    expect([...o.enabledControllers].sort()).toEqual(['replicaset-controller', 'replicationcontroller-controller']);
    expect(run(['--controllers=*,-replicaset']).enabledControllers.has('replicaset-controller')).toBe(false);
    expect(run(['--controllers=']).enabledControllers.size).toBe(0);
  });

  test('an unknown controller is a usage error with upstream wording', () => {
    expect(problem(['--controllers', '*,bogus'])).toBe('--controllers: "bogus" is not in the list of known controllers');
  });

  test('environment fills in what flags leave out; flags win', () => {
    const env = {
      KUBECONFIG: '/a/config:/b/config',
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_NAMESPACE: 'kcm',
      TEMPORAL_KCM_TASK_QUEUE: 'q1',
      LOG_LEVEL: 'warn',
    };
    expect(run([], env)).toMatchObject({
      kubeconfig: '/a/config:/b/config',
      temporalAddress: 'temporal.example:7233',
      temporalNamespace: 'kcm',
      taskQueue: 'q1',
      logLevel: 'warn',
    });
    expect(run(['--temporal-address', '[::1]:7234', '--task-queue', 'q2', '--log-level', 'error'], env)).toMatchObject({
      temporalAddress: '[::1]:7234',
      taskQueue: 'q2',
      logLevel: 'error',
    });
    // an exported but empty variable counts as unset
    expect(run([], { TEMPORAL_ADDRESS: '' }).temporalAddress).toBe('127.0.0.1:7233');
  });

  test('--kubeconfig must exist; KUBECONFIG (a path list) is passed through', () => {
    const file = path.join(dir, 'kubeconfig');
    fs.writeFileSync(file, 'apiVersion: v1\n');
    expect(run(['--kubeconfig', file], { KUBECONFIG: '/elsewhere' }).kubeconfig).toBe(file);
    expect(problem(['--kubeconfig', path.join(dir, 'missing')])).toMatch(/--kubeconfig: ".*missing" does not exist/);
    expect(problem(['--kubeconfig', dir])).toMatch(/is not a file/);
  });

  test('--heap-snapshot-dir must be an existing directory; unset, no snapshots', () => {
    expect(run([]).heapSnapshotDir).toBeUndefined();
    expect(run(['--heap-snapshot-dir', dir]).heapSnapshotDir).toBe(dir);
    expect(problem(['--heap-snapshot-dir', path.join(dir, 'missing')])).toMatch(/--heap-snapshot-dir: ".*missing" does not exist/);
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    expect(problem(['--heap-snapshot-dir', file])).toMatch(/is not a directory/);
  });

  test('--max-cached-workflows: unset leaves the SDK default; 0 keeps none; 1 is refused', () => {
    expect(run([]).maxCachedWorkflows).toBeUndefined();
    expect(run(['--max-cached-workflows', '0']).maxCachedWorkflows).toBe(0);
    expect(run(['--max-cached-workflows', '300']).maxCachedWorkflows).toBe(300);
    expect(problem(['--max-cached-workflows', '1'])).toMatch(/--max-cached-workflows: "1" must be 0 \(keep none\) or at least 2/);
    expect(problem(['--max-cached-workflows', '-5'])).toMatch(/--max-cached-workflows: "-5" must be from 0 to/);
    expect(problem(['--max-cached-workflows', 'lots'])).toMatch(/"lots" is not an integer/);
  });

  test.each([
    [['--kube-api-qps', 'fast'], '--kube-api-qps: "fast" is not a number'],
    [['--kube-api-qps', '0'], 'must be greater than 0'],
    [['--kube-api-burst', '1.5'], '--kube-api-burst: "1.5" is not an integer'],
    [['--concurrent-replicaset-syncs', '0'], '--concurrent-replicaset-syncs: "0" must be from 1 to'],
    [['--secure-port', '70000'], '--secure-port: "70000" must be from 0 to 65535'],
    [['--bind-address', 'localhost'], '--bind-address: "localhost" is not an IP address'],
    [['--min-resync-period', '12'], '--min-resync-period: "12" is not a duration like 30s, 5m or 1h30m (missing unit'],
    [['--min-resync-period', '-1h'], 'must not be negative'],
    [['--resync-backoff-base', '0'], '--resync-backoff-base: "0" must be greater than 0'],
    [['--resync-backoff-base', '10s', '--resync-backoff-max', '5s'], 'must not be less than --resync-backoff-base'],
    [['--max-history-events', '60000'], '--max-history-events: "60000" must be from 10 to 51200'],
    [['--informer-heartbeat-timeout', '1d'], 'unknown unit "d"'],
    [['--discovery-period', '0'], '--discovery-period: "0" must be greater than 0'],
    [['--log-level', 'verbose'], '--log-level: "verbose" must be one of fatal, error, warn, info, debug, trace, silent'],
    [['--temporal-address', 'localhost'], '--temporal-address: "localhost" must be host:port'],
    [['--temporal-address', 'localhost:0'], 'must be host:port'],
    [['--task-queue', ' '], '--task-queue: " " must be a non-empty string'],
    [['--task-queue', 'q'.repeat(129)], 'is longer than 128 characters'],
    [['--master', '10.0.0.1:6443'], 'must be an http:// or https:// URL'],
    [['--leader-elect', 'maybe'], '--leader-elect: "maybe" is not a boolean'],
    [['--leader-elect-lease-duration', '15'], '--leader-elect-lease-duration: "15" is not a duration'],
    [['--node-eviction-rate', 'fast'], '--node-eviction-rate: "fast" is not a number'],
    [['--unhealthy-zone-threshold', '-0.5'], '--unhealthy-zone-threshold: "-0.5" must be at least 0'],
    [['--node-monitor-grace-period', '40'], '--node-monitor-grace-period: "40" is not a duration'],
  ])('%j is rejected', (args, msg) => {
    expect(problem(args)).toContain(msg);
  });

  test('a bad environment value names the variable', () => {
    expect(problem([], { TEMPORAL_ADDRESS: 'nope' })).toBe('--temporal-address (from env TEMPORAL_ADDRESS): "nope" must be host:port');
    expect(problem([], { LOG_LEVEL: 'loud' })).toContain('(from env LOG_LEVEL)');
  });

  test('all problems are reported together, one per line', () => {
    const lines = problem(['--kube-api-qps', 'x', '--secure-port', '-1', '--controllers', 'nope']).split('\n');
    expect(lines).toHaveLength(3);
  });
});

describe('leader election', () => {
  test('default true: a warning explains that Temporal replaces it', () => {
    const o = run([], { TEMPORAL_KCM_TASK_QUEUE: 'tq' });
    expect(o.leaderElect).toBe(true);
    expect(o.leaderElectWarning).toMatch(/Temporal replaces it/);
    expect(o.leaderElectWarning).toContain('"tq"');
    expect(o.leaderElectWarning).toContain('--leader-elect=false');
  });

  test('--leader-elect=false alone silences the warning', () => {
    for (const args of [['--leader-elect=false'], ['--leader-elect', 'false'], ['--leader-elect=0']]) {
      const o = run(args);
      expect(o.leaderElect).toBe(false);
      expect(o.leaderElectWarning).toBeUndefined();
    }
  });

  test('explicitly set leader-election flags are accepted, ignored, and named in the warning', () => {
    const o = run([
      '--leader-elect=false',
      '--leader-elect-lease-duration', '15s',
      '--leader-elect-renew-deadline', '10s',
      '--leader-elect-retry-period', '2s',
      '--leader-elect-resource-lock', 'leases',
      '--leader-elect-resource-name', 'kube-controller-manager',
      '--leader-elect-resource-namespace', 'kube-system',
    ]);
    expect(o.leaderElectWarning).toContain('ignoring --leader-elect-lease-duration, --leader-elect-renew-deadline');
    expect(o.leaderElectWarning).toContain('--leader-elect-resource-namespace');
    expect(run(['--leader-elect']).leaderElectWarning).toContain('ignoring --leader-elect)');
  });
});

describe('Temporal TLS', () => {
  test('off unless asked for', () => {
    expect(run([]).temporalTls).toBeUndefined();
    expect(run(['--temporal-tls']).temporalTls).toEqual({});
    expect(run([], { TEMPORAL_TLS: 'true' }).temporalTls).toEqual({});
  });

  test('certificate flags imply TLS and are carried as paths', () => {
    const o = run(['--temporal-tls-cert', cert, '--temporal-tls-key', key, '--temporal-tls-ca', ca, '--temporal-tls-server-name', 'temporal.internal']);
    expect(o.temporalTls).toEqual({ certPath: cert, keyPath: key, caPath: ca, serverName: 'temporal.internal' });
    const loaded = loadTemporalTls(o.temporalTls!);
    expect(loaded.serverNameOverride).toBe('temporal.internal');
    expect(loaded.serverRootCACertificate?.toString()).toContain('ca.pem');
    expect(loaded.clientCertPair?.crt.toString()).toContain('cert.pem');
    expect(loaded.clientCertPair?.key.toString()).toContain('key.pem');
  });

  test('environment variables work like the flags', () => {
    expect(run([], { TEMPORAL_TLS_CA: ca, TEMPORAL_TLS_SERVER_NAME: 'x' }).temporalTls).toEqual({ caPath: ca, serverName: 'x' });
  });

  test('cert without key, key without cert, missing files and TEMPORAL_TLS=false with material are errors', () => {
    expect(problem(['--temporal-tls-cert', cert])).toContain('--temporal-tls-cert needs --temporal-tls-key');
    expect(problem([], { TEMPORAL_TLS_KEY: key })).toContain('--temporal-tls-key needs --temporal-tls-cert');
    expect(problem(['--temporal-tls-ca', path.join(dir, 'nope.pem')])).toMatch(/--temporal-tls-ca: ".*nope.pem" does not exist/);
    expect(problem([], { TEMPORAL_TLS_CERT: path.join(dir, 'gone'), TEMPORAL_TLS_KEY: key })).toContain(
      '(from env TEMPORAL_TLS_CERT)',
    );
    expect(problem(['--temporal-tls-ca', ca], { TEMPORAL_TLS: 'false' })).toBe(
      '--temporal-tls (from env TEMPORAL_TLS) is false, but TLS certificates or a server name were given',
    );
    expect(problem(['--temporal-tls=false', '--temporal-tls-server-name', 'x'])).toContain('--temporal-tls is false');
    // the flag alone, with no value, turns TLS on
    expect(run(['--temporal-tls', '--temporal-tls-ca', ca]).temporalTls).toEqual({ caPath: ca });
  });
});

describe('the operator commands\' Temporal flags', () => {
  const target = (args: string[], env: NodeJS.ProcessEnv = {}) => resolveTemporalTarget(parseWithEnv(addTemporalOptions(new Command('why')), args, env));

  test('the same names, variables, defaults and checks as run\'s', () => {
    expect(target([])).toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
    expect(target(['--temporal-namespace', 'kcm'], { TEMPORAL_ADDRESS: 't.example:7233', TEMPORAL_TLS: 'true' })).toEqual({
      address: 't.example:7233',
      namespace: 'kcm',
      tls: {},
    });
    expect(target(['--temporal-tls-ca', ca]).tls).toEqual({ caPath: ca });
    expect(() => target([], { TEMPORAL_ADDRESS: 'nope' })).toThrow('--temporal-address (from env TEMPORAL_ADDRESS): "nope" must be host:port');
    expect(() => target(['--temporal-tls-cert', cert])).toThrow('--temporal-tls-cert needs --temporal-tls-key');
    expect(() => target(['--temporal-tls-ca', path.join(dir, 'gone')])).toThrow('does not exist');
  });
});

describe('addRunOptions', () => {
  test('help lists the KCM flags, every controller and the defaults', () => {
    const help = addRunOptions(new Command('run')).helpInformation();
    for (const flag of ['--kubeconfig', '--master', '--controllers', '--kube-api-qps', '--concurrent-rc-syncs', '--secure-port', '--leader-elect-resource-namespace', '--min-resync-period', '--temporal-tls-server-name', '--max-history-events']) {
      expect(help).toContain(flag);
    }
    expect(help).toContain('Disabled-by-default controllers: bootstrap-signer-controller, selinux-warning-controller, token-cleaner-controller');
    expect(help).toContain('default: 10257');
    expect(help).toContain('env: TEMPORAL_ADDRESS');
    expect(help).toMatch(/--controllers <list>[\s\S]*default: \*/);
  });
});

describe('CSR signing flags', () => {
  test("upstream's combination checks stop `run` (usage, exit 2); valid pairs and the duration resolve", () => {
    expect(problem(['--cluster-signing-kubelet-client-key-file', '/k'])).toBe('"cluster-signing-kube-apiserver-client": cannot specify key without cert');
    expect(problem(['--cluster-signing-cert-file', '/c', '--cluster-signing-key-file', '/k', '--cluster-signing-legacy-unknown-cert-file', '/c',
      '--cluster-signing-legacy-unknown-key-file', '/k'])).toBe('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
    const o = run(['--cluster-signing-cert-file', '/c', '--cluster-signing-key-file', '/k', '--cluster-signing-duration', '1h']);
    expect(o.controllerFlags).toMatchObject({ 'cluster-signing-cert-file': '/c', 'cluster-signing-key-file': '/k', 'cluster-signing-duration': 3600_000 });
    expect(run([]).controllerFlags['cluster-signing-duration']).toBe(8760 * 3600_000);
  });
});

describe('secure port flags', () => {
  test('defaults: a self-signed certificate in memory, no delegation, upstream TTLs and always-allowed paths', () => {
    expect(run([]).secureServing).toEqual({
      authenticationTokenWebhookCacheTtlMs: 10_000,
      authenticationSkipLookup: false,
      authenticationTolerateLookupFailure: false,
      authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
      authorizationWebhookCacheAuthorizedTtlMs: 10_000,
      authorizationWebhookCacheUnauthorizedTtlMs: 10_000,
    });
  });

  test('every flag is read', () => {
    const o = run([
      '--cert-dir', path.join(dir, 'certs'),
      '--tls-cert-file', cert, '--tls-private-key-file', key,
      '--tls-min-version', 'VersionTLS13',
      '--authentication-kubeconfig', ca, '--authorization-kubeconfig', cert,
      '--authentication-token-webhook-cache-ttl', '1m',
      '--authentication-skip-lookup', '--authentication-tolerate-lookup-failure=true',
      '--client-ca-file', ca,
      '--authorization-always-allow-paths', '/healthz,/metrics', '--authorization-always-allow-paths=/debug/*',
      '--authorization-webhook-cache-authorized-ttl', '0', '--authorization-webhook-cache-unauthorized-ttl', '2s',
    ]);
    expect(o.secureServing).toEqual({
      certDir: path.join(dir, 'certs'),
      tlsCertFile: cert,
      tlsPrivateKeyFile: key,
      tlsMinVersion: 'TLSv1.3',
      authenticationKubeconfig: ca,
      authorizationKubeconfig: cert,
      authenticationTokenWebhookCacheTtlMs: 60_000,
      authenticationSkipLookup: true,
      authenticationTolerateLookupFailure: true,
      clientCaFile: ca,
      // repeated, the lists add up, as pflag's string slices
      authorizationAlwaysAllowPaths: ['/healthz', '/metrics', '/debug/*'],
      authorizationWebhookCacheAuthorizedTtlMs: 0,
      authorizationWebhookCacheUnauthorizedTtlMs: 2000,
    });
  });

  test('an empty --cert-dir means in memory, an empty kubeconfig or CA none, and an empty path list always allows nothing', () => {
    const o = run(['--cert-dir=', '--authorization-always-allow-paths=', '--authentication-kubeconfig=', '--authorization-kubeconfig=', '--client-ca-file=']);
    expect(o.secureServing.certDir).toBeUndefined();
    expect(o.secureServing.authenticationKubeconfig).toBeUndefined();
    expect(o.secureServing.authorizationKubeconfig).toBeUndefined();
    expect(o.secureServing.clientCaFile).toBeUndefined();
    expect(o.secureServing.authorizationAlwaysAllowPaths).toEqual([]);
  });

  test.each([
    [['--tls-cert-file', 'cert.pem'], '--tls-cert-file needs --tls-private-key-file'],
    [['--tls-private-key-file', 'key.pem'], '--tls-private-key-file needs --tls-cert-file'],
    [['--tls-cert-file', '/nope.crt', '--tls-private-key-file', 'key.pem'], '--tls-cert-file: "/nope.crt" does not exist'],
    [['--cert-dir', 'cert.pem'], 'is not a directory'],
    [['--tls-min-version', 'TLS1.2'], '--tls-min-version: "TLS1.2" is not one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13'],
    [['--authentication-kubeconfig', '/nope'], '--authentication-kubeconfig: "/nope" does not exist'],
    [['--authorization-kubeconfig', '/nope'], '--authorization-kubeconfig: "/nope" does not exist'],
    [['--client-ca-file', '/nope'], '--client-ca-file: "/nope" does not exist'],
    [['--authentication-token-webhook-cache-ttl', '10'], '--authentication-token-webhook-cache-ttl: "10" is not a duration'],
    [['--authorization-webhook-cache-authorized-ttl', '-1s'], 'must not be negative'],
    [['--authorization-webhook-cache-unauthorized-ttl', 'soon'], 'is not a duration'],
    [['--authentication-skip-lookup=maybe'], '--authentication-skip-lookup: "maybe" is not a boolean'],
    [['--authorization-always-allow-paths', '/a*b'], '--authorization-always-allow-paths: only trailing * allowed in "a*b"'],
  ])('%j is rejected', (args, msg) => {
    // relative names are the files made in beforeAll
    const resolved = args.map((a) => (a === 'cert.pem' ? cert : a === 'key.pem' ? key : a));
    expect(problem(resolved)).toContain(msg);
  });

  test('--help names every secure port flag', () => {
    const help = addRunOptions(new Command('run')).helpInformation();
    for (const f of ['--cert-dir', '--tls-cert-file', '--tls-private-key-file', '--tls-min-version', '--authentication-kubeconfig', '--authentication-token-webhook-cache-ttl',
      '--authentication-skip-lookup', '--authentication-tolerate-lookup-failure', '--client-ca-file', '--authorization-kubeconfig', '--authorization-always-allow-paths',
      '--authorization-webhook-cache-authorized-ttl', '--authorization-webhook-cache-unauthorized-ttl']) expect(help).toContain(f);
    expect(help).toContain('(default: /healthz,/readyz,/livez)');
  });
});
