import { KeyObject, createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

/**
 * Legacy ServiceAccount tokens (the JWTs kept in kubernetes.io/service-account-token Secrets), made
 * the way kube-controller-manager v1.35 makes them, so that a kube-apiserver given the matching
 * --service-account-key-file accepts them: same header, same claims, same key ID.
 *
 * Everything here runs in activities only. A token is a credential: callers write it where it
 * belongs and never return, log or record it.
 */

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface SigningKey {
  alg: SigningAlgorithm;
  /** upstream's key ID: base64url (unpadded) of the SHA-256 of the public key's PKIX DER */
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** Whom a legacy token names. The ServiceAccount lives in the Secret's namespace. */
export interface LegacyTokenSubject {
  namespace: string;
  serviceAccountName: string;
  serviceAccountUid: string;
  secretName: string;
}

export interface DecodedToken {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

const EC_ALGORITHMS: Record<string, SigningAlgorithm> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

const HASH_OF: Record<SigningAlgorithm, string> = { RS256: 'sha256', ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

/** The PEM block labels upstream's key loader accepts, in the encodings their names promise. */
const KEY_BLOCK_LABELS = new Set(['RSA PRIVATE KEY', 'EC PRIVATE KEY', 'PRIVATE KEY']);

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

function algorithmOf(key: KeyObject): SigningAlgorithm | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') return EC_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? ''];
  return undefined;
}

/**
 * The first usable private key of a PEM file: PKCS#1 RSA, SEC1 EC or unencrypted PKCS#8 (RSA or EC
 * on P-256/384/521). Other blocks (EC PARAMETERS, certificates) are skipped, as upstream does.
 * Errors never quote the file's contents.
 */
export function parseSigningKey(pem: string | Buffer): SigningKey {
  const text = typeof pem === 'string' ? pem : pem.toString('utf8');
  let unsupported: string | undefined;
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (!KEY_BLOCK_LABELS.has(m[1])) continue;
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key: m[0], format: 'pem' });
    } catch {
      continue; // encrypted or malformed: upstream also moves on to the next block
    }
    const alg = algorithmOf(privateKey);
    if (!alg) {
      unsupported = privateKey.asymmetricKeyType === 'ec'
        ? `EC curve ${privateKey.asymmetricKeyDetails?.namedCurve ?? 'unknown'} (must be P-256, P-384 or P-521)`
        : `key type ${privateKey.asymmetricKeyType ?? 'unknown'} (must be RSA or ECDSA)`;
      continue;
    }
    const publicKey = createPublicKey(privateKey);
    return { alg, kid: keyIdOf(publicKey), privateKey, publicKey };
  }
  throw new Error(unsupported ? `unsupported private key: ${unsupported}` : 'data does not contain a valid RSA or ECDSA private key');
}

/**
 * Go's encoding/json escapes these in strings; doing the same keeps our bytes equal to upstream's
 * for any name (Kubernetes names never contain them, but the claim set is not ours to vary).
 */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Upstream serialises header and claims as JSON objects with sorted keys (Go maps). */
function sortedJson(o: Record<string, string>): string {
  const keys = Object.keys(o).sort();
  return `{${keys.map((k) => `${goJson(k)}:${goJson(o[k])}`).join(',')}}`;
}

/** The claim set of a legacy token: the issuer, the ServiceAccount's username and four private claims. */
export function legacyClaims(s: LegacyTokenSubject): Record<string, string> {
  return {
    iss: LEGACY_ISSUER,
    'kubernetes.io/serviceaccount/namespace': s.namespace,
    'kubernetes.io/serviceaccount/secret.name': s.secretName,
    'kubernetes.io/serviceaccount/service-account.name': s.serviceAccountName,
    'kubernetes.io/serviceaccount/service-account.uid': s.serviceAccountUid,
    sub: `system:serviceaccount:${s.namespace}:${s.serviceAccountName}`,
  };
}

/** A compact JWS: no expiry, as legacy tokens live as long as their Secret. */
export function signLegacyToken(key: SigningKey, subject: LegacyTokenSubject): string {
  const header = Buffer.from(sortedJson({ alg: key.alg, kid: key.kid })).toString('base64url');
  const payload = Buffer.from(sortedJson(legacyClaims(subject))).toString('base64url');
  const input = Buffer.from(`${header}.${payload}`);
  // JWS wants ECDSA signatures as fixed-width r||s, not DER
  const signature = sign(HASH_OF[key.alg], input, key.alg === 'RS256' ? key.privateKey : { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}

/**
 * Checks a token's signature against a public key (a KeyObject or PEM) and returns its decoded
 * header and claims; throws when it does not verify. For tests and diagnostics.
 */
export function verifyLegacyToken(token: string, publicKey: KeyObject | string | Buffer): DecodedToken {
  const key = publicKey instanceof KeyObject ? (publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey) : createPublicKey(publicKey);
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('not a compact JWS');
  const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as Record<string, unknown>;
  const alg = header.alg as SigningAlgorithm;
  if (!(alg in HASH_OF) || algorithmOf(key) !== alg) throw new Error(`algorithm ${String(header.alg)} does not fit the key`);
  const ok = verify(HASH_OF[alg], Buffer.from(`${parts[0]}.${parts[1]}`), alg === 'RS256' ? key : { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2], 'base64url'));
  if (!ok) throw new Error('signature does not verify');
  const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header, claims };
}
