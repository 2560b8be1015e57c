import type { Logger } from 'pino';
import { ApiError, BearerAuth, KubeRest, userAgentFor } from './rest';
import { RESOURCES, resourcePath } from './resources';
import { TokenBucket } from './token-bucket';

/** Where upstream keeps the controllers' own ServiceAccounts, bound to the system:controller:* roles. */
export const CONTROLLER_SA_NAMESPACE = 'kube-system';

/** Tokens are asked for this long and renewed once this share of it has passed (kubelet renews at 80% too). */
const TOKEN_SECONDS = 3600;
const RENEW_AT = 0.8;

interface Cached {
  token: string;
  renewAt: number;
}

/**
 * One controller's identity: a ServiceAccount in kube-system whose token comes from the
 * TokenRequest API with the manager's own credentials. The account is created if missing, as
 * upstream's client builder does, so a fresh cluster needs no manual setup.
 */
export class ServiceAccountToken implements BearerAuth {
  private cached?: Cached;
  private inFlight?: Promise<string>;

  constructor(
    private readonly root: KubeRest,
    readonly serviceAccount: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  token(): Promise<string> {
    if (this.cached && this.now() < this.cached.renewAt) return Promise.resolve(this.cached.token);
    // one request for a token at a time, however many API calls are waiting for it
    this.inFlight ??= this.fetch().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async fetch(): Promise<string> {
    const base = resourcePath(RESOURCES.serviceAccounts, CONTROLLER_SA_NAMESPACE);
    const own = resourcePath(RESOURCES.serviceAccounts, CONTROLLER_SA_NAMESPACE, this.serviceAccount);
    try {
      await this.root.request('GET', own);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      await this.root.request('POST', base, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: this.serviceAccount } } })
        .catch((err: unknown) => { if (!(err instanceof ApiError && err.status === 409)) throw err; });
      this.logger.info({ serviceAccount: `${CONTROLLER_SA_NAMESPACE}/${this.serviceAccount}` }, 'created controller service account');
    }
    const started = this.now();
    const r = await this.root.request<{ status: { token: string; expirationTimestamp: string } }>('POST', `${own}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS } },
    });
    const expires = Date.parse(r.body.status.expirationTimestamp);
    const lifetime = Number.isFinite(expires) ? expires - started : TOKEN_SECONDS * 1000;
    this.cached = { token: r.body.status.token, renewAt: started + lifetime * RENEW_AT };
    // never the token itself: only who it is for and when it is renewed
    this.logger.info({ serviceAccount: `${CONTROLLER_SA_NAMESPACE}/${this.serviceAccount}`, renewInS: Math.round((lifetime * RENEW_AT) / 1000) }, 'controller token issued');
    return this.cached.token;
  }
}

/**
 * The User-Agent of a controller's client, as upstream's client builders name it: the
 * ServiceAccount's user name with --use-service-account-credentials (DynamicControllerClientBuilder),
 * else the account's name (SimpleControllerClientBuilder), e.g.
 * `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/system:serviceaccount:kube-system:replicaset-controller`
 * or `temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/replicaset-controller`.
 */
export function controllerUserAgent(serviceAccount: string, useServiceAccounts: boolean): string {
  return userAgentFor(useServiceAccounts ? `system:serviceaccount:${CONTROLLER_SA_NAMESPACE}:${serviceAccount}` : serviceAccount);
}

/** How much more than --kube-api-qps and --kube-api-burst a controller's client may send (upstream raises a few). */
export interface ClientRateScale {
  qps?: number;
  burst?: number;
}

/**
 * The API client each controller's activities use, one per controller, each with a rate limit of
 * its own (--kube-api-qps and --kube-api-burst apiece: upstream builds a clientset, and so a token
 * bucket, per controller): with --use-service-account-credentials calling as that controller's
 * ServiceAccount, otherwise with the manager's own credentials. Either way each controller's
 * requests carry its own User-Agent.
 */
export function controllerClients(root: KubeRest, useServiceAccounts: boolean, qps: number, burst: number, logger: Logger) {
  const clients = new Map<string, KubeRest>();
  return (serviceAccount: string, scale: ClientRateScale = {}): KubeRest => {
    let c = clients.get(serviceAccount);
    if (!c) {
      const userAgent = controllerUserAgent(serviceAccount, useServiceAccounts);
      const limiter = new TokenBucket(qps * (scale.qps ?? 1), burst * (scale.burst ?? 1));
      c = useServiceAccounts
        ? root.withAuth(new ServiceAccountToken(root, serviceAccount, logger), limiter, userAgent)
        : root.withUserAgent(userAgent, limiter);
      clients.set(serviceAccount, c);
    }
    return c;
  };
}
