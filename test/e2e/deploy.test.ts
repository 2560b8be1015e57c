import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { probeSecurePort } from '../../starter/local/http-probe';
import { repoRoot } from '../../starter/local/paths';
import { pkiPaths } from '../../starter/local/pki';
import { PortAllocator } from '../../starter/local/ports';
import { readState } from '../../starter/local/stack';
import { AuditEvent, AuditLog } from '../support/audit';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { getIfExists, listPods, testRest } from '../support/kube';
import { kubectl } from '../support/nodes';
import { TEST_DATA_DIR } from '../support/stack';

/*
 * deploy/ against the local stack: first what `kubectl apply -k deploy/` would create, checked by
 * the API server (server-side dry run) and read back from the rendered YAML; then the manager run
 * as the Deployment runs it, in-cluster style: the RBAC of deploy/ applied for real, the
 * temporal-kcm ServiceAccount's token and the cluster CA at the path every pod has them, no
 * --kubeconfig. The files are put there on a tmpfs in a mount namespace of the manager's own
 * (unshare), so nothing is written to this machine's real /var/run.
 */

const rest = testRest(testClusterAccess());
const DEPLOY = path.join(repoRoot, 'deploy');
const SA = 'system:serviceaccount:kube-system:temporal-kcm';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

// ---------------------------------------------------------------------------------------------
// the rendered manifests, typed as far as the assertions read them

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: Meta;
}
interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}
interface Binding extends Obj {
  roleRef: { kind: string; name: string };
  subjects: Subject[];
}
interface ClusterRole extends Obj {
  rules: Array<{ nonResourceURLs?: string[]; verbs: string[] }>;
}
interface Probe {
  httpGet: { path: string; port: string | number; scheme: string };
}
interface Container {
  name: string;
  image: string;
  args: string[];
  env?: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean };
  affinity?: { podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: Array<{ topologyKey: string; labelSelector: { matchLabels: Record<string, string> } }> } };
  containers: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> } }>;
}
interface Deployment extends Obj {
  spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: { metadata: Meta; spec: PodSpec } };
}
interface Pdb extends Obj {
  spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
}
interface Secret extends Obj {
  data: Record<string, string>;
}

async function render(dir: string): Promise<Obj[]> {
  return parseAllDocuments(await kubectl('kustomize', dir)).map((d) => d.toJS() as Obj);
}

function one<T extends Obj>(objs: Obj[], kind: string, name?: string): T {
  const found = objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as T;
}

const flagValue = (args: string[], flag: string): string | undefined => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);

// ---------------------------------------------------------------------------------------------
// the audit log: who made each request (Metadata level: writes, lists and watches, not gets)

const auditLog = new AuditLog();
const audit = () => auditLog.events();

function users(events: AuditEvent[], f: { verb: string; resource: string; subresource?: string; namespace?: string }): Set<string> {
  return new Set(events.filter((e) => e.verb === f.verb && e.objectRef?.resource === f.resource && e.objectRef?.subresource === f.subresource
    && (f.namespace === undefined || e.objectRef?.namespace === f.namespace) && (e.responseStatus?.code ?? 0) < 300).map((e) => e.user.username));
}

// ---------------------------------------------------------------------------------------------

describe('kubectl apply -k deploy/', () => {
  test('the API server accepts every object (server-side dry run), and the static pod as a kube-system Pod', async () => {
    const out = await kubectl('apply', '--dry-run=server', '-k', DEPLOY);
    const applied = out.trim().split('\n');
    // ServiceAccount, Secret, Deployment, PDB, the ClusterRole, 3 ClusterRoleBindings, 1 RoleBinding
    expect(applied).toHaveLength(9);
    for (const line of applied) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);

    // the ServiceAccount admission plugin looks up the pod's account (kube-system/default, which
    // the serviceaccount controller makes on a real cluster)
    if (!(await getIfExists(rest, '/api/v1/namespaces/kube-system/serviceaccounts/default'))) {
      await rest.request('POST', '/api/v1/namespaces/kube-system/serviceaccounts', { body: { metadata: { name: 'default' } } }).catch(() => undefined);
    }
    const pod = await kubectl('apply', '--dry-run=server', '-o', 'json', '-f', path.join(DEPLOY, 'static-pod', 'temporal-kcm.yaml'));
    const accepted = JSON.parse(pod) as { metadata: Meta; spec: { priority?: number; priorityClassName?: string; hostNetwork?: boolean } };
    expect(accepted.metadata.namespace).toBe('kube-system');
    expect(accepted.spec).toMatchObject({ hostNetwork: true, priorityClassName: 'system-node-critical', priority: 2000001000 });
  });

  test('the rendered manifests: 2 replicas spread over nodes, PDB, HTTPS probes on 10257, hardening, the Secret, the bindings', async () => {
    const objs = await render(DEPLOY);
    for (const o of objs) if (!o.kind.startsWith('Cluster')) expect(`${o.kind} ${o.metadata.namespace}`).toBe(`${o.kind} kube-system`);
    expect(objs.filter((o) => o.kind === 'Namespace')).toEqual([]);

    const d = one<Deployment>(objs, 'Deployment', 'temporal-kcm');
    expect(d.spec.replicas).toBe(2);
    const pod = d.spec.template.spec;
    expect(pod.serviceAccountName).toBe(one<Obj>(objs, 'ServiceAccount').metadata.name);
    expect(pod.serviceAccountName).toBe('temporal-kcm');
    expect(pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
      { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: d.spec.selector.matchLabels } },
    ]);
    expect(pod.securityContext?.runAsNonRoot).toBe(true);

    const c = pod.containers[0];
    expect(c.args[0]).toBe('run');
    expect(c.args).toEqual(expect.arrayContaining(['--leader-elect=false', '--use-service-account-credentials', '--secure-port=10257']));
    expect(flagValue(c.args, '--authentication-kubeconfig')).toBe('');
    expect(flagValue(c.args, '--authorization-kubeconfig')).toBe('');
    expect(c.args.some((a) => a.startsWith('--kubeconfig'))).toBe(false);
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(Object.keys(c.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);

    // both probes over HTTPS on the named port, which is the secure port
    expect(c.ports).toEqual([expect.objectContaining({ name: 'https', containerPort: 10257 })]);
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'https', scheme: 'HTTPS' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'https', scheme: 'HTTPS' });

    // Temporal from the generated Secret: variables from its literals, the PEM files from its volume
    const secret = one<Secret>(objs, 'Secret');
    expect(secret.metadata.name).toMatch(/^temporal-kcm-temporal-[a-z0-9]+$/);
    expect(Object.keys(secret.data).sort()).toEqual(['address', 'ca.crt', 'namespace', 'task-queue', 'tls.crt', 'tls.key']);
    const fromSecret = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef]));
    expect(fromSecret).toMatchObject({
      TEMPORAL_ADDRESS: { name: secret.metadata.name, key: 'address' },
      TEMPORAL_NAMESPACE: { name: secret.metadata.name, key: 'namespace' },
      TEMPORAL_KCM_TASK_QUEUE: { name: secret.metadata.name, key: 'task-queue' },
    });
    const tlsVolume = pod.volumes?.find((v) => v.secret?.secretName === secret.metadata.name);
    const mount = c.volumeMounts?.find((m) => m.name === tlsVolume?.name);
    expect(mount).toBeDefined();
    for (const [flag, key] of [['--temporal-tls-ca', 'ca.crt'], ['--temporal-tls-cert', 'tls.crt'], ['--temporal-tls-key', 'tls.key']]) {
      expect(flagValue(c.args, flag)).toBe(`${mount!.mountPath}/${key}`);
      expect(tlsVolume?.secret?.items).toContainEqual({ key, path: key });
    }

    const pdb = one<Pdb>(objs, 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
    expect(d.spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);

    // the bindings: upstream KCM's role, delegated authn/authz, the client CA reader
    const bindings = objs.filter((o): o is Binding => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    const ours = { kind: 'ServiceAccount', name: 'temporal-kcm', namespace: 'kube-system' };
    const roleOf = (b: Binding) => `${b.kind}/${b.metadata.namespace ?? ''} -> ${b.roleRef.kind}/${b.roleRef.name}`;
    expect(bindings.filter((b) => b.subjects.some((s) => s.kind === ours.kind && s.name === ours.name && s.namespace === ours.namespace)).map(roleOf).sort()).toEqual([
      'ClusterRoleBinding/ -> ClusterRole/system:auth-delegator',
      'ClusterRoleBinding/ -> ClusterRole/system:kube-controller-manager',
      'RoleBinding/kube-system -> Role/extension-apiserver-authentication-reader',
    ]);
    // and the example: someone may GET /metrics
    const reader = one<ClusterRole>(objs, 'ClusterRole');
    expect(reader.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    expect(bindings.filter((b) => b.roleRef.name === reader.metadata.name).map((b) => b.kind)).toEqual(['ClusterRoleBinding']);
  });

  test('the plaintext overlay example replaces the Secret and drops only the TLS flags and files', async () => {
    const base = one<Deployment>(await render(DEPLOY), 'Deployment');
    const objs = await render(path.join(DEPLOY, 'examples', 'plaintext-temporal'));
    const d = one<Deployment>(objs, 'Deployment');
    const [b, c] = [base.spec.template.spec.containers[0], d.spec.template.spec.containers[0]];
    expect(c.args).toEqual(b.args.filter((a) => !a.startsWith('--temporal-tls')));
    expect(c.volumeMounts).toEqual(b.volumeMounts?.filter((m) => !m.mountPath.startsWith('/etc/temporal-kcm')));
    expect(d.spec.template.spec.volumes).toEqual(base.spec.template.spec.volumes?.filter((v) => !v.secret));
    expect(Object.keys(one<Secret>(objs, 'Secret').data).sort()).toEqual(['address', 'namespace', 'task-queue']);
  });

  test("README's overlay renders: your image, your Temporal settings and PEM files", async () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const block = /```yaml\n\s*# my-kcm\/kustomization\.yaml\n([\s\S]*?)\n\s*```/.exec(readme)?.[1];
    if (!block) throw new Error('README has no my-kcm/kustomization.yaml block');
    const indent = /^ */.exec(block)![0].length;
    const text = block.split('\n').map((l) => l.slice(indent)).join('\n');
    // the README's layout: the overlay next to a checkout named temporal-kcm
    const top = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-overlay-'));
    const overlay = path.join(top, 'my-kcm');
    try {
      fs.mkdirSync(overlay);
      fs.symlinkSync(repoRoot, path.join(top, 'temporal-kcm'));
      fs.writeFileSync(path.join(overlay, 'kustomization.yaml'), text);
      const generators = (parse(text) as { secretGenerator: Array<{ files?: string[] }> }).secretGenerator;
      const files = generators.flatMap((g) => g.files ?? []).map((f) => f.split('=').pop()!);
      expect(files).toHaveLength(3);
      for (const f of files) fs.writeFileSync(path.join(overlay, f), `pem of ${f}\n`);
      const objs = await render(overlay);
      const secret = one<Secret>(objs, 'Secret');
      expect(Buffer.from(secret.data.address, 'base64').toString()).toBe('temporal.example.com:7233');
      expect(Buffer.from(secret.data['tls.key'], 'base64').toString()).toBe('pem of kcm-client-key.pem\n');
      const d = one<Deployment>(objs, 'Deployment');
      expect(d.spec.template.spec.containers[0].image).toBe('registry.example.com/platform/temporal-kcm:0.1.0');
      expect(d.spec.template.spec.volumes?.find((v) => v.secret)?.secret?.secretName).toBe(secret.metadata.name);
    } finally {
      fs.rmSync(top, { recursive: true, force: true });
    }
  });
});

describe('in-cluster style: the Deployment’s command line as the temporal-kcm ServiceAccount, without a kubeconfig', () => {
  const ports = new PortAllocator();
  let tmp: string;
  let manager: ChildProcess | undefined;
  let logFile: string;
  let ns: string;
  let rbacFile: string;
  let reader: string;

  afterAll(async () => {
    if (manager && manager.exitCode === null && manager.signalCode === null) {
      const exited = new Promise((r) => manager!.once('exit', r));
      manager.kill('SIGTERM');
      await exited;
    }
    if (ns) await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    if (reader) await rest.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${reader}`).catch(() => undefined);
    // what deploy/ applied, so the shared stack is left as it was
    if (rbacFile) await kubectl('delete', '--ignore-not-found', '-f', rbacFile).catch(() => undefined);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('reconciles a Deployment, writing as the controllers’ ServiceAccounts, and serves its secure port with delegated authz', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test mounts a tmpfs in a mount namespace of its own (unshare --mount): it needs root');
    const state = readState(TEST_DATA_DIR);
    if (!state) throw new Error('test stack not up');
    auditLog.mark();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-e2e-'));
    const realTokenBefore = fs.existsSync(path.join(SA_DIR, 'token'));

    // the ServiceAccount and RBAC of deploy/, applied for real (server-side apply); not the
    // Deployment, whose image this machine cannot build
    const objs = await render(DEPLOY);
    const rbac = objs.filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'RoleBinding', 'Role'].includes(o.kind));
    rbacFile = path.join(tmp, 'rbac.json');
    fs.writeFileSync(rbacFile, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rbac }));
    await kubectl('apply', '--server-side', '--field-manager=temporal-kcm-deploy-e2e', '-f', rbacFile);

    // what the kubelet would project into the pod: a TokenRequest token, the cluster CA, the namespace
    const token = (await rest.request<{ status: { token: string } }>('POST', '/api/v1/namespaces/kube-system/serviceaccounts/temporal-kcm/token', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    })).body.status.token;
    const files = path.join(tmp, 'serviceaccount');
    fs.mkdirSync(files, { mode: 0o700 });
    fs.writeFileSync(path.join(files, 'token'), token, { mode: 0o600 });
    fs.copyFileSync(pkiPaths(TEST_DATA_DIR).caCert, path.join(files, 'ca.crt'));
    fs.writeFileSync(path.join(files, 'namespace'), 'kube-system');
    const hidden = path.join(tmp, 'hidden');
    fs.mkdirSync(hidden);
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);

    // the Deployment's arguments, but: this machine's plaintext Temporal (no --temporal-tls-*), a
    // free port on loopback, and only the two controllers this test watches
    const container = one<Deployment>(objs, 'Deployment').spec.template.spec.containers[0];
    const port = await ports.take('in-cluster manager');
    const args = [
      ...container.args.filter((a) => !a.startsWith('--temporal-tls') && !a.startsWith('--secure-port=')),
      `--secure-port=${port}`, '--bind-address=127.0.0.1', '--controllers=replicaset,deployment',
    ];
    const taskQueue = uniqueName('deploy-e2e');
    logFile = path.join(TEST_DATA_DIR, 'logs', `manager-${taskQueue}.log`);
    const out = fs.openSync(logFile, 'a');
    manager = spawn('/usr/bin/unshare', ['--mount', '--propagation', 'private', 'sh', '-c', IN_NAMESPACE, 'in-namespace',
      process.execPath, path.join(repoRoot, 'bin', 'temporal-kcm.js'), ...args], {
      stdio: ['ignore', out, out],
      // what a pod's environment has: the API server's service variables; no KUBECONFIG, and a
      // HOME without ~/.kube/config, so client-node's default loading falls through to in-cluster
      env: {
        PATH: process.env.PATH,
        HOME: home,
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: String(state.ports.apiserver),
        TEMPORAL_ADDRESS: `127.0.0.1:${state.ports.temporal}`,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_KCM_TASK_QUEUE: taskQueue,
        LOG_LEVEL: 'info',
        SA_DIR,
        SA_FILES: files,
        HIDDEN: hidden,
      },
    });
    fs.closeSync(out);
    const log = () => fs.readFileSync(logFile, 'utf8').slice(-3000);
    await eventually('the in-cluster manager ready (/readyz 200)', async () => {
      if (manager!.exitCode !== null) throw new Error(`manager exited with ${manager!.exitCode}:\n${log()}`);
      return (await probeSecurePort(port, '/readyz')).status === 200;
    }, 60_000, 300).catch((e: Error) => { throw new Error(`${e.message}\n${log()}`); });
    // the files exist only in the manager's mount namespace
    expect(fs.existsSync(path.join(SA_DIR, 'token'))).toBe(realTokenBefore);

    // the secure port, delegated to the cluster through the pod's ServiceAccount
    expect((await probeSecurePort(port, '/healthz')).status).toBe(200);
    expect((await probeSecurePort(port, '/metrics')).status).toBe(403);
    // a scraper bound to deploy/'s metrics-reader ClusterRole, as the example binds Prometheus
    ns = await freshNamespace(testClusterAccess(), 'deploy');
    await rest.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'scraper' } } });
    reader = `${ns}-metrics-reader`;
    await rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: {
      metadata: { name: reader },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'temporal-kcm:metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
    } });
    const scraperToken = (await rest.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/scraper/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    })).body.status.token;
    // RBAC's cache of the new binding takes a moment; the manager caches a refusal 10 s
    await eventually('/metrics 200 with the scraper token', async () => (await probeSecurePort(port, '/metrics', { token: scraperToken })).status === 200, 30_000, 1000);

    // a Deployment reconciled by the in-cluster manager
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/web:1' }] } } },
    } });
    await eventually('2 available replicas', async () =>
      (await rest.request<{ status?: { availableReplicas?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body.status?.availableReplicas === 2, 60_000, 500);
    expect(await listPods(rest, ns)).toHaveLength(2);

    // who did it: the manager itself as the temporal-kcm ServiceAccount (the watch, the
    // controllers' tokens, the secure port's reviews), the writes as the controllers' accounts
    const expected: Array<[Parameters<typeof users>[1], string]> = [
      [{ verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: 'kube-system' }, SA],
      [{ verb: 'watch', resource: 'deployments' }, SA],
      [{ verb: 'create', resource: 'tokenreviews' }, SA],
      [{ verb: 'create', resource: 'subjectaccessreviews' }, SA],
      [{ verb: 'create', resource: 'replicasets', namespace: ns }, 'system:serviceaccount:kube-system:deployment-controller'],
      [{ verb: 'update', resource: 'deployments', subresource: 'status', namespace: ns }, 'system:serviceaccount:kube-system:deployment-controller'],
      [{ verb: 'create', resource: 'pods', namespace: ns }, 'system:serviceaccount:kube-system:replicaset-controller'],
    ];
    // the audit log is written a moment after the request
    await eventually('audit log written', async () => { const e = audit(); return expected.every(([f, who]) => users(e, f).has(who)); }, 15_000)
      .catch(() => undefined);
    const events = audit();
    // the manager's own calls: only its ServiceAccount made them (others may also watch or review)
    for (const [f, who] of expected.slice(0, 4)) expect({ ...f, users: [...users(events, f)] }).toEqual({ ...f, users: expect.arrayContaining([who]) });
    // the writes in the test's namespace: only the controllers' ServiceAccounts made them
    for (const [f, who] of expected.slice(4)) expect({ ...f, users: [...users(events, f)] }).toEqual({ ...f, users: [who] });
    // and deploy/'s RBAC covered everything the manager's own identity asked for
    expect(events.filter((e) => e.user.username === SA && e.responseStatus?.code === 403).map((e) => `${e.verb} ${e.objectRef?.resource ?? ''}`)).toEqual([]);
  });
});

/**
 * Runs "$@" with the pod's service-account files at $SA_DIR in this mount namespace only. A tmpfs
 * goes over the deepest directory on the way there that exists (here /run, which /var/run links
 * to; never /), and what that directory held stays reachable through symlinks into a bind mount
 * of it, so e.g. a resolv.conf that links into /run keeps working. `mount -n`: libmount would
 * otherwise record the mounts in the real /run/mount/utab.
 */
const IN_NAMESPACE = `
set -eu
d=$SA_DIR
while [ ! -d "$d" ]; do d=$(dirname "$d"); done
d=$(readlink -f "$d")
[ "$d" != / ] || { echo "refusing to mount a tmpfs over /" >&2; exit 1; }
mount -n --rbind "$d" "$HIDDEN"
mount -n -t tmpfs -o mode=0755,size=1m tmpfs "$d"
for e in "$HIDDEN"/* "$HIDDEN"/.[!.]*; do
  if [ -e "$e" ] || [ -L "$e" ]; then ln -s "$e" "$d/\${e##*/}"; fi
done
mkdir -p "$SA_DIR"
cp "$SA_FILES/token" "$SA_FILES/ca.crt" "$SA_FILES/namespace" "$SA_DIR/"
unset SA_DIR SA_FILES HIDDEN
exec "$@"
`;
