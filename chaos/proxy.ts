/**
 * The API-fault proxy: a TLS endpoint between the managers and kube-apiserver that answers a share
 * of requests with an error the real API server can give (429 with Retry-After, 500, 503, 409 on
 * an update, a dropped connection) instead of passing them on, and cuts watches after a while, as
 * a load balancer's idle timeout or an apiserver roll would. Nothing it refuses reaches the API
 * server, so the audit log still shows only writes that took effect. With `rewrite`, it also
 * alters objects on their way back to the manager (a bug-triggering object the API server's
 * validation would never let in, seen only by the manager under test).
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultKind = 'throttled' | 'internal' | 'unavailable' | 'conflict' | 'dropped';
export const FAULT_KINDS: FaultKind[] = ['throttled', 'internal', 'unavailable', 'conflict', 'dropped'];

export interface FaultPlan {
  /** the share of requests refused, 0..1 */
  rate: number;
  /** a watch that got through is cut after a time drawn uniformly from [min, max]; both 0: never */
  watchCutMinMs: number;
  watchCutMaxMs: number;
}

/**
 * Alters one object of a JSON answer to a GET (a list's item, a watch event's object, or the
 * object itself) in place; `path` is the request's, without its query.
 */
export type ObjectRewrite = (obj: Record<string, unknown>, path: string) => void;

/** A JSON answer's body with `rewrite` applied to each object in it (lists by item). */
export function rewriteBody(body: string, path: string, rewrite: ObjectRewrite): string {
  const doc = JSON.parse(body) as Record<string, unknown>;
  if (Array.isArray(doc.items)) for (const o of doc.items as Array<Record<string, unknown>>) rewrite(o, path);
  else if (doc.kind !== 'Status') rewrite(doc, path);
  return JSON.stringify(doc);
}

/** One line of a JSON watch stream with `rewrite` applied to its event's object. */
export function rewriteWatchLine(line: string, path: string, rewrite: ObjectRewrite): string {
  if (!line.trim()) return line;
  const ev = JSON.parse(line) as { type?: string; object?: Record<string, unknown> };
  if (ev.object && ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') rewrite(ev.object, path);
  return JSON.stringify(ev);
}

/** What the proxy did, for the report. */
export interface FaultCounts {
  requests: number;
  faults: Record<FaultKind, number>;
  watchesCut: number;
}

/** A watch request: `?watch=true` (or 1) on a list, or the old `/watch/` paths. */
export function isWatchRequest(url: string): boolean {
  const q = url.indexOf('?');
  const p = q < 0 ? url : url.slice(0, q);
  if (/\/watch\//.test(p)) return true;
  if (q < 0) return false;
  const w = new URLSearchParams(url.slice(q + 1)).get('watch');
  return w === 'true' || w === '1';
}

/**
 * The fault for one request, or none. A 409 is only ever given to an update (PUT): that is where
 * the API server gives it for a stale resourceVersion, and a caller is expected to read again and
 * retry; a 409 on a create means the name exists, which would be a lie here, not a fault.
 */
export function chooseFault(method: string, plan: FaultPlan, random: () => number): FaultKind | undefined {
  if (random() >= plan.rate) return undefined;
  const kinds = method === 'PUT' ? FAULT_KINDS : FAULT_KINDS.filter((k) => k !== 'conflict');
  return kinds[Math.min(kinds.length - 1, Math.floor(random() * kinds.length))];
}

/** The metav1.Status body and headers the API server sends for each refused kind. */
export function faultResponse(kind: Exclude<FaultKind, 'dropped'>): { status: number; headers: Record<string, string>; body: object } {
  const status = (code: number, reason: string, message: string, details?: object) =>
    ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) });
  switch (kind) {
    case 'throttled':
      // what the API server's max-in-flight filter sends: retry after a second
      return { status: 429, headers: { 'retry-after': '1' }, body: status(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 }) };
    case 'internal':
      return { status: 500, headers: {}, body: status(500, 'InternalError', 'Internal error occurred: injected by the chaos proxy') };
    case 'unavailable':
      return { status: 503, headers: {}, body: status(503, 'ServiceUnavailable', 'the server is currently unable to handle the request') };
    case 'conflict':
      return { status: 409, headers: {}, body: status(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again') };
  }
}

export interface FaultProxyOptions {
  /** kube-apiserver's port on 127.0.0.1 */
  targetPort: number;
  /** the proxy's serving cert and key (the API server's own serve: its names cover 127.0.0.1) */
  servingCert: string;
  servingKey: string;
  /** the cluster CA, to trust the API server */
  ca: string;
  /**
   * the client cert a request without a bearer token is sent on with (the manager's own identity
   * from its kubeconfig, which TLS termination cannot pass on). A request with a bearer token
   * (a controller's ServiceAccount token) goes on without a client cert: the API server tries
   * client certs first, so sending one would hide the token's identity.
   */
  clientCert: string;
  clientKey: string;
  plan: FaultPlan;
  random: () => number;
  rewrite?: ObjectRewrite;
}

export interface FaultProxy {
  port: number;
  counts(): FaultCounts;
  /** from now on, refuse at this rate (0 lets everything through) */
  setRate(rate: number): void;
  /** from now on, alter objects so (undefined: pass them as they are) */
  setRewrite(rewrite: ObjectRewrite | undefined): void;
  close(): Promise<void>;
}

export async function startFaultProxy(o: FaultProxyOptions): Promise<FaultProxy> {
  const ca = fs.readFileSync(o.ca);
  const withCert = new https.Agent({ keepAlive: true, ca, cert: fs.readFileSync(o.clientCert), key: fs.readFileSync(o.clientKey) });
  const withToken = new https.Agent({ keepAlive: true, ca });
  const plan = { ...o.plan };
  let rewrite = o.rewrite;
  const counts: FaultCounts = { requests: 0, faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>, watchesCut: 0 };

  const pass = (req: IncomingMessage, res: ServerResponse, watch: boolean) => {
    const up = https.request({
      host: '127.0.0.1', port: o.targetPort, method: req.method, path: req.url,
      headers: { ...req.headers, host: `127.0.0.1:${o.targetPort}` },
      agent: req.headers.authorization ? withToken : withCert,
    }, (upRes) => {
      const path = (req.url ?? '').split('?')[0];
      // the rewrite as it is when each line or body goes out: a watch open before setRewrite follows it
      const line = (l: string) => (rewrite ? rewriteWatchLine(l, path, rewrite) : l);
      const body = (b: string) => (rewrite ? rewriteBody(b, path, rewrite) : b);
      if (rewrite && req.method === 'GET' && upRes.statusCode === 200 && /json/.test(upRes.headers['content-type'] ?? '')) {
        // the body changes length: it goes out chunked
        const { 'content-length': _length, ...headers } = upRes.headers;
        res.writeHead(200, headers);
        upRes.setEncoding('utf8');
        let buf = '';
        upRes.on('data', (chunk: string) => {
          buf += chunk;
          if (!watch) return;
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            res.write(`${line(buf.slice(0, nl))}\n`);
            buf = buf.slice(nl + 1);
          }
        });
        upRes.on('end', () => res.end(watch ? line(buf) : body(buf)));
      } else {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      }
      if (watch && upRes.statusCode === 200 && plan.watchCutMaxMs > 0) {
        const after = plan.watchCutMinMs + o.random() * (plan.watchCutMaxMs - plan.watchCutMinMs);
        const t = setTimeout(() => {
          counts.watchesCut++;
          upRes.destroy();
          res.destroy();
        }, after);
        res.once('close', () => clearTimeout(t));
      }
    });
    up.on('error', () => res.destroy());
    // the caller went away before the answer was through: so does the request upstream
    res.once('close', () => { if (!res.writableFinished) up.destroy(); });
    req.pipe(up);
  };

  const server = https.createServer({ cert: fs.readFileSync(o.servingCert), key: fs.readFileSync(o.servingKey) }, (req, res) => {
    // a caller's broken connection is the caller's business, never the proxy's crash
    req.on('error', () => undefined);
    counts.requests++;
    const fault = chooseFault(req.method ?? 'GET', plan, o.random);
    const watch = isWatchRequest(req.url ?? '');
    if (!fault) return pass(req, res, watch);
    counts.faults[fault]++;
    if (fault === 'dropped') {
      req.socket.destroy();
      return;
    }
    const r = faultResponse(fault);
    // the request body is read to its end first, so the connection stays usable for the next one
    req.resume();
    req.once('end', () => {
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(JSON.stringify(r.body));
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    counts: () => structuredClone(counts),
    setRate: (rate) => { plan.rate = rate; },
    setRewrite: (r) => { rewrite = r; },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      withCert.destroy();
      withToken.destroy();
    },
  };
}

/**
 * A kubeconfig like `source` whose server is the proxy: the same CA (the proxy serves with the
 * API server's cert) and the same user.
 */
export function proxiedKubeconfig(source: string, proxyPort: number): string {
  const text = fs.readFileSync(source, 'utf8');
  const out = text.replace(/server: https:\/\/127\.0\.0\.1:\d+/g, `server: https://127.0.0.1:${proxyPort}`);
  if (out === text) throw new Error(`${source} names no https://127.0.0.1 server to route through the proxy`);
  return out;
}
