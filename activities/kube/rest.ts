import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import * as tls from 'node:tls';
import { onAbort } from './abort';
import { attemptUserAgent, fenceWrite, leaseRecheck } from './fence';
import type { ClusterAccess } from './kubeconfig';
import { lineSplitter } from './lines';
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
  /**
   * the body's JSON text as is, instead of `body`: for content whose bytes the server keeps (a
   * ControllerRevision's data is compared byte for byte)
   */
  rawBody?: string;
  contentType?: string;
  timeoutMs?: number;
  /** e.g. metadata-only lists: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 */
  accept?: string;
  /**
   * repeating the request has the effect of sending it once, so a transient failure is retried here
   * as a GET's is (a delete with a UID precondition; a create under a deterministic name whose
   * caller takes a 409 for "made by an earlier try")
   */
  idempotent?: boolean;
}

/** Retries inside one call, after the first try: kept short, the activity's own retries come next. */
export const CALL_RETRIES = 4;
/** the longest Retry-After honoured inside a call; a longer one is left to the activity's retry */
const MAX_RETRY_AFTER_S = 5;

/**
 * Whether a failed call is tried again inside `request`, and after how long (undefined: no).
 * client-go's rest client does the first part: a throttled answer (429, or a 5xx with Retry-After)
 * is sent again after the server's Retry-After, whatever the verb, since the server did nothing.
 * The second is ours: a read, or a write its caller marks idempotent, is tried again on any
 * transient failure (no answer, 429, 5xx) after 100 ms doubling. Our activities make many calls
 * and fail whole, so without it a batch of n calls would need every one to succeed in one try
 * (at a 1% failure rate, a 200-call batch would fail 87% of its tries).
 */
export function callRetryDelayMs(method: string, idempotent: boolean, err: ApiError, retry: number): number | undefined {
  if (retry >= CALL_RETRIES || !err.transient) return undefined;
  if (err.retryAfterSeconds !== undefined && err.status !== 0) {
    return err.retryAfterSeconds <= MAX_RETRY_AFTER_S ? Math.max(0, err.retryAfterSeconds) * 1000 : undefined;
  }
  return method === 'GET' || idempotent ? 100 * 2 ** retry : undefined;
}

/** What a refusal (403) said, and which client it refused: the observer tells the authorizer's from admission's. */
export interface ApiRefusal {
  userAgent: string;
  message: string;
}

export type ApiObserver = (verb: string, path: string, status: number, refusal?: ApiRefusal) => void;

/**
 * Our program name: the first word of every User-Agent we send, and so (see
 * fieldManagerFromUserAgent) the manager of every field we write, as `kube-controller-manager`
 * is upstream's.
 */
export const PROGRAM = 'temporal-kcm';

/** Go's GOARCH for Node's process.arch, so our User-Agent reads like a Go client's (amd64, not x64). */
export function goArch(arch: string = process.arch, endianness: 'BE' | 'LE' = os.endianness()): string {
  switch (arch) {
    case 'x64': return 'amd64';
    case 'ia32': return '386';
    case 'mipsel': return 'mipsle';
    case 'ppc64': return endianness === 'LE' ? 'ppc64le' : 'ppc64';
    default: return arch; // arm, arm64, s390x, riscv64, loong64, mips, ppc: spelled alike
  }
}

/** Go's GOOS for Node's process.platform. */
export function goOs(platform: string = process.platform): string {
  return platform === 'win32' ? 'windows' : platform === 'sunos' ? 'solaris' : platform;
}

/** client-go's adjustVersion: the release without its pre-release part, `unknown` when there is none. */
function adjustVersion(v: string | undefined): string {
  return v ? v.split('-')[0] : 'unknown';
}

let packageVersion: string | undefined;
/** This package's version from its package.json, found upward from here (source and dist/ alike). */
export function ownVersion(): string {
  if (packageVersion !== undefined) return packageVersion;
  packageVersion = '';
  for (let dir = __dirname; ; dir = nodePath.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(nodePath.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PROGRAM) { packageVersion = pkg.version ?? ''; break; }
    } catch { /* none here */ }
    if (nodePath.dirname(dir) === dir) break;
  }
  return packageVersion;
}

export interface UserAgentInfo {
  version?: string;
  platform?: string;
  arch?: string;
}

/**
 * The User-Agent of a client with no controller of its own, shaped like client-go's
 * rest.DefaultKubernetesUserAgent (`kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/<commit>`):
 * `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm`.
 */
export function defaultUserAgent(info: UserAgentInfo = {}): string {
  const version = adjustVersion(info.version ?? ownVersion());
  return `${PROGRAM}/${version} (${goOs(info.platform)}/${goArch(info.arch)}) ${PROGRAM}`;
}

/**
 * A controller's User-Agent, as client-go's rest.AddUserAgent builds it for kube-controller-manager's
 * controller clients: the default one, `/`, and the client's name (the controller's ServiceAccount
 * name, or with --use-service-account-credentials that account's user name), e.g.
 * `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/replicaset-controller`.
 */
export function userAgentFor(name?: string, info: UserAgentInfo = {}): string {
  const base = defaultUserAgent(info);
  return name ? `${base}/${name}` : base;
}

/** The client's name a User-Agent of userAgentFor ends with (`<program>` for the default one). */
export function clientOfUserAgent(userAgent: string): string {
  const product = userAgent.slice(userAgent.lastIndexOf(') ') + 2);
  const slash = product.indexOf('/');
  return slash >= 0 ? product.slice(slash + 1) : product;
}

/**
 * The field manager the API server records for a write that names none: the User-Agent up to its
 * first `/`, unprintable characters dropped, at most 128 bytes (apiserver's prefixFromUserAgent in
 * endpoints/handlers/create.go; an empty result becomes `unknown`). For every User-Agent above
 * that is `temporal-kcm`, so we leave fieldManager out, as upstream's controllers do.
 */
export function fieldManagerFromUserAgent(userAgent: string): string {
  let out = '';
  for (const ch of userAgent.split('/')[0]) {
    if (/[\p{C}\p{Zl}\p{Zp}]/u.test(ch) || (/\p{Zs}/u.test(ch) && ch !== ' ')) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out || 'unknown';
}

/**
 * The path a request goes to. Writes carry no fieldManager, so the API server takes it from the
 * User-Agent (`temporal-kcm`), except a server-side apply, which must name one: one that names none
 * gets ours. A fieldManager already in the path (e.g. the clusterrole aggregation controller's
 * own, as upstream) is kept.
 */
export function requestPath(method: string, path: string, contentType?: string): string {
  if (method !== 'PATCH' || contentType !== 'application/apply-patch+yaml') return path;
  if (/[?&]fieldManager=/.test(path)) return path;
  return `${path}${path.includes('?') ? '&' : '?'}fieldManager=${PROGRAM}`;
}

/** The headers of one request: who we are, what we accept, and the body's type and length. */
export function requestHeaders(userAgent: string, ro: { accept?: string; contentType?: string } = {}, payload?: string): Record<string, string> {
  const headers: Record<string, string> = { 'User-Agent': userAgent, Accept: ro.accept ?? 'application/json' };
  if (payload !== undefined) {
    headers['Content-Type'] = ro.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return headers;
}

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
  /** the keep-alive agent, shared by clients that differ only in User-Agent */
  private transport: { agent?: https.Agent } = {};

  constructor(
    private readonly kc: ClusterAccess,
    private readonly limiter: TokenBucket,
    private readonly observe: ApiObserver = () => undefined,
    master?: string,
    private readonly auth?: BearerAuth,
    /** sent on every request; see userAgentFor */
    readonly userAgent: string = defaultUserAgent(),
  ) {
    const cluster = kc.getCurrentCluster();
    const server = master || cluster?.server;
    if (!server) throw new Error('kubeconfig has no current cluster server (and no --master given)');
    this.server = server.replace(/\/$/, '');
  }

  private async options(method: string, path: string, headers: Record<string, string>, timeoutMs?: number): Promise<https.RequestOptions & { url: URL }> {
    const url = new URL(this.server + path);
    const opts: https.RequestOptions = { method, headers, timeout: timeoutMs };
    await this.kc.applyToHTTPSOptions(opts);
    if (url.protocol === 'https:') {
      // The kube client builds a fresh agent (a new TLS handshake) per request; one keep-alive
      // agent per identity reuses connections. With a bearer token the kubeconfig still says how
      // to trust the server, but who we are comes from the token alone: no client certificate.
      const o = opts as https.RequestOptions & https.AgentOptions;
      this.transport.agent ??= new https.Agent({
        keepAlive: true,
        ca: o.ca,
        ...(this.auth ? {} : { cert: o.cert, key: o.key, pfx: o.pfx, passphrase: o.passphrase }),
        ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
        ...(o.servername ? { servername: o.servername } : {}),
      });
      opts.agent = this.transport.agent;
      // TLS material on the request itself would override the agent's
      if (this.auth) for (const k of ['cert', 'key', 'pfx', 'passphrase'] as const) delete o[k];
    }
    if (this.auth) opts.headers = { ...opts.headers, Authorization: `Bearer ${await this.auth.token()}` };
    return { ...opts, url };
  }

  /** The same server and transport, calling as someone else, with a rate limit of its own. */
  withAuth(auth: BearerAuth, limiter: TokenBucket, userAgent: string = this.userAgent): KubeRest {
    return new KubeRest(this.kc, limiter, this.observe, this.server, auth, userAgent);
  }

  /**
   * The same credentials, metrics and connections under another User-Agent and with a rate limit
   * of its own, as upstream's SimpleControllerClientBuilder gives each controller a clientset of
   * its own (client-go builds a fresh token bucket per clientset): see userAgentFor.
   */
  withUserAgent(userAgent: string, limiter: TokenBucket): KubeRest {
    const c = new KubeRest(this.kc, limiter, this.observe, this.server, this.auth, userAgent);
    c.transport = this.transport;
    return c;
  }

  async request<T = unknown>(method: string, path: string, ro: RequestOptions = {}): Promise<RestResponse<T>> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.requestAuthenticated<T>(method, path, ro);
      } catch (e) {
        const wait = e instanceof ApiError ? callRetryDelayMs(method, ro.idempotent ?? false, e, retry) : undefined;
        if (wait === undefined) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private async requestAuthenticated<T>(method: string, path: string, ro: RequestOptions): Promise<RestResponse<T>> {
    try {
      return await this.requestOnce<T>(method, path, ro);
    } catch (e) {
      // an expired or revoked token: fetch a fresh one and try once more
      if (!(e instanceof ApiError && e.status === 401)) throw e;
      if (this.auth) this.auth.invalidate();
      else if (this.kc.refresh) await this.kc.refresh();
      else throw e;
      return this.requestOnce<T>(method, path, ro);
    }
  }

  private async requestOnce<T>(method: string, path: string, ro: RequestOptions): Promise<RestResponse<T>> {
    await this.limiter.take();
    const payload = ro.rawBody ?? (ro.body !== undefined ? JSON.stringify(ro.body) : undefined);
    const headers = requestHeaders(attemptUserAgent(this.userAgent), ro, payload);
    const { url, ...opts } = await this.options(method, requestPath(method, path, ro.contentType), headers, ro.timeoutMs ?? 30_000);
    const mod = url.protocol === 'https:' ? https : http;
    // the last moment a write can be held back: after the rate limit's wait and the token's fetch
    if (method !== 'GET') await fenceWrite(method, path);
    const recheck = method !== 'GET' ? leaseRecheck(method, path) : undefined;
    return new Promise((resolve, reject) => {
      let fenced = false;
      const req = mod.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try { body = text ? JSON.parse(text) : undefined; } catch { /* non-JSON error page */ }
          if (status >= 200 && status < 300) {
            this.observe(method, path, status);
            return resolve({ status, body: body as T });
          }
          const st = body as { reason?: string; message?: string } | undefined;
          const retryAfter = Number(res.headers['retry-after']);
          const serverMessage = st?.message ?? text.slice(0, 300);
          this.observe(method, path, status, status === 403 ? { userAgent: this.userAgent, message: serverMessage } : undefined);
          reject(new ApiError(status, st?.reason ?? 'Unknown', `${method} ${path}: ${status} ${serverMessage}`,
            Number.isFinite(retryAfter) ? retryAfter : undefined, serverMessage));
        });
        res.on('error', (e) => reject(new ApiError(0, 'ConnectionError', `${method} ${path}: ${e.message}`)));
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', (e) => {
        if (fenced) return;
        this.observe(method, path, 0);
        reject(new ApiError(0, 'ConnectionError', `${method} ${path}: ${e.message}`));
      });
      const send = () => {
        if (payload) req.write(payload);
        req.end();
      };
      if (!recheck) return send();
      // Nothing leaves before the first write, so the write waits for a connected socket and the
      // fence's last word (see leaseRecheck).
      req.once('socket', (socket) => {
        const go = () => {
          const refusal = recheck();
          if (!refusal) return send();
          fenced = true;
          req.destroy();
          reject(refusal);
        };
        if (socket.connecting) socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', go);
        else go();
      });
    });
  }

  /**
   * Open a watch and hand each event line to `onEvent` until the server closes it, `signal`
   * aborts, or no byte (bookmarks included) arrives for `idleMs`.
   */
  async watch(path: string, onEvent: (e: { type: string; object: unknown }) => void, signal: AbortSignal, idleMs = 120_000, accept?: string): Promise<void> {
    if (signal.aborted) return;
    await this.limiter.take();
    const { url, ...opts } = await this.options('GET', path, requestHeaders(this.userAgent, { accept }));
    if (signal.aborted) return;
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      // A stream can end in several ways (end, error, close, abort, handler failure), often more
      // than one at once; the first one settles the watch, so it can never hang unsettled.
      let settled = false;
      let unsubscribe: () => void = () => undefined;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        unsubscribe();
        req.destroy();
        if (err && !signal.aborted) reject(err);
        else resolve();
      };
      // No `signal` option: Node would add an abort listener per request to the one signal all
      // watches share; onAbort keeps that to one listener however many watches are open.
      const req = mod.request(url, { ...opts, timeout: idleMs }, (res) => {
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
        const feed = lineSplitter((line) => {
          try {
            onEvent(JSON.parse(line) as { type: string; object: unknown });
          } catch (e) {
            finish(e instanceof Error ? e : new Error(String(e)));
            return false;
          }
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!settled) feed(chunk);
        });
        res.on('end', () => finish());
        res.on('error', (e) => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: ${e.message}`)));
        res.on('close', () => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: stream closed`)));
      });
      req.on('timeout', () => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: no data for ${idleMs} ms`)));
      req.on('error', (e) => finish(new ApiError(0, 'ConnectionError', `WATCH ${path}: ${e.message}`)));
      unsubscribe = onAbort(signal, () => finish());
      req.end();
    });
  }
}
