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
}

/** GET a health endpoint; resolves with the status and body, never rejects (a refused connection is status 0). */
export function probe(url: string, tls: ProbeTls = {}, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(
      u,
      { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure, timeout: timeoutMs, ...(tls.servername ? { servername: tls.servername } : {}) },
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
