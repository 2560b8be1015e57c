import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as https from 'node:https';
import { ResolvedKubeconfig, resolveKubeconfig, resolveSimpleKubeconfig, resolveWithLibrary } from '../../activities/kube/kubeconfig';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/** Every directory a test made, removed when the file's tests are done. */
const made: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kcm-kubeconfig-'));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

const b64 = (t: string) => Buffer.from(t).toString('base64');

/** A kubeconfig whose current context has `cluster` and `user` (YAML bodies), beside another context that is not current. */
function kubeconfigWith(cluster: string, user: string, files: Record<string, string> = {}): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const indent = (body: string) => body.split('\n').map((l) => `    ${l}`).join('\n');
  const file = path.join(dir, 'config');
  fs.writeFileSync(file, `apiVersion: v1
kind: Config
current-context: mine
clusters:
- name: other
  cluster: { server: 'https://other:1' }
- name: k
  cluster:
${indent(cluster)}
contexts:
- name: theirs
  context: { cluster: other, user: nobody, namespace: x }
- name: mine
  context: { cluster: k, user: u }
users:
- name: nobody
  user: { token: nope }
- name: u
  user:
${indent(user)}
`);
  return file;
}

const kubeconfigFile = (token: string) => kubeconfigWith(`server: https://10.0.0.1:6443\ncertificate-authority-data: ${b64(CA)}`, `token: ${token}`);

describe('kubeconfig resolved in a throwaway thread', () => {
  test('server, CA and the bearer token, as client-node resolves them', async () => {
    const c = await resolveKubeconfig(kubeconfigFile('abc'));
    expect(c.server).toBe('https://10.0.0.1:6443');
    expect(c.clusterCa).toBe(CA);
    expect(c.ca).toBe(CA);
    expect(c.headers.Authorization).toBe('Bearer abc');
  });

  test('applied to a request: TLS material and headers, the request\'s own headers kept; --master wins over the server', async () => {
    const kc = await ResolvedKubeconfig.load(kubeconfigFile('abc'), 'https://elsewhere:1');
    const opts: https.RequestOptions = { headers: { Accept: 'application/json' } };
    await kc.applyToHTTPSOptions(opts);
    expect(opts.ca).toBe(CA);
    expect(opts.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer abc' });
    expect(kc.getCurrentCluster().server).toBe('https://elsewhere:1');
  });

  test('refresh reads the file again (a rotated token)', async () => {
    const file = kubeconfigFile('old');
    const kc = await ResolvedKubeconfig.load(file);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('token: old', 'token: new'));
    // requests that met the same 401 share one resolution
    const [a, b] = [kc.refresh(), kc.refresh()];
    expect(a).toBe(b);
    await a;
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    expect(opts.headers).toEqual({ Authorization: 'Bearer new' });
  });

  test('a missing file or one without a cluster is a clear error', async () => {
    await expect(resolveKubeconfig('/nonexistent/kubeconfig')).rejects.toThrow(/kubeconfig \/nonexistent\/kubeconfig not found/);
    const dir = tempDir();
    const empty = path.join(dir, 'config');
    fs.writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    await expect(resolveKubeconfig(empty)).rejects.toThrow(/kubeconfig: .*cluster/);
  });
});

test('a list of files, as $KUBECONFIG may hold, is merged as client-node merges it', async () => {
  const extra = path.join(tempDir(), 'config');
  fs.writeFileSync(extra, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers:\n- name: other\n  user: { token: other }\n');
  const c = await resolveKubeconfig([kubeconfigFile('listed'), extra].join(path.delimiter));
  expect(c.headers.Authorization).toBe('Bearer listed');
});

describe('a kubeconfig of the common shape is read without client-node, with the library\'s answer', () => {
  const CERT = '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n';
  const KEY = '-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n';
  const simple: Array<[string, () => string]> = [
    // kubeadm's controller-manager.conf: everything embedded
    ['embedded CA, client certificate and key', () => kubeconfigWith(`server: https://10.0.0.1:6443\ncertificate-authority-data: ${b64(CA)}`,
      `client-certificate-data: ${b64(CERT)}\nclient-key-data: ${b64(KEY)}`)],
    // local up's kubeconfigs: files, here relative to the kubeconfig's directory, and a trailing slash on the server
    ['files relative to the kubeconfig', () => kubeconfigWith('server: https://127.0.0.1:6443/\ncertificate-authority: pki/ca.crt',
      'client-certificate: pki/kcm.crt\nclient-key: pki/kcm.key', { 'pki/ca.crt': CA, 'pki/kcm.crt': CERT, 'pki/kcm.key': KEY })],
    ['a bearer token and no CA', () => kubeconfigWith('server: https://10.0.0.1:6443', 'token: abc.def')],
  ];
  test.each(simple)('%s', async (_what, make) => {
    const file = make();
    const fast = resolveSimpleKubeconfig(file);
    expect(fast).toBeDefined();
    expect(fast).toEqual(await resolveWithLibrary(file));
    expect(await resolveKubeconfig(file)).toEqual(fast);
  });

  test('an absolute file path is read where it is', async () => {
    const elsewhere = path.join(tempDir(), 'ca.crt');
    fs.writeFileSync(elsewhere, CA);
    const file = kubeconfigWith(`server: https://10.0.0.1:6443\ncertificate-authority: ${elsewhere}`, 'token: t');
    expect(resolveSimpleKubeconfig(file)?.ca).toBe(CA);
    expect(resolveSimpleKubeconfig(file)).toEqual(await resolveWithLibrary(file));
  });

  const notSimple: Array<[string, () => string]> = [
    ['an exec plugin', () => kubeconfigWith('server: https://10.0.0.1:6443', 'exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/true }')],
    ['a token file', () => kubeconfigWith('server: https://10.0.0.1:6443', 'token-file: /dev/null')],
    ['impersonation', () => kubeconfigWith('server: https://10.0.0.1:6443', 'token: t\nas: someone')],
    ['TLS verification off', () => kubeconfigWith('server: https://10.0.0.1:6443\ninsecure-skip-tls-verify: true', 'token: t')],
    ['a proxy', () => kubeconfigWith('server: https://10.0.0.1:6443\nproxy-url: http://proxy:3128', 'token: t')],
    ['both data and a file for the CA', () => kubeconfigWith(`server: https://10.0.0.1:6443\ncertificate-authority: ca.crt\ncertificate-authority-data: ${b64(CA)}`, 'token: t', { 'ca.crt': CA })],
    ['a certificate file that is not there', () => kubeconfigWith('server: https://10.0.0.1:6443', 'client-certificate: missing.crt\nclient-key: missing.key')],
  ];
  test.each(notSimple)('left to client-node: %s', (_what, make) => {
    expect(resolveSimpleKubeconfig(make())).toBeUndefined();
  });

  test('what the library refuses is never read here: a context without a cluster, a cluster without a server', async () => {
    const dir = tempDir();
    const noCluster = path.join(dir, 'a');
    fs.writeFileSync(noCluster, 'current-context: c\nclusters: [{ name: k, cluster: { server: "https://x:1" } }]\ncontexts: [{ name: c, context: { cluster: k, user: u } }, { name: d, context: { user: u } }]\nusers: [{ name: u, user: { token: t } }]\n');
    const noServer = path.join(dir, 'b');
    fs.writeFileSync(noServer, 'current-context: c\nclusters: [{ name: k, cluster: { server: "https://x:1" } }, { name: j, cluster: {} }]\ncontexts: [{ name: c, context: { cluster: k, user: u } }]\nusers: [{ name: u, user: { token: t } }]\n');
    for (const file of [noCluster, noServer]) {
      expect(resolveSimpleKubeconfig(file)).toBeUndefined();
      await expect(resolveKubeconfig(file)).rejects.toThrow(/kubeconfig: .*is missing/);
    }
  });
});
