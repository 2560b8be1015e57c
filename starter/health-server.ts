import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Metrics } from '../workers/metrics';

/*
 * Difference from upstream, on purpose: kube-controller-manager serves these endpoints over HTTPS
 * on --secure-port, with a self-signed certificate unless one is configured, and guards /metrics
 * with delegated authn/authz. We serve plain HTTP without authentication, so --bind-address should
 * stay on a private interface; everything these endpoints reveal is operational, not cluster data.
 */

/** A bare boolean, or a verdict with the reason /readyz reports when not ready. */
export type Readiness = boolean | { ready: boolean; reason?: string };

export interface HealthServerOptions {
  bindAddress: string;
  /** 0 picks a free port; the one chosen is in the result. */
  port: number;
  metrics: Metrics;
  readiness: () => Readiness | Promise<Readiness>;
  logger: Logger;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
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

/** Serves /healthz, /readyz and /metrics until close(). Rejects if the address can't be bound. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const { metrics, readiness, logger } = opts;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') return send(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });

    if (path === '/healthz') return send(res, 200, 'ok');
    if (path === '/readyz') {
      const r = await readyz(readiness);
      return send(res, r.ready ? 200 : 503, r.reason);
    }
    const text = await metrics.registry.metrics();
    return send(res, 200, text, { 'Content-Type': metrics.registry.contentType });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      logger.error({ err: e, path: req.url }, 'health server request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
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

  const port = (server.address() as AddressInfo).port;
  logger.info({ address: opts.bindAddress, port }, 'serving /healthz, /readyz and /metrics over plain HTTP');

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // keep-alive connections from scrapers would otherwise hold close() open until they time out
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
