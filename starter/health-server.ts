import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type * as tls from 'node:tls';
import type { Logger } from 'pino';
import type { Metrics } from '../workers/metrics';
import type { AccessAttributes, Authenticator, Authorizer, PeerCertificate } from './secure-serving/delegated-auth';
import type { ServingCert } from './secure-serving/serving-cert';

/*
 * The secure port, as kube-controller-manager's: HTTPS only, every request authenticated and then
 * authorized (starter/secure-serving/delegated-auth.ts) before it reaches a handler, so an unknown
 * path is 403 to someone who may not read it and 404 only to someone who may. Served: /healthz and
 * /metrics, as upstream, and /readyz, which upstream does not serve (404 there): ours reports
 * whether this replica's workers poll, which is what a load balancer or a harness wants to wait for.
 */

/** A bare boolean, or a verdict with the reason /readyz reports when not ready. */
export type Readiness = boolean | { ready: boolean; reason?: string };

export interface SecureServing {
  cert: ServingCert;
  /** PEM bundle; given, clients are asked for a certificate, which authenticates them when it chains to it */
  clientCa?: string;
  minTlsVersion?: tls.SecureVersion;
  authenticate: Authenticator;
  authorize: Authorizer;
}

export interface HealthServerOptions {
  bindAddress: string;
  /** 0 picks a free port; the one chosen is in the result. */
  port: number;
  metrics: Metrics;
  /** more exposition text served after the registry's: the Temporal SDK's (workers/sdk-metrics.ts) */
  moreMetrics?: () => Promise<string>;
  readiness: () => Readiness | Promise<Readiness>;
  logger: Logger;
  serving: SecureServing;
  /** how often given certificate files are looked at for a change (upstream watches them too) */
  certPollMs?: number;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** upstream sets this on every answer of the secure port */
const CACHE_CONTROL = 'no-cache, private';

function send(res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': CACHE_CONTROL, 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** A Kubernetes Status object, the body upstream answers 401 and 403 with (field order and indentation as its). */
export function statusBody(code: 401 | 403, message: string): string {
  const status: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: code === 401 ? 'Unauthorized' : 'Forbidden' };
  if (code === 403) status.details = {};
  status.code = code;
  return `${JSON.stringify(status, null, 2)}\n`;
}

function sendStatus(res: http.ServerResponse, code: 401 | 403, message: string): void {
  send(res, code, statusBody(code, message), { 'Content-Type': 'application/json' });
}

async function readyz(readiness: HealthServerOptions['readiness']): Promise<{ ready: boolean; reason: string }> {
  try {
    const v = await readiness();
    if (typeof v === 'boolean') return { ready: v, reason: v ? 'ok' : 'not ready' };
    return { ready: v.ready, reason: v.ready ? 'ok' : v.reason ?? 'not ready' };
  } catch (e) {
    // a readiness check that throws is a probe failure, not a reason to take the server down
    return { ready: false, reason: `readiness check failed: ${(e as Error)?.message ?? String(e)}` };
  }
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

function names(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The client certificate of a connection, as the x509 authenticator reads it: CN the user, O the groups; undefined when none was sent. */
export function peerCertificateOf(socket: tls.TLSSocket): PeerCertificate | undefined {
  const c = socket.getPeerCertificate();
  if (!c || Object.keys(c).length === 0) return undefined;
  const eku = c.ext_key_usage;
  // Go verifies client certificates for client authentication; one limited to other uses fails
  const usable = !eku || eku.includes(CLIENT_AUTH) || eku.includes(ANY_EKU);
  const chainError = socket.authorized ? undefined : String(socket.authorizationError ?? 'not verified');
  const error = chainError ?? (usable ? undefined : 'certificate is not for client authentication');
  return { verified: error === undefined, ...(error ? { error } : {}), commonName: names(c.subject?.CN)[0] ?? '', organizations: names(c.subject?.O) };
}

function tlsOptions(s: SecureServing): https.ServerOptions {
  return {
    cert: s.cert.cert,
    key: s.cert.key,
    ...(s.minTlsVersion ? { minVersion: s.minTlsVersion } : {}),
    // asked for, never required: the certificate is judged per request, so a client without one
    // (or with one that does not verify) still reaches authentication, as upstream's does
    ...(s.clientCa ? { requestCert: true, rejectUnauthorized: false, ca: s.clientCa } : {}),
  };
}

/** Serves /healthz, /readyz and /metrics over HTTPS until close(). Rejects if the address can't be bound. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const { metrics, readiness, logger, serving } = opts;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    const socket = req.socket as tls.TLSSocket;
    const authn = await serving.authenticate({
      authorization: req.headers.authorization,
      peerCertificate: serving.clientCa ? peerCertificateOf(socket) : undefined,
    });
    if (!authn.ok) {
      logger.warn({ path, remote: socket.remoteAddress, err: authn.error }, 'secure port: unable to authenticate the request');
      return sendStatus(res, 401, 'Unauthorized');
    }
    const attrs: AccessAttributes = { user: authn.user, verb: (req.method ?? 'GET').toLowerCase(), path };
    const authz = await serving.authorize(attrs);
    if (!authz.allowed) {
      if ('error' in authz) {
        logger.error({ path, user: attrs.user.name, err: authz.error }, 'secure port: authorization failed');
        // upstream answers a review it could not get with a plain-text 500
        return send(res, 500, `Internal Server Error: ${JSON.stringify(req.url ?? path)}: ${authz.error}\n`);
      }
      logger.debug({ path, verb: attrs.verb, user: attrs.user.name, reason: authz.reason }, 'secure port: forbidden');
      return sendStatus(res, 403, `forbidden: ${authz.reason}`);
    }

    // any method past authorization gets the page, as upstream's handlers ignore the method
    if (path === '/healthz') return send(res, 200, 'ok');
    if (path === '/readyz') {
      const r = await readyz(readiness);
      return send(res, r.ready ? 200 : 503, r.reason);
    }
    if (path === '/metrics') {
      const [ours, more] = await Promise.all([metrics.registry.metrics(), opts.moreMetrics?.() ?? '']);
      const text = more ? `${ours}${ours.endsWith('\n') ? '' : '\n'}${more}` : ours;
      return send(res, 200, text, { 'Content-Type': metrics.registry.contentType });
    }
    return send(res, 404, '404 page not found\n');
  };

  const server = https.createServer(tlsOptions(serving), (req, res) => {
    handle(req, res).catch((e: unknown) => {
      logger.error({ err: e, path: req.url }, 'health server request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  // a failed handshake (a scanner, a client that does not trust the self-signed certificate) is the client's business
  server.on('tlsClientError', (e, socket) => {
    logger.debug({ err: e.message, remote: socket.remoteAddress }, 'secure port: TLS handshake failed');
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      reject(new Error(`cannot serve health and metrics on ${opts.bindAddress}:${opts.port}: ${e.code ?? e.message}`));
    };
    server.once('error', onError);
    server.listen(opts.port, opts.bindAddress, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (e) => logger.error({ err: e }, 'health server error'));

  const stopWatching = watchCertFiles(server, serving, opts.certPollMs ?? 60_000, logger);
  const port = (server.address() as AddressInfo).port;
  const src = serving.cert.source;
  logger.info(
    { address: opts.bindAddress, port, certificate: src.kind === 'memory' ? 'self-signed, in memory' : src.certFile, clientCertificates: Boolean(serving.clientCa) },
    'serving /healthz, /readyz and /metrics securely',
  );

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopWatching();
        server.close(() => resolve());
        // keep-alive connections from scrapers would otherwise hold close() open until they time out
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Serves certificate files again after they change (a renewed certificate put in place), as
 * upstream's dynamic serving certificate does; a pair that does not load is logged and the one in
 * use kept. Returns the stop function.
 */
function watchCertFiles(server: https.Server, serving: SecureServing, intervalMs: number, logger: Logger): () => void {
  const src = serving.cert.source;
  if (src.kind === 'memory') return () => undefined;
  const files = [src.certFile, src.keyFile];
  const reload = (cur: fs.Stats, prev: fs.Stats) => {
    if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size) return;
    try {
      const next = { ...serving.cert, cert: fs.readFileSync(src.certFile, 'utf8'), key: fs.readFileSync(src.keyFile, 'utf8') };
      server.setSecureContext(tlsOptions({ ...serving, cert: next }));
      logger.info({ certFile: src.certFile, keyFile: src.keyFile }, 'secure port: serving certificate reloaded');
    } catch (e) {
      logger.error({ err: (e as Error).message, certFile: src.certFile }, 'secure port: changed certificate not loaded; keeping the one in use');
    }
  };
  for (const f of files) fs.watchFile(f, { interval: intervalMs, persistent: false }, reload);
  return () => {
    for (const f of files) fs.unwatchFile(f, reload);
  };
}
