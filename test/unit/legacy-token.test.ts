import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { ApiError, type KubeRest, type RequestOptions } from '../../activities/kube/rest';
import { createTokenActivities, rootCaSha256, tokenControllerConfigError } from '../../activities/serviceaccount-token/activities';
import {
  LEGACY_ISSUER,
  keyIdOf,
  legacyClaims,
  parseSigningKey,
  signLegacyToken,
  verifyLegacyToken,
} from '../../activities/serviceaccount-token/jwt';

const SUBJECT = { namespace: 'team-a', serviceAccountName: 'builder', serviceAccountUid: '6a3c2f0e-1d2b-4c5d-8e9f-0a1b2c3d4e5f', secretName: 'builder-token-x7k2p' };

/** The claims exactly as upstream serialises them: Go map order, i.e. sorted keys. */
const EXPECTED_PAYLOAD =
  '{"iss":"kubernetes/serviceaccount",' +
  '"kubernetes.io/serviceaccount/namespace":"team-a",' +
  '"kubernetes.io/serviceaccount/secret.name":"builder-token-x7k2p",' +
  '"kubernetes.io/serviceaccount/service-account.name":"builder",' +
  '"kubernetes.io/serviceaccount/service-account.uid":"6a3c2f0e-1d2b-4c5d-8e9f-0a1b2c3d4e5f",' +
  '"sub":"system:serviceaccount:team-a:builder"}';

const segment = (token: string, i: number) => Buffer.from(token.split('.')[i], 'base64url');

function expectedKid(pub: KeyObject): string {
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('base64url');
}

function rsaPair() {
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

function ecPair(namedCurve: string) {
  return generateKeyPairSync('ec', { namedCurve });
}

describe('legacy ServiceAccount token', () => {
  it('claims are the issuer, the username and the four private claims', () => {
    expect(legacyClaims(SUBJECT)).toEqual({
      iss: LEGACY_ISSUER,
      sub: 'system:serviceaccount:team-a:builder',
      'kubernetes.io/serviceaccount/namespace': 'team-a',
      'kubernetes.io/serviceaccount/secret.name': 'builder-token-x7k2p',
      'kubernetes.io/serviceaccount/service-account.name': 'builder',
      'kubernetes.io/serviceaccount/service-account.uid': '6a3c2f0e-1d2b-4c5d-8e9f-0a1b2c3d4e5f',
    });
    expect(LEGACY_ISSUER).toBe('kubernetes/serviceaccount');
  });

  it.each(['pkcs1', 'pkcs8'] as const)('signs RS256 with an RSA key in %s PEM', (type) => {
    const { privateKey, publicKey } = rsaPair();
    const key = parseSigningKey(privateKey.export({ type, format: 'pem' }));
    const kid = expectedKid(publicKey);
    expect(key.alg).toBe('RS256');
    expect(key.kid).toBe(kid);
    expect(keyIdOf(publicKey)).toBe(kid);
    expect(kid).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes, base64url without padding

    const token = signLegacyToken(key, SUBJECT);
    expect(token.split('.')).toHaveLength(3);
    expect(token).not.toMatch(/=/);
    expect(segment(token, 0).toString()).toBe(`{"alg":"RS256","kid":"${kid}"}`);
    expect(segment(token, 1).toString()).toBe(EXPECTED_PAYLOAD);
    expect(segment(token, 2)).toHaveLength(256);

    const decoded = verifyLegacyToken(token, publicKey);
    expect(decoded.header).toEqual({ alg: 'RS256', kid });
    expect(decoded.claims).toEqual(legacyClaims(SUBJECT));
    // PEM public key works too
    expect(verifyLegacyToken(token, publicKey.export({ type: 'spki', format: 'pem' })).claims).toEqual(legacyClaims(SUBJECT));
  });

  it.each([
    ['prime256v1', 'ES256', 64, 'sec1'],
    ['secp384r1', 'ES384', 96, 'sec1'],
    ['secp521r1', 'ES512', 132, 'sec1'],
    ['prime256v1', 'ES256', 64, 'pkcs8'],
    ['secp384r1', 'ES384', 96, 'pkcs8'],
    ['secp521r1', 'ES512', 132, 'pkcs8'],
  ] as const)('signs with an EC %s key as %s (%s bytes of r||s) from %s PEM', (curve, alg, sigLen, type) => {
    const { privateKey, publicKey } = ecPair(curve);
    const key = parseSigningKey(privateKey.export({ type, format: 'pem' }));
    const kid = expectedKid(publicKey);
    expect(key.alg).toBe(alg);
    expect(key.kid).toBe(kid);

    const token = signLegacyToken(key, SUBJECT);
    expect(segment(token, 0).toString()).toBe(`{"alg":"${alg}","kid":"${kid}"}`);
    expect(segment(token, 1).toString()).toBe(EXPECTED_PAYLOAD);
    expect(segment(token, 2)).toHaveLength(sigLen);
    expect(verifyLegacyToken(token, publicKey)).toEqual({ header: { alg, kid }, claims: legacyClaims(SUBJECT) });
  });

  it('matches upstream byte for byte (RS256 is deterministic; token made by go-jose v2.6.3 as v1.35 configures it)', () => {
    // a throwaway 1024-bit test key, used for nothing but this known-answer test
    const pem = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'MIICXgIBAAKBgQC986GqmPs/OvGyxax/mdmIwQK1HEBC7ozrC3pBe/+jfLutURHu',
      'QXYenagQ3FZlf3reQHTR0cQVrqCkctJcBpLg6xcdHRM0hoYJ20F5DXM28nXh0I/e',
      'rL92cB/dQELD5S1pjbL5foaT6oEQ9RV6MUXmpJi/i3Y6r1QEstkGLdeL/wIDAQAB',
      'AoGBAKU4/p0yVhBIyCWVFZckDniKUj2QpkDR2Jc2M5A0OEdPXrvBsZQJMqIsxhxs',
      'W2YLvacGb9Z13FZzv91q1pkfSq+Cs2ezGAImcKEvDjtiVyIhs2Q6Ab/EY2hHJGHh',
      'PQl6tsnH+ZsQ6lebJL6lD8qLqWscrHmKmMXBcU/+4X93yxIZAkEA67nwcbDMkwGP',
      '3sQuy74p/+u7UfdaYVPgrNy77+TPB+MSU+e/2CFBqjBdccwTWVDGDQWxTORaQlnV',
      'i9Y/EJg5LQJBAM5J24yedyMhW0QSShscVUlZgGGaYakiWr8IjA7rAFuKPjnx3l8W',
      'pyu0ibQ8H8UFFGvoTLh3tiOXng17lGS5vVsCQAplFq9Mxpis9vUx3YZqiluYv5fr',
      'unaURlIZIciAZIjKgKJmk9UqEkU5AMXl4+yKXVFxsNHdOAW5BGu4NOu8arkCQQDB',
      'BWbDOvtrCakmFp70oxxCV9bCfPvokFas7UhwJP/ep4n2GhTikIW3ZWR8Gs33QfuL',
      'xH8VFB5/Szz+jKWbYhiFAkEA4JFcxtWjqQJWvvz030w0ZS9dRKMnK4HrdwlbglaH',
      'fpeC7m4Jz6M8T17ZAqAPVzf2o+WjDIfnlJG9SVlqvKNiMA==',
      '-----END RSA PRIVATE KEY-----',
    ].join('\n');
    const key = parseSigningKey(pem);
    const token = signLegacyToken(key, { namespace: 'ns1', serviceAccountName: 'sa1', serviceAccountUid: 'uid-1', secretName: 'sec1' });
    expect(token).toBe(
      'eyJhbGciOiJSUzI1NiIsImtpZCI6IncwVGE2Tms4RnVfcE5fVGdqSG5JMUgxZThEOG52bHZsNm5uOHBtLXVRVjgifQ.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwia3ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb3VudC9uYW1lc3BhY2UiOiJuczEiLCJrdWJlcm5ldGVzLmlvL3NlcnZpY2VhY2NvdW50L3NlY3JldC5uYW1lIjoic2VjMSIsImt1YmVybmV0ZXMuaW8vc2VydmljZWFjY291bnQvc2VydmljZS1hY2NvdW50Lm5hbWUiOiJzYTEiLCJrdWJlcm5ldGVzLmlvL3NlcnZpY2VhY2NvdW50L3NlcnZpY2UtYWNjb3VudC51aWQiOiJ1aWQtMSIsInN1YiI6InN5c3RlbTpzZXJ2aWNlYWNjb3VudDpuczE6c2ExIn0.PbLvPj46ES2FXlw3wKcH0hxHPJ50DfDOhlEjGAF_HkSkHWlwtBCqDGEnMITI2MF-IhaxghwANrCdf92Mn9HAO9s4wBXSrhIQWGaCFuh0j2ccbBN-YViSwzGpIIDd_AOBjkYXnVBjFPMQUBwfCp5gOHRc9iwM5Jw5QIdOFsBpGzo',
    );
  });

  it('skips non-key PEM blocks before the key (openssl ecparam -genkey output)', () => {
    const { privateKey, publicKey } = ecPair('prime256v1');
    const params = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n';
    const key = parseSigningKey(params + privateKey.export({ type: 'sec1', format: 'pem' }));
    expect(key.alg).toBe('ES256');
    expect(key.kid).toBe(expectedKid(publicKey));
  });

  it('rejects keys upstream cannot sign with, without quoting the file', () => {
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(() => parseSigningKey(ed)).toThrow(/unsupported private key: key type ed25519/);
    const k1 = ecPair('secp256k1').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(() => parseSigningKey(k1)).toThrow(/unsupported private key: EC curve secp256k1/);
    expect(() => parseSigningKey('not a key')).toThrow(/does not contain a valid RSA or ECDSA private key/);
    const pub = rsaPair().publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(() => parseSigningKey(pub)).toThrow(/does not contain/);
    const encrypted = rsaPair().privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }) as string;
    try {
      parseSigningKey(encrypted);
      throw new Error('expected a failure');
    } catch (e) {
      expect((e as Error).message).not.toContain('MII');
    }
  });

  it('verification fails for a tampered token, a foreign key, or a key of another type', () => {
    const { privateKey, publicKey } = rsaPair();
    const token = signLegacyToken(parseSigningKey(privateKey.export({ type: 'pkcs1', format: 'pem' })), SUBJECT);
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(EXPECTED_PAYLOAD.replace('builder"', 'admin"')).toString('base64url');
    expect(() => verifyLegacyToken(`${h}.${forged}.${s}`, publicKey)).toThrow(/does not verify/);
    expect(() => verifyLegacyToken(token, rsaPair().publicKey)).toThrow(/does not verify/);
    expect(() => verifyLegacyToken(token, ecPair('prime256v1').publicKey)).toThrow(/does not fit/);
    expect(() => verifyLegacyToken(`${h}.${p}`, publicKey)).toThrow(/compact JWS/);
  });
});

// ---------------------------------------------------------------------------------------------
// the activities: the token goes to the API and nowhere else

/** A public, self-signed test certificate (no key kept anywhere). */
const TEST_CA = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBhjCCAS2gAwIBAgIUa22s9rCTrIlTd54X/bT12QzqsmAwCgYIKoZIzj0EAwIw',
  'GDEWMBQGA1UEAwwNdG9rZW4tdGVzdC1jYTAgFw0yNjExMjIwNDM5MTVaGA8yMTI2',
  'MTAyOTA0MzkxNVowGDEWMBQGA1UEAwwNdG9rZW4tdGVzdC1jYTBZMBMGByqGSM49',
  'AgEGCCqGSM49AwEHA0IABF7smwko8wNU7Tac+iva5jvCsq2l2dCtAPmLlrpM/sr1',
  'KG0IRvQ39xDnY2xNM12lh5dfowFjfSA4kDEaJA0JtBejUzBRMB0GA1UdDgQWBBQL',
  'ojzfTrGuK0qIhYRd3jtvLMSo/DAfBgNVHSMEGDAWgBQLojzfTrGuK0qIhYRd3jtv',
  'LMSo/DAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIFDAwr9CiiCo',
  'Pdgc57Jv6cLEf9D9dR4sdZhZhWT5dib/AiAbd5DnffZrMeHoH6jp1Tnx0/SLAl8A',
  'ooryuV1IINN99Q==',
  '-----END CERTIFICATE-----',
  '',
].join('\n');

/** A stored object, loosely typed: tests read whatever fields they wrote. */
type Obj = Record<string, any>;

/** Just enough of an API server: GET, PUT with resourceVersion check, DELETE with UID precondition. */
function fakeApi(objects: Record<string, Obj>) {
  const calls: Array<{ method: string; path: string; body?: unknown }> = [];
  let rv = 100;
  const rest = {
    async request<T>(method: string, p: string, ro: RequestOptions = {}) {
      calls.push({ method, path: p, body: ro.body });
      const cur = objects[p];
      if (!cur) throw new ApiError(404, 'NotFound', `${method} ${p}: 404 not found`);
      if (method === 'GET') return { status: 200, body: JSON.parse(JSON.stringify(cur)) as T };
      if (method === 'PUT') {
        const next = JSON.parse(JSON.stringify(ro.body)) as Obj;
        if (next.metadata.resourceVersion !== cur.metadata.resourceVersion) throw new ApiError(409, 'Conflict', `${method} ${p}: 409 the object has been modified`);
        next.metadata.resourceVersion = String(++rv);
        objects[p] = next;
        return { status: 200, body: JSON.parse(JSON.stringify(next)) as T };
      }
      if (method === 'DELETE') {
        const pre = (ro.body as { preconditions?: { uid?: string } }).preconditions;
        if (pre?.uid && pre.uid !== cur.metadata.uid) throw new ApiError(409, 'Conflict', `${method} ${p}: 409 precondition failed`);
        delete objects[p];
        return { status: 200, body: {} as T };
      }
      throw new Error(`unexpected ${method}`);
    },
  } as unknown as KubeRest;
  return { rest, calls, objects };
}

function recordingLogger() {
  const lines: unknown[] = [];
  const logger = { child: () => logger, info: (...a: unknown[]) => lines.push(a), warn: (...a: unknown[]) => lines.push(a) } as unknown as Logger;
  return { logger, lines };
}

const SECRET_PATH = '/api/v1/namespaces/team-a/secrets/builder-token';
const SA_PATH = '/api/v1/namespaces/team-a/serviceaccounts/builder';

describe('token activities', () => {
  let dir: string;
  let keyFile: string;
  let caFile: string;
  let publicKey: KeyObject;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-test-'));
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    publicKey = pair.publicKey;
    keyFile = path.join(dir, 'sa.key');
    fs.writeFileSync(keyFile, pair.privateKey.export({ type: 'sec1', format: 'pem' }));
    caFile = path.join(dir, 'ca.crt');
    fs.writeFileSync(caFile, TEST_CA);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function world(data: Record<string, string> = {}) {
    return fakeApi({
      [SECRET_PATH]: {
        apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', data,
        metadata: { namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '42', annotations: { 'kubernetes.io/service-account.name': 'builder' } },
      },
      [SA_PATH]: {
        apiVersion: 'v1', kind: 'ServiceAccount', secrets: [{ name: 'builder-token' }, { name: 'other' }],
        metadata: { namespace: 'team-a', name: 'builder', uid: 'sa-uid', resourceVersion: '7' },
      },
    });
  }

  it('config: no key disables the controller, a bad key or CA file is fatal, a good pair passes', () => {
    expect(tokenControllerConfigError({})).toEqual({ fatal: false, message: expect.stringContaining('no private key') });
    const bad = path.join(dir, 'bad.key');
    fs.writeFileSync(bad, 'garbage');
    expect(tokenControllerConfigError({ privateKeyFile: bad })).toEqual({ fatal: true, message: expect.stringContaining('error reading key') });
    expect(tokenControllerConfigError({ privateKeyFile: keyFile, rootCaFile: keyFile })).toEqual({ fatal: true, message: expect.stringContaining('error parsing root-ca-file') });
    expect(tokenControllerConfigError({ privateKeyFile: keyFile, rootCaFile: caFile })).toBeUndefined();
    expect(rootCaSha256({ rootCaFile: caFile })).toBe(createHash('sha256').update(TEST_CA).digest('hex'));
    expect(rootCaSha256({ kubeconfigCa: TEST_CA })).toBe(createHash('sha256').update(TEST_CA).digest('hex'));
    expect(rootCaSha256({})).toBeUndefined();
  });

  it('observe reports booleans about the data, and the account found live', async () => {
    const { rest } = world({ token: Buffer.from('x.y.z').toString('base64'), 'ca.crt': Buffer.from('old').toString('base64') });
    const { logger } = recordingLogger();
    const io = createTokenActivities({ rest, logger, recordEvent: () => undefined, privateKeyFile: keyFile, rootCaFile: caFile });
    const seen = await io.observeTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 's-uid' });
    expect(seen).toEqual({
      secret: { uid: 's-uid', resourceVersion: '42', serviceAccountName: 'builder', hasToken: true, hasNamespace: false, caCurrent: false, deleting: false },
      serviceAccount: { state: 'exists', name: 'builder', uid: 'sa-uid', resourceVersion: '7', referencesSecret: true },
    });
    expect(await io.observeTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 'older' })).toEqual({
      replacedByUid: 's-uid', serviceAccount: { state: 'unknown' },
    });
  });

  it('fill writes a verifiable token, the CA, the namespace and both annotations, and returns none of it', async () => {
    const { rest, calls, objects } = world();
    const { logger, lines } = recordingLogger();
    const io = createTokenActivities({ rest, logger, recordEvent: () => undefined, privateKeyFile: keyFile, rootCaFile: caFile });
    const r = await io.fillTokenSecret({
      namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '42',
      serviceAccount: { name: 'builder', uid: 'sa-uid' }, fill: { token: true, ca: true, namespace: true }, reason: 'test',
    });
    expect(r).toEqual({ outcome: 'filled', resourceVersion: '101' });
    const put = calls.find((c) => c.method === 'PUT')!;
    expect((put.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe('42');
    const stored = objects[SECRET_PATH];
    const token = Buffer.from(stored.data.token, 'base64').toString();
    expect(verifyLegacyToken(token, publicKey).claims).toEqual(legacyClaims({ namespace: 'team-a', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', secretName: 'builder-token' }));
    expect(Buffer.from(stored.data['ca.crt'], 'base64').toString()).toBe(TEST_CA);
    expect(Buffer.from(stored.data.namespace, 'base64').toString()).toBe('team-a');
    expect(stored.metadata.annotations).toEqual({ 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'sa-uid' });
    for (const where of [JSON.stringify(r), JSON.stringify(lines)]) {
      expect(where).not.toContain(token.split('.')[2]);
      expect(where).not.toContain(stored.data.token.slice(0, 40));
    }
    // the next look sees a complete Secret
    const seen = await io.observeTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 's-uid' });
    expect(seen.secret).toMatchObject({ hasToken: true, hasNamespace: true, caCurrent: true, serviceAccountUid: 'sa-uid' });
  });

  it('fill at an old version is a conflict, and a vanished Secret is gone: nothing is written', async () => {
    const { rest, objects } = world();
    const io = createTokenActivities({ rest, logger: recordingLogger().logger, recordEvent: () => undefined, privateKeyFile: keyFile });
    const req = { namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '41', serviceAccount: { name: 'builder', uid: 'sa-uid' }, fill: { token: true, ca: false, namespace: false }, reason: 'test' };
    expect(await io.fillTokenSecret(req)).toEqual({ outcome: 'conflict' });
    expect(objects[SECRET_PATH].data).toEqual({});
    expect(await io.fillTokenSecret({ ...req, uid: 'other' })).toEqual({ outcome: 'conflict' });
    delete objects[SECRET_PATH];
    expect(await io.fillTokenSecret(req)).toEqual({ outcome: 'gone' });
  });

  it('delete carries the UID precondition; a failed precondition or 404 means gone', async () => {
    const { rest, calls } = world();
    const io = createTokenActivities({ rest, logger: recordingLogger().logger, recordEvent: () => undefined, privateKeyFile: keyFile });
    expect(await io.deleteTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 'not-this', reason: 't' })).toEqual({ outcome: 'gone' });
    expect(await io.deleteTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 's-uid', reason: 't' })).toEqual({ outcome: 'deleted' });
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.body)).toEqual([
      { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-this' } },
      { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 's-uid' } },
    ]);
    expect(await io.deleteTokenSecret({ namespace: 'team-a', name: 'builder-token', uid: 's-uid', reason: 't' })).toEqual({ outcome: 'gone' });
  });

  it('removes a deleted Secret from its account, only for the same account UID', async () => {
    const { rest, objects } = world();
    const io = createTokenActivities({ rest, logger: recordingLogger().logger, recordEvent: () => undefined, privateKeyFile: keyFile });
    const req = { namespace: 'team-a', serviceAccount: { name: 'builder', uid: 'sa-uid' }, secretName: 'builder-token', reason: 't' };
    expect(await io.removeServiceAccountSecretReference({ ...req, serviceAccount: { name: 'builder', uid: 'x' } })).toEqual({ outcome: 'gone' });
    expect(await io.removeServiceAccountSecretReference(req)).toEqual({ outcome: 'removed' });
    expect(objects[SA_PATH].secrets).toEqual([{ name: 'other' }]);
    expect(await io.removeServiceAccountSecretReference(req)).toEqual({ outcome: 'notReferenced' });
  });
});
