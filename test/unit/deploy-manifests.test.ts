import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../starter/local/paths';
import { SERVICE_ACCOUNT_PRIVATE_KEY_FILE } from '../../activities/serviceaccount-token/controller';
import { RunOptions, addRunOptions, resolveRunOptions } from '../../starter/run-options';
import { flagValue } from '../../workers/flags';
import { parseWithEnv } from '../support/parse-with-env';

/*
 * The command lines deploy/ writes, read by this build's own flag parser: an unknown flag or a
 * variable the manager does not read would only show in a cluster, as a pod in CrashLoopBackOff
 * or a setting silently ignored. test/e2e/deploy.test.ts checks the rendered manifests against a
 * real API server and runs the Deployment's command line in-cluster style.
 */

interface EnvVar {
  name: string;
  value?: string;
}
interface Container {
  name: string;
  args?: string[];
  env?: EnvVar[];
}
interface PodSpec {
  containers: Container[];
}
interface Manifest {
  kind: string;
  spec: PodSpec & { template?: { spec: PodSpec } };
}

function manifest(file: string): Manifest {
  const docs = parseAllDocuments(fs.readFileSync(path.join(repoRoot, 'deploy', file), 'utf8'));
  if (!Array.isArray(docs) || docs.length !== 1) throw new Error(`${file}: expected one document`);
  return docs[0].toJS() as Manifest;
}

function containerOf(m: Manifest): Container {
  const spec = m.kind === 'Pod' ? m.spec : m.spec.template!.spec;
  return spec.containers[0];
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-manifests-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Every absolute path in the arguments becomes a file of the same name under the test's own
 * directory, since the parser checks that named files exist (the node's files are not here).
 */
function localized(args: string[]): string[] {
  return args.map((a) => {
    const m = /^(--[\w-]+=)(\/.+)$/.exec(a);
    if (!m) return a;
    const local = path.join(dir, m[2]);
    fs.mkdirSync(path.dirname(local), { recursive: true });
    fs.writeFileSync(local, '');
    return m[1] + local;
  });
}

/** The container's command line as `run` resolves it, with exactly `env` as the variables the CLI reads. */
function resolve(c: Container, env: Record<string, string>): RunOptions {
  const [command, ...args] = c.args ?? [];
  expect(command).toBe('run');
  return resolveRunOptions(parseWithEnv(addRunOptions(new Command('run')), localized(args), env));
}

const cliVariables = () => new Set(addRunOptions(new Command('run')).options.map((o) => o.envVar).filter((v): v is string => v !== undefined));

describe('deploy/base/deployment.yaml', () => {
  const c = containerOf(manifest('base/deployment.yaml'));

  test('its variables are ones `run` reads', () => {
    const names = (c.env ?? []).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_KCM_TASK_QUEUE']));
    const known = cliVariables();
    expect(names.filter((n) => !known.has(n))).toEqual([]);
  });

  test('its arguments parse: in-cluster API and delegation, mTLS to Temporal, no leader election', () => {
    const o = resolve(c, { TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'kcm', TEMPORAL_KCM_TASK_QUEUE: 'kcm' });
    expect(o.kubeconfig).toBeUndefined();
    expect(o.secureServing.authenticationKubeconfig).toBeUndefined();
    expect(o.secureServing.authorizationKubeconfig).toBeUndefined();
    expect(o.securePort).toBe(10257);
    expect(o.leaderElect).toBe(false);
    expect(o.useServiceAccountCredentials).toBe(true);
    expect(o.temporalAddress).toBe('temporal.example:7233');
    expect(o.taskQueue).toBe('kcm');
    expect(Object.keys(o.temporalTls ?? {}).sort()).toEqual(['caPath', 'certPath', 'keyPath']);
  });
});

describe('deploy/static-pod/temporal-kcm.yaml', () => {
  const c = containerOf(manifest('static-pod/temporal-kcm.yaml'));

  test("its arguments parse: kubeadm's files for the API, delegation, signing and the token controller", () => {
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? '']));
    const known = cliVariables();
    expect(Object.keys(env).filter((n) => !known.has(n))).toEqual([]);
    const o = resolve(c, env);
    expect(o.kubeconfig).toBe(path.join(dir, '/etc/kubernetes/controller-manager.conf'));
    expect(o.secureServing.authenticationKubeconfig).toBe(o.kubeconfig);
    expect(o.secureServing.authorizationKubeconfig).toBe(o.kubeconfig);
    expect(o.secureServing.clientCaFile).toBe(path.join(dir, '/etc/kubernetes/pki/ca.crt'));
    expect(o.bindAddress).toBe('127.0.0.1');
    expect(o.securePort).toBe(10257);
    expect(o.useServiceAccountCredentials).toBe(true);
    expect(flagValue(o.controllerFlags, SERVICE_ACCOUNT_PRIVATE_KEY_FILE)).toBe(path.join(dir, '/etc/kubernetes/pki/sa.key'));
    expect(o.rootCaFile).toBe(path.join(dir, '/etc/kubernetes/pki/ca.crt'));
    // kubeadm's --controllers: every default one plus the two bootstrap-token controllers
    expect([...o.enabledControllers]).toEqual(expect.arrayContaining(['bootstrap-signer-controller', 'token-cleaner-controller', 'replicaset-controller']));
  });
});
