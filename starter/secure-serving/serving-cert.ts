import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/*
 * The secure port's certificate, chosen as kube-controller-manager chooses it: the files of
 * --tls-cert-file/--tls-private-key-file; else a pair in --cert-dir, reused when both files are
 * there and written there when neither is; else a pair made in memory at every start. A made pair
 * is upstream's shape: a throwaway CA ("localhost-ca@<unix time>") signing a serving certificate
 * ("localhost@<unix time>") for localhost and 127.0.0.1, both RSA 2048 and valid from an hour ago
 * for a year, the file holding the serving certificate followed by the CA.
 */

/** upstream's pair name for kube-controller-manager: <cert-dir>/kube-controller-manager.{crt,key} */
export const PAIR_NAME = 'kube-controller-manager';
/** the host upstream makes its certificate for, with 127.0.0.1 beside it */
const HOST = 'localhost';
const HOST_IP = '127.0.0.1';
const VALIDITY_MS = 365 * 24 * 3600_000;
/** backdated against clock skew between the manager and whoever checks the certificate */
const BACKDATE_MS = 3600_000;
const RSA: webcrypto.RsaHashedKeyGenParams = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };

export interface ServingCertOptions {
  certFile?: string;
  keyFile?: string;
  /** empty or absent: a pair made in memory */
  certDir?: string;
  bindAddress: string;
}

export interface ServingCert {
  /** PEM: the serving certificate, then any chain */
  cert: string;
  /** PEM private key */
  key: string;
  /** where it came from, for the start log and for reloading given files */
  source: { kind: 'files' | 'cert-dir'; certFile: string; keyFile: string; generated: boolean } | { kind: 'memory' };
}

export interface SanList {
  dns: string[];
  ips: string[];
}

/**
 * The names a made certificate is valid for. Upstream adds localhost again when bound to every
 * interface and the bind address otherwise, so both lists may hold a name twice; kept as is, since
 * a client reading the certificate sees the same list from either manager.
 */
export function selfSignedNames(bindAddress: string): SanList {
  const unspecified = bindAddress === '0.0.0.0' || bindAddress === '::' || /^0+(\.0+){3}$/.test(bindAddress) || (net.isIPv6(bindAddress) && /^[0:]+$/.test(bindAddress));
  return unspecified ? { dns: [HOST, HOST], ips: [HOST_IP] } : { dns: [HOST], ips: [HOST_IP, bindAddress] };
}

/** The files of --cert-dir. */
export function certDirPair(certDir: string): { certFile: string; keyFile: string } {
  return { certFile: path.join(certDir, `${PAIR_NAME}.crt`), keyFile: path.join(certDir, `${PAIR_NAME}.key`) };
}

/** A file this process can read (a directory or a missing path is not). */
export function readableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether --cert-dir already holds a pair to reuse; one file without the other is an error, as a
 * key without its certificate (or the reverse) is useless and overwriting it could lose the other.
 */
export function existingPair(certFile: string, keyFile: string, canRead: (f: string) => boolean = readableFile): boolean {
  const c = canRead(certFile);
  const k = canRead(keyFile);
  if (!c && !k) return false;
  if (!c) throw new Error(`cannot read ${certFile}: a certificate and key must be supplied as a pair`);
  if (!k) throw new Error(`cannot read ${keyFile}: a certificate and key must be supplied as a pair`);
  return true;
}

/** a positive serial below 2^63, as upstream draws them */
function serialHex(): string {
  const b = randomBytes(8);
  b[0] &= 0x7f;
  if (b.every((v) => v === 0)) b[7] = 1;
  return b.toString('hex');
}

/** A throwaway CA and a serving certificate it signed, for `names`; `now` for tests. */
export async function makeSelfSigned(names: SanList, now: Date = new Date()): Promise<{ cert: string; key: string }> {
  // loaded here, not at the top: a manager that makes no certificate, or makes it in a thread
  // (makeSelfSignedInThread), never holds the library; it resolves its services through tsyringe,
  // which needs the Reflect metadata API first
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const unix = Math.floor(now.getTime() / 1000);
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_MS);
  const caKeys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caName = `CN=${HOST}-ca@${unix}`;
  const ca = await x509.X509CertificateGenerator.create({
    serialNumber: serialHex(),
    subject: caName,
    issuer: caName,
    notBefore,
    notAfter,
    signingAlgorithm: RSA,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
      new x509.BasicConstraintsExtension(true, undefined, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const keys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialHex(),
    subject: `CN=${HOST}@${unix}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: RSA,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      // the CA's key identifier, as Go links a certificate to the subject key ID of its parent
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false),
      new x509.SubjectAlternativeNameExtension([
        ...names.dns.map((value) => ({ type: 'dns' as const, value })),
        ...names.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    ],
  });

  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  // PKCS#1 ("RSA PRIVATE KEY"), the form upstream writes, so either manager reads the other's files
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs1', format: 'pem' }).toString();
  return { cert: `${serving.toString('pem')}\n${ca.toString('pem')}\n`, key };
}

/*
 * The library, once loaded, stays in a process's memory for one use at start: measured on a built
 * `run` process, a pair made in the main thread left RSS 4.8 MiB higher, one made in a throwaway
 * thread (whose memory goes back when it ends, as the kubeconfig is resolved in
 * activities/kube/kubeconfig.ts) 1.2 MiB. So a built manager makes its pair in a thread. Run from TypeScript sources (the
 * unit tests), where a thread could not load this file, the pair is made in the calling thread.
 */
const MAKER = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.module).makeSelfSigned(workerData.names).then(
  (pair) => parentPort.postMessage({ pair }),
  (e) => parentPort.postMessage({ error: e && e.message ? e.message : String(e) }),
);
`;

export function makeSelfSignedInThread(names: SanList): Promise<{ cert: string; key: string }> {
  if (!__filename.endsWith('.js')) return makeSelfSigned(names);
  return new Promise((resolve, reject) => {
    const w = new Worker(MAKER, { eval: true, workerData: { module: __filename, names } });
    w.once('message', (m: { pair?: { cert: string; key: string }; error?: string }) => {
      void w.terminate();
      if (m.pair) resolve(m.pair);
      else reject(new Error(`self-signed certificate: ${m.error}`));
    });
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`certificate thread exited with code ${code}`)));
  });
}

/** Writes a made pair as upstream does: the directory created, the certificate world-readable, the key the owner's alone. */
export function writePair(certFile: string, keyFile: string, pair: { cert: string; key: string }): void {
  fs.mkdirSync(path.dirname(certFile), { recursive: true, mode: 0o755 });
  fs.writeFileSync(certFile, pair.cert, { mode: 0o644 });
  fs.mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o755 });
  fs.writeFileSync(keyFile, pair.key, { mode: 0o600 });
}

/** The certificate the secure port serves, by upstream's order of choice (see the top of this file). */
export async function loadServingCert(o: ServingCertOptions): Promise<ServingCert> {
  if (o.certFile && o.keyFile) {
    return { cert: fs.readFileSync(o.certFile, 'utf8'), key: fs.readFileSync(o.keyFile, 'utf8'), source: { kind: 'files', certFile: o.certFile, keyFile: o.keyFile, generated: false } };
  }
  if (o.certDir) {
    const { certFile, keyFile } = certDirPair(o.certDir);
    if (existingPair(certFile, keyFile)) {
      return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), source: { kind: 'cert-dir', certFile, keyFile, generated: false } };
    }
    const pair = await makeSelfSignedInThread(selfSignedNames(o.bindAddress));
    writePair(certFile, keyFile, pair);
    return { ...pair, source: { kind: 'cert-dir', certFile, keyFile, generated: true } };
  }
  return { ...(await makeSelfSignedInThread(selfSignedNames(o.bindAddress))), source: { kind: 'memory' } };
}
