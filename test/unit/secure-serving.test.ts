import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPublicKey, webcrypto, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as tls from 'node:tls';
import { ApiError } from '../../activities/kube/rest';
import { HealthServer, SecureServing, startHealthServer } from '../../starter/health-server';
import {
  ANONYMOUS,
  AccessAttributes,
  AccessReviewAnswer,
  DEFAULT_ALWAYS_ALLOW_PATHS,
  TokenReviewAnswer,
  TtlCache,
  alwaysAllowMatcher,
  bearerToken,
  createAuthenticator,
  createAuthorizer,
} from '../../starter/secure-serving/delegated-auth';
import { accessReviewSpec, inClusterStatus, tokenReviewAnswer, withBackoff } from '../../starter/secure-serving/reviews';
import { certDirPair, existingPair, loadServingCert, makeSelfSigned, selfSignedNames } from '../../starter/secure-serving/serving-cert';
import { lookupOutcome } from '../../starter/secure-serving/setup';
import { createLogger } from '../../workers/logger';
import { createMetrics } from '../../workers/metrics';

/** PEM blocks of a bundle, parsed */
function certsOf(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b));
}

describe('self-signed serving certificate', () => {
  test('names: localhost and 127.0.0.1, plus localhost again on every interface or the bind address otherwise', () => {
    expect(selfSignedNames('0.0.0.0')).toEqual({ dns: ['localhost', 'localhost'], ips: ['127.0.0.1'] });
    expect(selfSignedNames('::')).toEqual({ dns: ['localhost', 'localhost'], ips: ['127.0.0.1'] });
    expect(selfSignedNames('127.0.0.1')).toEqual({ dns: ['localhost'], ips: ['127.0.0.1', '127.0.0.1'] });
    expect(selfSignedNames('10.1.2.3')).toEqual({ dns: ['localhost'], ips: ['127.0.0.1', '10.1.2.3'] });
  });

  test("upstream's shape: a throwaway CA signing a serving certificate, the file holding both, a PKCS#1 key", async () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const { cert, key } = await makeSelfSigned(selfSignedNames('10.1.2.3'), now);
    const [leaf, ca] = certsOf(cert);
    expect(ca.subject).toBe(`CN=localhost-ca@${now.getTime() / 1000}`);
    expect(ca.issuer).toBe(ca.subject);
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(leaf.subject).toBe(`CN=localhost@${now.getTime() / 1000}`);
    expect(leaf.issuer).toBe(ca.subject);
    expect(leaf.ca).toBe(false);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:10.1.2.3');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    // an hour back for clock skew, then a year
    expect(new Date(leaf.validFrom).getTime()).toBe(now.getTime() - 3600_000);
    expect(new Date(leaf.validTo).getTime() - new Date(leaf.validFrom).getTime()).toBe(365 * 24 * 3600_000);
    expect(key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(createPublicKey(key).export({ format: 'pem', type: 'spki' })).toBe(leaf.publicKey.export({ format: 'pem', type: 'spki' }));
    expect(leaf.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    // the CA's key identifier links the two, as Go links them
    const parsedLeaf = new x509.X509Certificate(leaf.raw);
    const parsedCa = new x509.X509Certificate(ca.raw);
    const aki = parsedLeaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
    expect(aki).toBeDefined();
    expect(aki).toBe(parsedCa.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);
  });

  describe('choice and reuse', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serving-cert-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    test('--cert-dir: made and written on the first start (kube-controller-manager.crt 0644, .key 0600), reused after', async () => {
      const certDir = path.join(dir, 'certs');
      const first = await loadServingCert({ certDir, bindAddress: '0.0.0.0' });
      const { certFile, keyFile } = certDirPair(certDir);
      expect([certFile, keyFile].map((f) => path.basename(f))).toEqual(['kube-controller-manager.crt', 'kube-controller-manager.key']);
      expect(first.source).toEqual({ kind: 'cert-dir', certFile, keyFile, generated: true });
      expect(fs.statSync(certFile).mode & 0o777).toBe(0o644);
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(certFile, 'utf8')).toBe(first.cert);
      const second = await loadServingCert({ certDir, bindAddress: '0.0.0.0' });
      expect(second).toEqual({ cert: first.cert, key: first.key, source: { kind: 'cert-dir', certFile, keyFile, generated: false } });
    });

    test('half a pair in --cert-dir stops the start rather than being overwritten', async () => {
      const { certFile, keyFile } = certDirPair(dir);
      fs.writeFileSync(keyFile, 'key');
      await expect(loadServingCert({ certDir: dir, bindAddress: '0.0.0.0' })).rejects.toThrow(`cannot read ${certFile}: a certificate and key must be supplied as a pair`);
      expect(() => existingPair('a.crt', 'a.key', (f) => f === 'a.crt')).toThrow('cannot read a.key');
      expect(existingPair('a.crt', 'a.key', () => false)).toBe(false);
    });

    test('--tls-cert-file wins over --cert-dir; neither is made in memory and writes nothing', async () => {
      const certFile = path.join(dir, 'given.crt');
      const keyFile = path.join(dir, 'given.key');
      fs.writeFileSync(certFile, 'CERT');
      fs.writeFileSync(keyFile, 'KEY');
      expect(await loadServingCert({ certFile, keyFile, certDir: path.join(dir, 'unused'), bindAddress: '0.0.0.0' })).toEqual({
        cert: 'CERT', key: 'KEY', source: { kind: 'files', certFile, keyFile, generated: false },
      });
      expect(fs.existsSync(path.join(dir, 'unused'))).toBe(false);
      const mem = await loadServingCert({ bindAddress: '127.0.0.1' });
      expect(mem.source).toEqual({ kind: 'memory' });
      expect(certsOf(mem.cert)).toHaveLength(2);
    });
  });
});

/** A review function that answers from a table and counts its calls. */
function fakeTokenReview(answers: Record<string, TokenReviewAnswer | Error>) {
  const calls: string[] = [];
  const fn = async (token: string): Promise<TokenReviewAnswer> => {
    calls.push(token);
    const a = answers[token] ?? { authenticated: false };
    if (a instanceof Error) throw a;
    return a;
  };
  return { fn, calls };
}

describe('delegated authentication', () => {
  const alice: TokenReviewAnswer = { authenticated: true, user: { name: 'system:serviceaccount:ns:alice', uid: 'u1', groups: ['system:serviceaccounts'] } };

  test('bearer tokens are read as upstream reads the header', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('  bearer abc  ')).toBe('abc');
    expect(bearerToken('Bearer a b')).toBe('a');
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Basic Zm9vOmJhcg==')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  test('with nothing to authenticate with, everyone is anonymous, a token included', async () => {
    const authn = createAuthenticator({ clientCertificates: false, cacheTtlMs: 10_000 });
    expect(await authn({ authorization: 'Bearer garbage' })).toEqual({ ok: true, user: ANONYMOUS, via: 'anonymous' });
  });

  test('through TokenReview: accepted names the user (plus system:authenticated), rejected is 401, none is anonymous', async () => {
    const review = fakeTokenReview({ good: alice, bad: { authenticated: false }, expired: { authenticated: false, error: 'token expired' } });
    const authn = createAuthenticator({ clientCertificates: false, tokenReview: review.fn, cacheTtlMs: 10_000 });
    expect(await authn({ authorization: 'Bearer good' })).toEqual({
      ok: true, via: 'token', user: { name: 'system:serviceaccount:ns:alice', uid: 'u1', groups: ['system:serviceaccounts', 'system:authenticated'] },
    });
    expect(await authn({ authorization: 'Bearer bad' })).toEqual({ ok: false, error: 'invalid bearer token' });
    expect(await authn({ authorization: 'Bearer expired' })).toEqual({ ok: false, error: 'token expired' });
    expect(await authn({})).toEqual({ ok: true, user: ANONYMOUS, via: 'anonymous' });
    expect(await authn({ authorization: 'Basic x' })).toMatchObject({ ok: true, via: 'anonymous' });
  });

  test('answers are cached for the TTL, accepted and rejected alike; answers with an error and failed calls are not', async () => {
    let now = 0;
    const review = fakeTokenReview({ good: alice, bad: { authenticated: false }, expired: { authenticated: false, error: 'x' }, down: new ApiError(0, '', 'connect ECONNREFUSED') });
    const authn = createAuthenticator({ clientCertificates: false, tokenReview: review.fn, cacheTtlMs: 10_000, now: () => now });
    for (const t of ['good', 'bad', 'expired', 'down']) await authn({ authorization: `Bearer ${t}` });
    now = 9_999;
    for (const t of ['good', 'bad', 'expired', 'down']) await authn({ authorization: `Bearer ${t}` });
    expect(review.calls).toEqual(['good', 'bad', 'expired', 'down', 'expired', 'down']);
    now = 10_000;
    expect(await authn({ authorization: 'Bearer good' })).toMatchObject({ ok: true });
    expect(review.calls.filter((c) => c === 'good')).toHaveLength(2);
    expect(await authn({ authorization: 'Bearer down' })).toEqual({ ok: false, error: 'token review failed: connect ECONNREFUSED' });
  });

  test('concurrent requests with one token make one review', async () => {
    const review = fakeTokenReview({ good: alice });
    const authn = createAuthenticator({ clientCertificates: false, tokenReview: review.fn, cacheTtlMs: 10_000 });
    await Promise.all([1, 2, 3].map(() => authn({ authorization: 'Bearer good' })));
    expect(review.calls).toEqual(['good']);
  });

  test('a verified client certificate names the user by CN and groups by O, before any token; one that does not verify fails unless a token succeeds', async () => {
    const review = fakeTokenReview({ good: alice });
    const authn = createAuthenticator({ clientCertificates: true, tokenReview: review.fn, cacheTtlMs: 10_000 });
    const verified = { verified: true, commonName: 'admin', organizations: ['system:masters'] };
    const unverified = { verified: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'mallory', organizations: ['system:masters'] };
    expect(await authn({ peerCertificate: verified, authorization: 'Bearer garbage' })).toEqual({
      ok: true, via: 'client-certificate', user: { name: 'admin', groups: ['system:masters', 'system:authenticated'] },
    });
    expect(review.calls).toEqual([]);
    expect(await authn({ peerCertificate: unverified })).toEqual({ ok: false, error: 'client certificate: UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    expect(await authn({ peerCertificate: unverified, authorization: 'Bearer good' })).toMatchObject({ ok: true, via: 'token' });
  });

  test('the cache stays bounded under a flood of distinct tokens', async () => {
    const cache = new TtlCache<number>(() => 0, 100);
    for (let i = 0; i < 1000; i++) await cache.get(String(i), async () => i, () => 10_000);
    expect(cache.size).toBeLessThanOrEqual(100);
  });
});

describe('delegated authorization', () => {
  const user = { name: 'system:serviceaccount:ns:bob', groups: ['system:serviceaccounts', 'system:authenticated'] };
  const attrs = (p: string, verb = 'get', u = user): AccessAttributes => ({ user: u, verb, path: p });

  function fakeAccessReview(answer: (a: AccessAttributes) => AccessReviewAnswer | Error) {
    const calls: AccessAttributes[] = [];
    return {
      calls,
      fn: async (a: AccessAttributes) => {
        calls.push(a);
        const r = answer(a);
        if (r instanceof Error) throw r;
        return r;
      },
    };
  }

  test('always-allowed paths: exact, or a prefix with a trailing *; the leading slash is optional', () => {
    const m = alwaysAllowMatcher(['/healthz', 'readyz', '/debug/*', '/']);
    expect(['/healthz', '/readyz', '/debug/pprof', '/debug/', '/'].map(m)).toEqual([true, true, true, true, true]);
    expect(['/healthz/ping', '/metrics', '/debug'].map(m)).toEqual([false, false, false]);
    expect(() => alwaysAllowMatcher(['/a*b'])).toThrow('only trailing * allowed in "a*b"');
    expect(alwaysAllowMatcher([])('/healthz')).toBe(false);
  });

  test('with no cluster to ask only the always-allowed paths and system:masters pass, with upstream\'s message', async () => {
    const authz = createAuthorizer({ alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS, allowCacheTtlMs: 10_000, denyCacheTtlMs: 10_000 });
    expect(await authz(attrs('/healthz'))).toEqual({ allowed: true });
    expect(await authz(attrs('/metrics'))).toEqual({ allowed: false, reason: 'User "system:serviceaccount:ns:bob" cannot get path "/metrics"' });
    expect(await authz(attrs('/metrics', 'get', { name: 'admin', groups: ['system:masters'] }))).toEqual({ allowed: true });
  });

  test('SubjectAccessReview decides the rest; answers are cached by their own TTLs, failures not at all', async () => {
    let now = 0;
    let fail = false;
    const review = fakeAccessReview((a) => (fail ? new Error('timeout') : a.path === '/metrics' && a.verb === 'get' ? { allowed: true } : { allowed: false, reason: 'no rule' }));
    const authz = createAuthorizer({ alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS, accessReview: review.fn, allowCacheTtlMs: 5_000, denyCacheTtlMs: 1_000, now: () => now });
    expect(await authz(attrs('/healthz'))).toEqual({ allowed: true });
    expect(review.calls).toHaveLength(0);
    expect(await authz(attrs('/metrics'))).toEqual({ allowed: true });
    expect(await authz(attrs('/metrics', 'head'))).toEqual({ allowed: false, reason: 'User "system:serviceaccount:ns:bob" cannot head path "/metrics": no rule' });
    now = 999;
    await authz(attrs('/metrics'));
    await authz(attrs('/metrics', 'head'));
    expect(review.calls).toHaveLength(2);
    now = 1_000;
    await authz(attrs('/metrics'));
    await authz(attrs('/metrics', 'head'));
    expect(review.calls.map((c) => c.verb)).toEqual(['get', 'head', 'head']);
    now = 5_000;
    fail = true;
    expect(await authz(attrs('/metrics'))).toEqual({ allowed: false, error: 'subject access review failed: timeout' });
    fail = false;
    expect(await authz(attrs('/metrics'))).toEqual({ allowed: true });
    expect(review.calls).toHaveLength(5);
  });
});

describe('reviews over the API', () => {
  test('TokenReview status to an answer', () => {
    expect(tokenReviewAnswer({ authenticated: true, user: { username: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] } } })).toEqual({
      authenticated: true, user: { name: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] } },
    });
    expect(tokenReviewAnswer({ authenticated: false, error: 'bad' })).toEqual({ authenticated: false, error: 'bad' });
    expect(tokenReviewAnswer(undefined)).toEqual({ authenticated: false });
  });

  test('SubjectAccessReview spec of a non-resource request', () => {
    expect(accessReviewSpec({ user: { name: 'u', uid: 'id', groups: ['g'] }, verb: 'get', path: '/metrics' })).toEqual({
      user: 'u', uid: 'id', groups: ['g'], nonResourceAttributes: { path: '/metrics', verb: 'get' },
    });
  });

  test("retries what is worth retrying on upstream's webhook backoff, five attempts at most", async () => {
    const sleeps: number[] = [];
    const sleep = async (ms: number) => { sleeps.push(ms); };
    let n = 0;
    await expect(withBackoff(async () => { n++; throw new ApiError(503, 'ServiceUnavailable', 'down'); }, undefined, sleep, () => 0)).rejects.toThrow('down');
    expect(n).toBe(5);
    expect(sleeps).toEqual([500, 750, 1125, 1687.5]);
    n = 0;
    await expect(withBackoff(async () => { n++; throw new ApiError(403, 'Forbidden', 'no'); }, undefined, sleep)).rejects.toThrow('no');
    expect(n).toBe(1);
    n = 0;
    expect(await withBackoff(async () => { if (++n < 3) throw new Error('ECONNRESET'); return 'ok'; }, undefined, sleep)).toBe('ok');
  });

  test('in a cluster: the service variables, then the token file', () => {
    expect(inClusterStatus({})).toEqual({ kind: 'no' });
    expect(inClusterStatus({ KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toEqual({ kind: 'no' });
    expect(inClusterStatus({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, () => false)).toMatchObject({ kind: 'broken' });
    expect(inClusterStatus({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, () => true)).toEqual({ kind: 'yes' });
  });

  test('a failed client CA lookup stops the start unless tolerated', () => {
    expect(lookupOutcome({ error: 'forbidden' }, false)).toEqual({ kind: 'fatal', error: 'forbidden' });
    expect(lookupOutcome({ error: 'forbidden' }, true)).toEqual({ kind: 'tolerate', error: 'forbidden' });
    expect(lookupOutcome({ clientCa: 'PEM' }, false)).toEqual({ kind: 'use', clientCa: 'PEM' });
    expect(lookupOutcome({}, false)).toEqual({ kind: 'use' });
  });
});

/** A CA and a client certificate it signed, for the TLS test. */
async function clientPki(cn: string, o: string): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const caKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=test-client-ca-${cn}`, keys: caKeys, signingAlgorithm: alg, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3600_000),
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${cn}, O=${o}`, issuer: ca.subject, publicKey: keys.publicKey, signingKey: caKeys.privateKey, signingAlgorithm: alg,
    notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3600_000),
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64').replace(/(.{64})/g, '$1\n');
  return { caPem: ca.toString('pem'), certPem: cert.toString('pem'), keyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8}\n-----END PRIVATE KEY-----\n` };
}

describe('the secure port over TLS', () => {
  let server: HealthServer;
  let trusted: Awaited<ReturnType<typeof clientPki>>;
  let stranger: Awaited<ReturnType<typeof clientPki>>;
  const tokens = fakeTokenReview({
    allowed: { authenticated: true, user: { name: 'allowed', groups: [] } },
    denied: { authenticated: true, user: { name: 'denied', groups: [] } },
  });

  beforeAll(async () => {
    [trusted, stranger] = await Promise.all([clientPki('admin', 'system:masters'), clientPki('mallory', 'system:masters')]);
    const serving: SecureServing = {
      cert: { ...(await makeSelfSigned(selfSignedNames('127.0.0.1'))), source: { kind: 'memory' } },
      clientCa: trusted.caPem,
      authenticate: createAuthenticator({ clientCertificates: true, tokenReview: tokens.fn, cacheTtlMs: 10_000 }),
      authorize: createAuthorizer({
        alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS,
        accessReview: async (a) => ({ allowed: a.user.name === 'allowed' && a.verb === 'get' }),
        allowCacheTtlMs: 10_000,
        denyCacheTtlMs: 10_000,
      }),
    };
    server = await startHealthServer({ bindAddress: '127.0.0.1', port: 0, metrics: createMetrics(), readiness: () => true, logger: createLogger('silent'), serving });
  });
  afterAll(() => server.close());

  function get(p: string, o: { token?: string; cert?: { certPem: string; keyPem: string } } = {}): Promise<{ status: number; body: string; type?: string }> {
    return new Promise((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1', port: server.port, path: p, rejectUnauthorized: false,
        headers: o.token ? { Authorization: `Bearer ${o.token}` } : {},
        ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}),
      }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test("tokens: allowed 200, denied 403, garbage 401 (even on /healthz), none 403 on /metrics and 200 on /healthz, with upstream's bodies", async () => {
    expect((await get('/metrics', { token: 'allowed' })).status).toBe(200);
    const denied = await get('/metrics', { token: 'denied' });
    expect(denied.status).toBe(403);
    expect(denied.type).toBe('application/json');
    expect(JSON.parse(denied.body)).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'forbidden: User "denied" cannot get path "/metrics"', reason: 'Forbidden', details: {}, code: 403,
    });
    const garbage = await get('/metrics', { token: 'garbage' });
    expect(garbage.status).toBe(401);
    expect(JSON.parse(garbage.body)).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    expect((await get('/healthz', { token: 'garbage' })).status).toBe(401);
    expect(JSON.parse((await get('/metrics')).body).message).toBe('forbidden: User "system:anonymous" cannot get path "/metrics"');
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok' });
  });

  test('client certificates: one of the client CA authenticates (system:masters passes), another CA\'s is 401', async () => {
    expect((await get('/metrics', { cert: trusted })).status).toBe(200);
    expect((await get('/metrics', { cert: stranger })).status).toBe(401);
    // a certificate that does not verify yields to a token that does, as upstream's union
    expect((await get('/metrics', { cert: stranger, token: 'allowed' })).status).toBe(200);
  });
});

describe('certificate files', () => {
  test('given files are served again after they change', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serving-reload-'));
    const certFile = path.join(dir, 'tls.crt');
    const keyFile = path.join(dir, 'tls.key');
    const first = await makeSelfSigned(selfSignedNames('127.0.0.1'));
    fs.writeFileSync(certFile, first.cert);
    fs.writeFileSync(keyFile, first.key);
    const server = await startHealthServer({
      bindAddress: '127.0.0.1', port: 0, metrics: createMetrics(), readiness: () => true, logger: createLogger('silent'), certPollMs: 50,
      serving: {
        cert: await loadServingCert({ certFile, keyFile, bindAddress: '127.0.0.1' }),
        authenticate: createAuthenticator({ clientCertificates: false, cacheTtlMs: 0 }),
        authorize: createAuthorizer({ alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS, allowCacheTtlMs: 0, denyCacheTtlMs: 0 }),
      },
    });
    const served = () => new Promise<string>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: server.port, path: '/healthz', rejectUnauthorized: false, agent: false }, (res) => {
        res.resume();
        resolve((res.socket as tls.TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '');
      }).on('error', reject);
    });
    try {
      expect(await served()).toBe(certsOf(first.cert)[0].fingerprint256);
      const second = await makeSelfSigned(selfSignedNames('127.0.0.1'));
      fs.writeFileSync(keyFile, second.key);
      fs.writeFileSync(certFile, second.cert);
      const want = certsOf(second.cert)[0].fingerprint256;
      const deadline = Date.now() + 5_000;
      while ((await served()) !== want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await served()).toBe(want);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
