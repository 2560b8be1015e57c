import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as https from 'node:https';
import { ResolvedKubeconfig, resolveKubeconfig } from '../../activities/kube/kubeconfig';

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

function kubeconfigFile(token: string, extra = ''): string {
  const dir = tempDir();
  const file = path.join(dir, 'config');
  fs.writeFileSync(file, `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ${Buffer.from(CA).toString('base64')}
${extra}contexts:
- name: c
  context: { cluster: k, user: u }
users:
- name: u
  user: { token: ${token} }
`);
  return file;
}

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
