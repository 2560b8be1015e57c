import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { addRunOptions, resolveRunOptions, type RunOptions } from '../../starter/run-options';
import { normalizeFlagName, normalizeRunArgs } from '../../starter/upstream-flag-options';
import { ACCEPTED_UPSTREAM_FLAGS } from '../../starter/upstream-flag-policy';
import { UPSTREAM_FLAGS } from '../../starter/upstream-flags';
import { klogLine, klogTextDestination } from '../../workers/klog-text';
import { createLogger } from '../../workers/logger';
import { parseWithEnv } from '../support/parse-with-env';

const runLongs = () => new Set(addRunOptions(new Command('run')).options.map((o) => o.long));

function resolve(args: string[]): RunOptions {
  return resolveRunOptions(parseWithEnv(addRunOptions(new Command('run').exitOverride()), normalizeRunArgs(args), {}));
}

function problems(args: string[]): string {
  try {
    resolve(args);
  } catch (e) {
    if (e instanceof InvalidArgumentError) return e.message;
    throw e;
  }
  return '';
}

describe("upstream's flags", () => {
  test('the generated table holds upstream v1.35 as its --help lists it', () => {
    expect(UPSTREAM_FLAGS.length).toBe(146);
    const names = UPSTREAM_FLAGS.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of ['cluster-name', 'requestheader-client-ca-file', 'allocate-node-cidrs', 'v', 'vmodule', 'profiling', 'concurrent_rc_syncs']) expect(names).toContain(n);
  });

  test('run accepts every one of them (--help is commander\'s own)', () => {
    const longs = runLongs();
    const missing = UPSTREAM_FLAGS.map((f) => normalizeFlagName(f.name)).filter((n) => n !== 'help' && !longs.has(`--${n}`));
    expect(missing).toEqual([]);
  });

  test('the policy names only upstream flags that run has no option of its own for', () => {
    const upstream = new Set(UPSTREAM_FLAGS.map((f) => f.name));
    const own = new Set(addRunOptions(new Command('run')).options.filter((o) => !o.description.includes('[upstream flag')).map((o) => o.long));
    for (const name of Object.keys(ACCEPTED_UPSTREAM_FLAGS)) {
      expect([name, upstream.has(name), own.has(`--${normalizeFlagName(name)}`)]).toEqual([name, true, false]);
    }
  });

  test("pflag's spellings: underscores in names, -v=N, a bool given bare", () => {
    expect(normalizeRunArgs(['--concurrent_rc_syncs=3', '-v=4', '--kube_api_qps', '5', '--', '--a_b'])).toEqual(['--concurrent-rc-syncs=3', '-v', '4', '--kube-api-qps', '5', '--', '--a_b']);
    const o = resolve(['--concurrent_rc_syncs=3', '--profiling']);
    expect(o.controllerFlags['concurrent-rc-syncs']).toBe(3);
    expect(o.upstreamFlags).toEqual([expect.objectContaining({ flag: '--profiling', value: 'true', kind: 'not yet' })]);
  });

  test('-v sets the log level unless --log-level is given', () => {
    expect(resolve([]).logLevel).toBe('info');
    expect(resolve(['-v', '2']).logLevel).toBe('info');
    expect(resolve(['-v=4']).logLevel).toBe('debug');
    expect(resolve(['--v=9']).logLevel).toBe('trace');
    expect(resolve(['--v=9', '--log-level', 'warn']).logLevel).toBe('warn');
  });

  test('--enable-garbage-collector=false leaves the collector out', () => {
    expect(resolve([]).enabledControllers.has('garbage-collector-controller')).toBe(true);
    expect(resolve(['--enable-garbage-collector=false']).enabledControllers.has('garbage-collector-controller')).toBe(false);
    expect(resolve(['--enable-garbage-collector=true']).enabledControllers.has('garbage-collector-controller')).toBe(true);
  });

  test('a value not of its upstream type is a usage error, every one named', () => {
    const text = problems(['--node-cidr-mask-size=big', '--route-reconciliation-period=soon', '--allocate-node-cidrs=maybe', '-v', 'x', '--vmodule=gc', '--logging-format=xml']);
    expect(text).toContain('--node-cidr-mask-size: "big" is not an integer');
    expect(text).toContain('--route-reconciliation-period: "soon" is not a duration');
    expect(text).toContain('--allocate-node-cidrs: "maybe" is not a boolean');
    expect(text).toContain('--v: "x" is not a verbosity level');
    expect(text).toContain('--vmodule: "gc" is not a list of pattern=N');
    expect(text).toContain('--logging-format: "xml" must be json or text');
  });

  test('--emulated-version names 1.35 only', () => {
    expect(problems(['--emulated-version=1.35'])).toBe('');
    expect(problems(['--emulated-version=kube=1.35'])).toBe('');
    expect(problems(['--emulated-version=1.33'])).toContain('another version than 1.35');
    expect(problems(['--emulated-version=foo=1.35'])).toContain('names component "foo"');
  });

  test('list flags may be repeated and comma-joined', () => {
    const o = resolve(['--requestheader-allowed-names=front-proxy-client', '--requestheader-allowed-names=aggregator', '--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384']);
    expect(o.upstreamFlags.map((f) => [f.flag, f.value])).toEqual([
      ['--tls-cipher-suites', 'TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384'],
      ['--requestheader-allowed-names', 'front-proxy-client,aggregator'],
    ]);
  });
});

describe("kubeadm 1.35's command line", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeadm-args-'));
    for (const f of ['controller-manager.conf', 'pki/ca.crt', 'pki/ca.key', 'pki/front-proxy-ca.crt', 'pki/sa.key']) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), '');
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('is accepted unchanged (paths aside), with what each upstream-only flag did said at start', () => {
    const fixture = fs.readFileSync(path.join(__dirname, '../fixtures/kubeadm-1.35-kube-controller-manager.args'), 'utf8');
    const args = fixture.trim().split('\n').map((a) => a.replaceAll('/etc/kubernetes', dir));
    const o = resolve(args);
    expect(o.enabledControllers.has('bootstrap-signer-controller')).toBe(true);
    expect(o.enabledControllers.has('token-cleaner-controller')).toBe(true);
    expect(o.useServiceAccountCredentials).toBe(true);
    expect(o.upstreamFlags.map((f) => `${f.flag} ${f.kind}`)).toEqual([
      '--allocate-node-cidrs not yet',
      '--cluster-cidr not yet',
      '--cluster-name no effect',
      '--requestheader-client-ca-file not yet',
      '--service-cluster-ip-range not yet',
    ]);
  });
});

describe('--logging-format=text', () => {
  test('is read, json by default', () => {
    expect(resolve([]).logFormat).toBe('json');
    expect(resolve(['--logging-format=text']).logFormat).toBe('text');
    expect(resolve(['--logging-format', 'json']).logFormat).toBe('json');
  });

  test("writes klog's line shape: severity, date, time, pid, the controller, the quoted message, key=value", () => {
    const lines: string[] = [];
    const logger = createLogger('info', klogTextDestination({ write: (s: string) => lines.push(s) }));
    logger.child({ controller: 'replicaset', key: 'default/web' }).warn({ replicas: 3, ready: true, pods: ['a'] }, 'scaled "up"');
    logger.info('plain');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^W\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ replicaset\] "scaled \\"up\\"" controller="replicaset" key="default\/web" replicas=3 ready=true pods=\["a"\]\n$/);
    expect(lines[1]).toMatch(/^I\d{4} [\d:.]+ +\d+ temporal-kcm\] "plain"\n$/);
  });

  test('a line that is not JSON passes through', () => {
    const lines: string[] = [];
    klogTextDestination({ write: (s: string) => lines.push(s) }).write('not json\n');
    expect(lines).toEqual(['not json\n']);
    expect(klogLine({ level: 'error', time: '2026-11-29T14:04:56.270Z', pid: 7, msg: 'x', component: 'secure-port' })).toMatch(/^E1129 \d\d:04:56\.270000       7 secure-port\] "x" component="secure-port"$/);
  });
});
