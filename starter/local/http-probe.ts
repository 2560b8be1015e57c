import * as http from 'node:http';
import * as https from 'node:https';

export interface ProbeTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** self-signed serving certs (kube-scheduler's) can't be verified against our CA */
  insecure?: boolean;
  /** the name to verify the serving cert against, when the URL's host is an IP the cert does not name */
  servername?: string;
  headers?: Record<string, string>;
}

/** GET a health endpoint; resolves with the status and body, never rejects (a refused connection is status 0). */
export function probe(url: string, tls: ProbeTls = {}, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(
      u,
      { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure, timeout: timeoutMs, ...(tls.servername ? { servername: tls.servername } : {}), ...(tls.headers ? { headers: tls.headers } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, body: e.message }));
  });
}

/**
 * Flags for a manager (ours or upstream's) that a harness starts and then reads without a token:
 * /metrics joins upstream's always-allowed paths, so the secure port serves it to anyone who can
 * reach the loopback address it is bound to.
 */
export const OPEN_METRICS_ARGS: readonly string[] = ['--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics'];

/**
 * GET a path of a manager's secure port on this machine: HTTPS to 127.0.0.1, the self-signed
 * certificate not verified (a harness has nothing to verify it against), with a bearer token when
 * given. Never rejects, as probe.
 */
export function probeSecurePort(port: number, path: string, o: { token?: string; timeoutMs?: number } = {}): Promise<{ status: number; body: string }> {
  return probe(`https://127.0.0.1:${port}${path}`, { insecure: true, ...(o.token ? { headers: { Authorization: `Bearer ${o.token}` } } : {}) }, o.timeoutMs);
}
