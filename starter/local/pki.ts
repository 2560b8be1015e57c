import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findOnPath } from './binaries';

/** The service CIDR's first address is the in-cluster `kubernetes` Service; the serving cert must name it. */
export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/16';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

export interface ClientIdentity {
  /** file stem under pki/ */
  file: string;
  commonName: string;
  organization?: string;
}

/**
 * Client certificates of the local cluster. Their names are the identities that upstream's
 * bootstrap RBAC policy already grants (system:kube-scheduler, system:kube-controller-manager),
 * so each component runs with the rights it has in a real cluster, not as admin.
 */
export const CLIENTS: ClientIdentity[] = [
  { file: 'admin', commonName: 'kubernetes-admin', organization: 'system:masters' },
  { file: 'kube-scheduler', commonName: 'system:kube-scheduler' },
  { file: 'kube-controller-manager', commonName: 'system:kube-controller-manager' },
];

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  client(file: string): { cert: string; key: string };
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() || err.message}`);
  }
}

export function pkiPaths(dataDir: string): Pki {
  const dir = path.join(dataDir, 'pki');
  return {
    dir,
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    apiserverCert: path.join(dir, 'apiserver.crt'),
    apiserverKey: path.join(dir, 'apiserver.key'),
    serviceAccountKey: path.join(dir, 'sa.key'),
    serviceAccountPub: path.join(dir, 'sa.pub'),
    client: (file) => ({ cert: path.join(dir, `${file}.crt`), key: path.join(dir, `${file}.key`) }),
  };
}

/**
 * Create the cluster's CA, serving cert, client certs and service-account signing keys once;
 * later `up`s reuse them so kubeconfigs and issued tokens stay valid across restarts.
 */
export function ensurePki(dataDir: string): Pki {
  const p = pkiPaths(dataDir);
  const wanted = [p.caCert, p.caKey, p.apiserverCert, p.apiserverKey, p.serviceAccountKey, p.serviceAccountPub,
    ...CLIENTS.flatMap((c) => [p.client(c.file).cert, p.client(c.file).key])];
  if (wanted.every((f) => fs.existsSync(f))) return p;
  if (!findOnPath('openssl')) {
    throw new Error('openssl is not on PATH; it is needed once to create the local cluster certificates (apt-get install openssl)');
  }
  fs.mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  const days = '3650';
  if (!fs.existsSync(p.caCert) || !fs.existsSync(p.caKey)) {
    openssl(['req', '-x509', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', p.caKey, '-out', p.caCert,
      '-days', days, '-subj', '/CN=temporal-kcm-local-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
  }
  const signed = (out: { cert: string; key: string }, subject: string, exts: string[]) =>
    openssl(['req', '-x509', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', out.key, '-out', out.cert,
      '-CA', p.caCert, '-CAkey', p.caKey, '-days', days, '-subj', subject,
      '-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
      ...exts.flatMap((e) => ['-addext', e])]);
  const sans = ['IP:127.0.0.1', 'IP:::1', `IP:${KUBERNETES_SERVICE_IP}`, 'DNS:localhost', 'DNS:kubernetes',
    'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local'];
  signed({ cert: p.apiserverCert, key: p.apiserverKey }, '/CN=kube-apiserver',
    ['extendedKeyUsage=serverAuth', `subjectAltName=${sans.join(',')}`]);
  for (const c of CLIENTS) {
    const subject = `/CN=${c.commonName}` + (c.organization ? `/O=${c.organization}` : '');
    signed(p.client(c.file), subject, ['extendedKeyUsage=clientAuth']);
  }
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', p.serviceAccountKey]);
  openssl(['pkey', '-in', p.serviceAccountKey, '-pubout', '-out', p.serviceAccountPub]);
  for (const f of fs.readdirSync(p.dir)) if (f.endsWith('.key')) fs.chmodSync(path.join(p.dir, f), 0o600);
  return p;
}

/** The service the metrics APIServices point at; the stand-in's serving cert names its DNS name. */
export const METRICS_SERVICE = { namespace: 'kube-system', name: 'temporal-kcm-metrics' };
/** CN of the aggregator's proxy client cert: the only caller the metrics stand-in accepts. */
export const FRONT_PROXY_CLIENT_CN = 'front-proxy-client';

export interface AggregationPki {
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  metricsCert: string;
  metricsKey: string;
}

export function aggregationPkiPaths(dataDir: string): AggregationPki {
  const dir = path.join(dataDir, 'pki');
  return {
    frontProxyCaCert: path.join(dir, 'front-proxy-ca.crt'),
    frontProxyCaKey: path.join(dir, 'front-proxy-ca.key'),
    frontProxyClientCert: path.join(dir, 'front-proxy-client.crt'),
    frontProxyClientKey: path.join(dir, 'front-proxy-client.key'),
    metricsCert: path.join(dir, 'metrics-standin.crt'),
    metricsKey: path.join(dir, 'metrics-standin.key'),
  };
}

/**
 * The aggregation layer's certificates, made once (P-256 keys: quick to make): a front-proxy CA
 * (kube-apiserver's --requestheader-client-ca-file) and its client cert (the aggregator's
 * --proxy-client-cert-file), and the metrics stand-in's serving cert, signed by the stack CA, for
 * the name the aggregator dials (<service>.<namespace>.svc). Kept apart from ensurePki so that a
 * data dir made before these existed gains them without its other keys being remade.
 */
export function ensureAggregationPki(dataDir: string): AggregationPki {
  const p = pkiPaths(dataDir);
  const a = aggregationPkiPaths(dataDir);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  const leaf = ['-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment'];
  const missing = (...f: string[]) => f.some((x) => !fs.existsSync(x));
  let madeCa = false;
  if (missing(a.frontProxyCaCert, a.frontProxyCaKey)) {
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', a.frontProxyCaKey, '-out', a.frontProxyCaCert, '-days', '3650',
      '-subj', '/CN=temporal-kcm-front-proxy-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
    madeCa = true;
  }
  if (madeCa || missing(a.frontProxyClientCert, a.frontProxyClientKey)) {
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', a.frontProxyClientKey, '-out', a.frontProxyClientCert,
      '-CA', a.frontProxyCaCert, '-CAkey', a.frontProxyCaKey, '-days', '3650', '-subj', `/CN=${FRONT_PROXY_CLIENT_CN}`,
      ...leaf, '-addext', 'extendedKeyUsage=clientAuth']);
  }
  if (missing(a.metricsCert, a.metricsKey)) {
    const svc = `${METRICS_SERVICE.name}.${METRICS_SERVICE.namespace}.svc`;
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', a.metricsKey, '-out', a.metricsCert,
      '-CA', p.caCert, '-CAkey', p.caKey, '-days', '3650', '-subj', `/CN=${svc}`,
      ...leaf, '-addext', 'extendedKeyUsage=serverAuth', '-addext', `subjectAltName=DNS:${svc},DNS:${svc}.cluster.local`]);
  }
  for (const f of [a.frontProxyCaKey, a.frontProxyClientKey, a.metricsKey]) fs.chmodSync(f, 0o600);
  return a;
}

/** Files of the Temporal frontend's mTLS (the `--temporal postgres` topology). */
export interface TemporalPki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** The name clients verify the Temporal frontend's certificate against (`--temporal-tls-server-name`). */
export const TEMPORAL_SERVER_NAME = 'localhost';
/** CN of the client certificate `local up`, `local env` and the manager present to Temporal. */
export const TEMPORAL_CLIENT_CN = 'temporal-kcm';

export function temporalPkiPaths(dataDir: string): TemporalPki {
  const dir = path.join(dataDir, 'pki');
  return {
    caCert: path.join(dir, 'temporal-ca.crt'),
    caKey: path.join(dir, 'temporal-ca.key'),
    serverCert: path.join(dir, 'temporal-frontend.crt'),
    serverKey: path.join(dir, 'temporal-frontend.key'),
    clientCert: path.join(dir, 'temporal-client.crt'),
    clientKey: path.join(dir, 'temporal-client.key'),
  };
}

/**
 * A CA of Temporal's own, its frontend's serving cert (localhost and 127.0.0.1) and one client
 * cert, made once (P-256). Not the cluster CA: the frontend trusts every cert its client CA
 * signed, and a kube-apiserver client cert (kubernetes-admin, kube-scheduler, ...) should not
 * open Temporal too. Made apart from ensurePki, as ensureAggregationPki, so older data dirs gain it.
 */
export function ensureTemporalPki(dataDir: string): TemporalPki {
  const t = temporalPkiPaths(dataDir);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  const leaf = ['-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment'];
  const missing = (...f: string[]) => f.some((x) => !fs.existsSync(x));
  fs.mkdirSync(path.dirname(t.caCert), { recursive: true, mode: 0o700 });
  let madeCa = false;
  if (missing(t.caCert, t.caKey)) {
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', t.caKey, '-out', t.caCert, '-days', '3650',
      '-subj', '/CN=temporal-kcm-temporal-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
    madeCa = true;
  }
  if (madeCa || missing(t.serverCert, t.serverKey)) {
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', t.serverKey, '-out', t.serverCert,
      '-CA', t.caCert, '-CAkey', t.caKey, '-days', '3650', '-subj', '/CN=temporal-frontend',
      ...leaf, '-addext', 'extendedKeyUsage=serverAuth', '-addext', `subjectAltName=DNS:${TEMPORAL_SERVER_NAME},IP:127.0.0.1,IP:::1`]);
  }
  if (madeCa || missing(t.clientCert, t.clientKey)) {
    openssl(['req', '-x509', '-new', '-nodes', ...ec, '-keyout', t.clientKey, '-out', t.clientCert,
      '-CA', t.caCert, '-CAkey', t.caKey, '-days', '3650', '-subj', `/CN=${TEMPORAL_CLIENT_CN}`,
      ...leaf, '-addext', 'extendedKeyUsage=clientAuth']);
  }
  for (const f of [t.caKey, t.serverKey, t.clientKey]) fs.chmodSync(f, 0o600);
  return t;
}
