import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { probeSecurePort } from '../../starter/local/http-probe';
import { PortAllocator } from '../../starter/local/ports';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { cleanNamespace, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The secure port of upstream kube-controller-manager v1.35.4 and of ours, started with the same
 * flags on the same stack, asked the same questions: tokens of a ServiceAccount RBAC lets read
 * /metrics, of one it does not, and of one since deleted, a garbage token and none; the answers
 * (status and body) must be the same. Then the certificate each serves: self-signed, written to
 * --cert-dir and served again after a restart. Last, both without the delegation kubeconfigs.
 */
const rest = testRest(testClusterAccess());
const admin = path.join(TEST_DATA_DIR, 'admin.kubeconfig');
const CONTROLLERS = 'certificatesigningrequest-cleaner-controller';
const ports = new PortAllocator();
const upstream = new UpstreamKcm('secure-port');
let ours: ManagerProcess | undefined;
let ns: string;
let tmp: string;
const tokens: Record<'allowed' | 'denied' | 'deleted', string> = { allowed: '', denied: '', deleted: '' };

async function tokenOf(sa: string): Promise<string> {
  await rest.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: sa } } });
  const r = await rest.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return r.body.status.token;
}

/** Upstream on a port of its own with `args` after the harness's; resolves once /healthz answers. */
async function startUpstream(args: string[]): Promise<number> {
  const port = await ports.take('upstream secure port');
  // the CSR cleaner waits for no cache, so upstream's log never says one is synced
  await upstream.start(CONTROLLERS, ['--bind-address=127.0.0.1', `--secure-port=${port}`, ...args], { noCacheWait: true });
  await eventually('upstream /healthz', async () => (await probeSecurePort(port, '/healthz')).status === 200, 60_000, 300);
  return port;
}

async function startOurs(args: string[]): Promise<number> {
  ours = await startManagerProcess(uniqueName('secure-port'), args, { controllers: CONTROLLERS, openMetrics: false });
  return ours.port;
}

async function stopBoth(): Promise<void> {
  await upstream.stop();
  await ours?.kill();
  ours = undefined;
}

/** The certificates a port serves, leaf first. */
function servedChain(port: number): Promise<X509Certificate[]> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const chain: X509Certificate[] = [];
      let c: tls.DetailedPeerCertificate | undefined = s.getPeerCertificate(true);
      while (c?.raw && !chain.some((x) => x.raw.equals(c!.raw))) {
        chain.push(new X509Certificate(c.raw));
        c = c.issuerCertificate;
      }
      s.end();
      resolve(chain);
    });
    s.on('error', reject);
  });
}

/** What a caller sees of one request: the status and, for a Status answer, its body; a /metrics page is reduced to whether it is one. */
async function ask(port: number, p: string, token?: string): Promise<{ status: number; body: unknown }> {
  const r = await probeSecurePort(port, p, token !== undefined ? { token } : {});
  if (r.status === 200 && p === '/metrics') return { status: 200, body: /^# (HELP|TYPE) /m.test(r.body) ? 'prometheus text' : r.body.slice(0, 200) };
  try {
    return { status: r.status, body: JSON.parse(r.body) as unknown };
  } catch {
    return { status: r.status, body: r.body };
  }
}

/** The questions, each asked of both managers. */
const QUESTIONS: Array<[string, string, keyof typeof tokens | 'garbage' | undefined]> = [
  ['/metrics with the allowed token', '/metrics', 'allowed'],
  ['/metrics with the denied token', '/metrics', 'denied'],
  ["/metrics with a deleted ServiceAccount's token", '/metrics', 'deleted'],
  ['/metrics with a garbage token', '/metrics', 'garbage'],
  ['/metrics without a token', '/metrics', undefined],
  ['/healthz without a token', '/healthz', undefined],
  ['/healthz with a garbage token', '/healthz', 'garbage'],
  ['an unknown path with the allowed token', '/nope', 'allowed'],
];

async function answers(port: number): Promise<Record<string, { status: number; body: unknown }>> {
  const out: Record<string, { status: number; body: unknown }> = {};
  for (const [name, p, who] of QUESTIONS) out[name] = await ask(port, p, who === undefined ? undefined : who === 'garbage' ? 'garbage' : tokens[who]);
  return out;
}

/** The served chain reduced to what either manager makes the same way (names, issuer links, lifetime); times and keys differ. */
function certShape(chain: X509Certificate[]): unknown {
  const [leaf, ca] = chain;
  return {
    length: chain.length,
    leaf: leaf.subject.replace(/@\d+$/, '@<unix>'),
    ca: ca?.subject.replace(/@\d+$/, '@<unix>'),
    leafIssuedByCa: ca ? leaf.checkIssued(ca) && leaf.verify(ca.publicKey) : false,
    caSelfSigned: ca ? ca.checkIssued(ca) && ca.verify(ca.publicKey) : false,
    san: leaf.subjectAltName,
    days: Math.round((Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 86_400_000),
  };
}

beforeAll(async () => {
  ns = await freshNamespace(testClusterAccess(), 'secport');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'secure-port-'));
  tokens.allowed = await tokenOf('metrics-reader');
  tokens.denied = await tokenOf('no-rights');
  tokens.deleted = await tokenOf('gone');
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/gone`);
  await rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    body: { metadata: { name: `${ns}-metrics` }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
  });
  await rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      metadata: { name: `${ns}-metrics` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-metrics` },
      subjects: [{ kind: 'ServiceAccount', name: 'metrics-reader', namespace: ns }],
    },
  });
}, 60_000);

afterEach(() => stopBoth(), 60_000);

afterAll(async () => {
  await stopBoth();
  for (const kind of ['clusterrolebindings', 'clusterroles']) await rest.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${ns}-metrics`).catch(() => undefined);
  await cleanNamespace(rest, ns);
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

test('with the delegation kubeconfigs: both answer every caller alike, and serve a self-signed certificate kept in --cert-dir', async () => {
  const args = (who: string) => [`--authentication-kubeconfig=${admin}`, `--authorization-kubeconfig=${admin}`, `--cert-dir=${path.join(tmp, who)}`];
  const [upPort, ourPort] = await Promise.all([startUpstream(args('upstream')), startOurs(args('ours'))]);

  const theirs = await answers(upPort);
  // what upstream answers, pinned: the allowed token reads, RBAC's refusal is 403, a token the
  // cluster does not accept is 401 (even on /healthz: authentication comes before the always-allowed
  // paths), no token at all is the anonymous user, whom RBAC refuses /metrics
  expect(Object.fromEntries(Object.entries(theirs).map(([k, v]) => [k, v.status]))).toEqual({
    '/metrics with the allowed token': 200,
    '/metrics with the denied token': 403,
    "/metrics with a deleted ServiceAccount's token": 401,
    '/metrics with a garbage token': 401,
    '/metrics without a token': 403,
    '/healthz without a token': 200,
    '/healthz with a garbage token': 401,
    'an unknown path with the allowed token': 403,
  });
  expect(await answers(ourPort)).toEqual(theirs);

  const [upChain, ourChain] = await Promise.all([servedChain(upPort), servedChain(ourPort)]);
  expect(certShape(ourChain)).toEqual(certShape(upChain));
  expect(certShape(ourChain)).toMatchObject({ length: 2, leaf: 'CN=localhost@<unix>', ca: 'CN=localhost-ca@<unix>', leafIssuedByCa: true, caSelfSigned: true });

  // written to --cert-dir under upstream's names, and served again after a restart
  const files = (who: string) => ['crt', 'key'].map((x) => path.join(tmp, who, `kube-controller-manager.${x}`));
  for (const who of ['upstream', 'ours']) {
    const [crt, key] = files(who);
    expect(fs.statSync(crt).mode & 0o777).toBe(0o644);
    expect(fs.statSync(key).mode & 0o777).toBe(0o600);
  }
  const fileLeaf = (who: string) => new X509Certificate(fs.readFileSync(files(who)[0]));
  expect(upChain[0].fingerprint256).toBe(fileLeaf('upstream').fingerprint256);
  expect(ourChain[0].fingerprint256).toBe(fileLeaf('ours').fingerprint256);
  await stopBoth();
  const [upAgain, ourAgain] = await Promise.all([startUpstream(args('upstream')), startOurs(args('ours'))]);
  expect((await servedChain(upAgain))[0].fingerprint256).toBe(upChain[0].fingerprint256);
  expect((await servedChain(ourAgain))[0].fingerprint256).toBe(ourChain[0].fingerprint256);
}, 240_000);

test('without them (and not in a cluster): every caller is anonymous, a certificate is made in memory', async () => {
  // the harness gives upstream both kubeconfigs; an empty value takes them back, as it does for ours
  const none = ['--authentication-kubeconfig=', '--authorization-kubeconfig='];
  const [upPort, ourPort] = await Promise.all([startUpstream(none), startOurs(none)]);
  const theirs = await answers(upPort);
  // no TokenReview: a token is ignored, not rejected; no SubjectAccessReview: only /healthz passes
  expect(Object.values(theirs).map((a) => a.status)).toEqual([403, 403, 403, 403, 403, 200, 200, 403]);
  expect(await answers(ourPort)).toEqual(theirs);
  expect(certShape(await servedChain(ourPort))).toEqual(certShape(await servedChain(upPort)));
}, 240_000);
