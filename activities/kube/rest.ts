import * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { TokenBucket } from './token-bucket';

/** A failed API call, with what callers need to decide: status, reason, and the server's retry hint. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
    /** the API server's own message (what upstream puts in events and conditions) */
    readonly serverMessage: string = message,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Worth retrying: throttling, server trouble, or no answer at all (status 0). */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

export interface RestResponse<T> {
  status: number;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  /** e.g. metadata-only lists: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 */
  accept?: string;
}

export type ApiObserver = (verb: string, path: string, status: number) => void;

/**
 * A bearer token source that replaces the kubeconfig's own credentials (a controller's
 * ServiceAccount token); `invalidate` is called when the API server answers 401.
 */
export interface BearerAuth {
  token(): Promise<string>;
  invalidate(): void;
}

/**
 * A deliberately small REST client over the kubeconfig's transport settings. We use it instead of
 * the generated typed clients because the controller needs status codes, Retry-After and
 * arbitrary patches on every call, and a watch stream it controls.
 */
export class KubeRest {
  private readonly server: string;
  private agent?: https.Agent;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly limiter: TokenBucket,
    private readonly observe: ApiObserver = () => undefined,
    master?: string,
    private readonly auth?: BearerAuth,
  ) {
    const cluster = kc.getCurrentCluster();
    const server = master || cluster?.server;
    if (!server) throw new Error('kubeconfig has no current cluster server (and no --master given)');
    this.server = server.replace(/\/$/, '');
  }

  private async options(method: string, path: string, headers: Record<string, string>, timeoutMs?: number): Promise<https.RequestOptions & { url: URL }> {
    const url = new URL(this.server + path);
    const opts: https.RequestOptions = { method, headers: { Accept: 'application/json', ...headers }, timeout: timeoutMs };
    await this.kc.applyToHTTPSOptions(opts);
    if (url.protocol === 'https:') {
      // The kube client builds a fresh agent (a new TLS handshake) per request; one keep-alive
      // agent per identity reuses connections. With a bearer token the kubeconfig still says how
      // to trust the server, but who we are comes from the token alone: no client certificate.
      const o = opts as https.RequestOptions & https.AgentOptions;
      this.agent ??= new https.Agent({
        keepAlive: true,
        ca: o.ca,
        ...(this.auth ? {} : { cert: o.cert, key: o.key, pfx: o.pfx, passphrase: o.passphrase }),
        ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
        ...(o.servername ? { servername: o.servername } : {}),
      });
      opts.agent = this.agent;
      // TLS material on the request itself would override the agent's
      if (this.auth) for (const k of ['cert', 'key', 'pfx', 'passphrase'] as const) delete o[k];
    }
    if (this.auth) opts.headers = { ...opts.headers, Authorization: `Bearer ${await this.auth.token()}` };
    return { ...opts, url };
  }

  /** The same server and transport, calling as someone else, with a rate limit of its own. */
  withAuth(auth: BearerAuth, limiter: TokenBucket): KubeRest {
    return new KubeRest(this.kc, limiter, this.observe, this.server, auth);
  }

  async request<T = unknown>(method: string, path: string, ro: RequestOptions = {}): Promise<RestResponse<T>> {
    try {
      return await this.requestOnce<T>(method, path, ro);
    } catch (e) {
      // an expired or revoked token: fetch a fresh one and try once more
      if (!(this.auth && e instanceof ApiError && e.status === 401)) throw e;
      this.auth.invalidate();
      return this.requestOnce<T>(method, path, ro);
    }
  }

  private async requestOnce<T>(method: string, path: string, ro: RequestOptions): Promise<RestResponse<T>> {
    await this.limiter.take();
    const headers: Record<string, string> = {};
    let payload: string | undefined;
    if (ro.body !== undefined) {
      payload = JSON.stringify(ro.body);
      headers['Content-Type'] = ro.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    if (ro.accept) headers.Accept = ro.accept;
    const { url, ...opts } = await this.options(method, path, headers, ro.timeoutMs ?? 30_000);
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          this.observe(method, path, status);
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try { body = text ? JSON.parse(text) : undefined; } catch { /* non-JSON error page */ }
          if (status >= 200 && status < 300) return resolve({ status, body: body as T });
          const st = body as { reason?: string; message?: string } | undefined;
          const retryAfter = Number(res.headers['retry-after']);
          const serverMessage = st?.message ?? text.slice(0, 300);
          reject(new ApiError(status, st?.reason ?? 'Unknown', `${method} ${path}: ${status} ${serverMessage}`,
            Number.isFinite(retryAfter) ? retryAfter : undefined, serverMessage));
        });
        res.on('error', (e) => reject(new ApiError(0, 'ConnectionError', `${method} ${path}: ${e.message}`)));
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', (e) => { this.observe(method, path, 0); reject(new ApiError(0, 'ConnectionError', `${method} ${path}: ${e.message}`)); });
      if (payload) req.write(payload);
      req.end();
    });
  }

  /**
   * Open a watch and hand each event line to `onEvent` until the server closes it, `signal`
   * aborts, or no byte (bookmarks included) arrives for `idleMs`.
   */
  async watch(path: string, onEvent: (e: { type: string; object: unknown }) => void, signal: AbortSignal, idleMs = 120_000, accept?: string): Promise<void> {
    await this.limiter.take();
    const { url, ...opts } = await this.options('GET', path, accept ? { Accept: accept } : {});
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      // A stream can end in several ways (end, error, close, abort, handler failure), often more
      // than one at once; the first one settles the watch, so it can never hang unsettled.
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        req.destroy();
        if (err && !signal.aborted) reject(err);
        else resolve();
      };
      const req = mod.request(url, { ...opts, timeout: idleMs, signal }, (res) => {
        const status = res.statusCode ?? 0;
        this.observe('WATCH', path, status);
        if (status !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () => {
            let reason = 'Unknown';
            try { reason = (JSON.parse(text) as { reason?: string }).reason ?? reason; } catch { /* ignore */ }
            finish(new ApiError(status, reason, `WATCH ${path}: ${status} ${text.slice(0, 300)}`));
          });
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (settled) return;
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            try {
              onEvent(JSON.parse(line) as { type: string; object: unknown });
            } catch (e) {
              finish(e instanceof Error ? e : new Error(String(e)));
              return;
            }
          }
        });
        res.on('end', () => finish());
        res.on('error', (e) => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: ${e.message}`)));
        res.on('close', () => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: stream closed`)));
      });
      req.on('timeout', () => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: no data for ${idleMs} ms`)));
      req.on('error', (e) => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: ${e.message}`)));
      req.end();
    });
  }
}
