import { createHash } from 'node:crypto';

/*
 * Who a request to the secure port is and whether it may have what it asks for, decided as
 * kube-controller-manager's delegated authentication and authorization decide it (measured against
 * upstream v1.35.4 in test/e2e/secure-port.test.ts):
 *
 * - Authentication tries a verified client certificate (when a client CA is known), then a bearer
 *   token through TokenReview (when a cluster to ask is known). The first that succeeds names the
 *   user, who also gets the group system:authenticated. A certificate that does not verify, or a
 *   bearer token the cluster does not accept, fails the request with 401 even on /healthz: the
 *   always-allowed paths skip authorization only. A request that offers neither is anonymous
 *   (system:anonymous, group system:unauthenticated); so is every request when there is nothing to
 *   authenticate with, a token included.
 * - Authorization allows the group system:masters and the --authorization-always-allow-paths
 *   without asking; then a SubjectAccessReview for the path and the lowercased HTTP method decides,
 *   when a cluster to ask is known. Anything not allowed is 403, named as upstream names it.
 *
 * Both answers from the cluster are cached: tokens for --authentication-token-webhook-cache-ttl
 * (accepted and rejected alike), reviews for the authorized and unauthorized TTLs. A failed call is
 * never cached: the next request asks again.
 */

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const ANONYMOUS: Readonly<UserInfo> = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const AUTHENTICATED_GROUP = 'system:authenticated';
/** upstream's default --authorization-always-allow-paths */
export const DEFAULT_ALWAYS_ALLOW_PATHS: readonly string[] = ['/healthz', '/readyz', '/livez'];
/** upstream's built-in AlwaysAllowGroups: kube-apiserver grants this group everything anyway */
const PRIVILEGED_GROUPS = ['system:masters'];

/** What the cluster said of a token (TokenReview status). */
export type TokenReviewAnswer = { authenticated: true; user: UserInfo } | { authenticated: false; error?: string };
/** Asks the cluster about a token; throws when it could not be asked. */
export type TokenReviewFn = (token: string) => Promise<TokenReviewAnswer>;

export interface AccessAttributes {
  user: UserInfo;
  /** the request's HTTP method, lowercased, as upstream's non-resource verb */
  verb: string;
  path: string;
}
/** What the cluster said of a request (SubjectAccessReview status). */
export interface AccessReviewAnswer {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
}
/** Asks the cluster about a request; throws when it could not be asked. */
export type AccessReviewFn = (attrs: AccessAttributes) => Promise<AccessReviewAnswer>;

/** The client certificate a TLS handshake brought, as the handshake judged it. */
export interface PeerCertificate {
  /** chains to the client CA (and allows client authentication) */
  verified: boolean;
  error?: string;
  commonName: string;
  organizations: string[];
}

export interface RequestCredentials {
  /** the Authorization header */
  authorization?: string;
  peerCertificate?: PeerCertificate;
}

export type AuthnResult = { ok: true; user: UserInfo; via: 'anonymous' | 'client-certificate' | 'token' } | { ok: false; error: string };

export type AuthzResult = { allowed: true } | { allowed: false; reason: string } | { allowed: false; error: string };

/** A small TTL cache with one lookup in flight per key, as upstream's caching authenticators keep. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(private readonly now: () => number = Date.now, private readonly maxEntries = 10_000) {}

  /** The cached value, or load()'s; ttlOf says how long a loaded value is kept (0: not at all). A load that throws is not kept. */
  async get(key: string, load: () => Promise<V>, ttlOf: (v: V) => number): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > this.now()) return hit.value;
    if (hit) this.entries.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const p = load().then((value) => {
      const ttl = ttlOf(value);
      if (ttl > 0) {
        // bounded: a flood of distinct garbage tokens must not grow memory without end
        if (this.entries.size >= this.maxEntries) this.sweep();
        this.entries.set(key, { value, expires: this.now() + ttl });
      }
      return value;
    });
    this.inFlight.set(key, p);
    try {
      return await p;
    } finally {
      this.inFlight.delete(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
    // still full of live entries: drop the oldest half (a Map iterates in insertion order)
    if (this.entries.size >= this.maxEntries) {
      let drop = Math.ceil(this.entries.size / 2);
      for (const k of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(k);
      }
    }
  }
}

/** The bearer token of an Authorization header, read as upstream reads it; undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const parts = (header ?? '').trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  // upstream splits into at most three parts and takes the second: "Bearer a b" is token "a"
  return parts[1] === '' ? undefined : parts[1];
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.groups.includes('system:unauthenticated') || user.name === ANONYMOUS.name) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

export interface AuthenticatorConfig {
  /** absent: no client CA is known, client certificates are not asked for */
  clientCertificates: boolean;
  /** absent: no cluster to ask, tokens are ignored */
  tokenReview?: TokenReviewFn;
  cacheTtlMs: number;
  now?: () => number;
}

export type Authenticator = (c: RequestCredentials) => Promise<AuthnResult>;

export function createAuthenticator(cfg: AuthenticatorConfig): Authenticator {
  const cache = new TtlCache<TokenReviewAnswer>(cfg.now);
  const review = cfg.tokenReview;
  return async (c) => {
    // nothing to authenticate with: upstream's authenticator is anonymous alone, whatever is sent
    if (!cfg.clientCertificates && !review) return { ok: true, user: ANONYMOUS, via: 'anonymous' };
    const errors: string[] = [];
    const cert = cfg.clientCertificates ? c.peerCertificate : undefined;
    if (cert) {
      if (cert.verified) return { ok: true, user: withAuthenticatedGroup({ name: cert.commonName, groups: cert.organizations }), via: 'client-certificate' };
      errors.push(`client certificate: ${cert.error ?? 'not verified'}`);
    }
    const token = review ? bearerToken(c.authorization) : undefined;
    if (review && token !== undefined) {
      // the token itself is a credential: keyed by its hash, never kept in memory longer than the call
      const key = createHash('sha256').update(token).digest('hex');
      try {
        // an answer with an error is not cached, as upstream keeps only error-free answers
        const a = await cache.get(key, () => review(token), (v) => (v.authenticated || !v.error ? cfg.cacheTtlMs : 0));
        if (a.authenticated) return { ok: true, user: withAuthenticatedGroup(a.user), via: 'token' };
        // the cluster's own words when it gave any (for a bad token they are already "invalid bearer token")
        errors.push(a.error ?? 'invalid bearer token');
      } catch (e) {
        errors.push(`token review failed: ${(e as Error).message}`);
      }
    }
    if (errors.length) return { ok: false, error: errors.join('; ') };
    return { ok: true, user: ANONYMOUS, via: 'anonymous' };
  };
}

/**
 * A matcher for --authorization-always-allow-paths: exact paths, or prefixes ending in `*`; the
 * leading slash is optional and a bare `/` matches the root. Throws on a `*` anywhere but last.
 */
export function alwaysAllowMatcher(paths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of paths) {
    const p = raw.replace(/^\//, '');
    if (p.slice(0, -1).includes('*')) throw new Error(`only trailing * allowed in ${JSON.stringify(p)}`);
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) => {
    const p = path.replace(/^\//, '');
    return exact.has(p) || prefixes.some((x) => p.startsWith(x));
  };
}

export interface AuthorizerConfig {
  alwaysAllowPaths: readonly string[];
  /** absent: no cluster to ask, only the always-allowed paths and groups pass */
  accessReview?: AccessReviewFn;
  allowCacheTtlMs: number;
  denyCacheTtlMs: number;
  now?: () => number;
}

export type Authorizer = (a: AccessAttributes) => Promise<AuthzResult>;

/** upstream's 403 text: `User "<name>" cannot <verb> path "<path>"`, with the reviewer's reason after a colon */
export function forbiddenMessage(a: AccessAttributes, reason: string): string {
  const msg = `User ${JSON.stringify(a.user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  return reason ? `${msg}: ${reason}` : msg;
}

export function createAuthorizer(cfg: AuthorizerConfig): Authorizer {
  const allowedPath = alwaysAllowMatcher(cfg.alwaysAllowPaths);
  const cache = new TtlCache<AccessReviewAnswer>(cfg.now);
  const review = cfg.accessReview;
  return async (a) => {
    if (a.user.groups.some((g) => PRIVILEGED_GROUPS.includes(g))) return { allowed: true };
    if (allowedPath(a.path)) return { allowed: true };
    if (!review) return { allowed: false, reason: forbiddenMessage(a, '') };
    const u = a.user;
    const key = JSON.stringify([u.name, u.uid ?? '', u.groups, u.extra ?? {}, a.verb, a.path]);
    let answer: AccessReviewAnswer;
    try {
      answer = await cache.get(key, () => review(a), (v) => (v.allowed ? cfg.allowCacheTtlMs : cfg.denyCacheTtlMs));
    } catch (e) {
      return { allowed: false, error: `subject access review failed: ${(e as Error).message}` };
    }
    if (answer.allowed) return { allowed: true };
    return { allowed: false, reason: forbiddenMessage(a, answer.reason ?? '') };
  };
}
