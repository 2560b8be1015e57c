import type { Logger } from 'pino';
import { ResolvedKubeconfig } from '../../activities/kube/kubeconfig';
import { ApiError, KubeRest, userAgentFor } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import type { AccessAttributes, AccessReviewAnswer, AccessReviewFn, TokenReviewAnswer, TokenReviewFn, UserInfo } from './delegated-auth';
import { readableFile } from './serving-cert';

/*
 * The secure port's calls to the cluster: TokenReview and SubjectAccessReview, and the one read of
 * kube-system/extension-apiserver-authentication for the client CA. Each with upstream's client
 * settings: its own kubeconfig (else the pod's service account, else none), 200 QPS / 400 burst
 * (these calls gate every scrape), a 10 s timeout, and retries of a failed call on upstream's
 * webhook backoff (500 ms, x1.5, five attempts).
 */

export const REVIEW_TIMEOUT_MS = 10_000;
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const AUTHENTICATION_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

/** Whether the process runs in a pod: upstream's in-cluster test, the service variables first, then the token file. */
export type InCluster = { kind: 'no' } | { kind: 'yes' } | { kind: 'broken'; error: string };

export function inClusterStatus(env: NodeJS.ProcessEnv, readable: (f: string) => boolean = readableFile): InCluster {
  if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) return { kind: 'no' };
  if (!readable(SERVICE_ACCOUNT_TOKEN)) return { kind: 'broken', error: `cannot read ${SERVICE_ACCOUNT_TOKEN}` };
  return { kind: 'yes' };
}

/**
 * The client of one delegation (`authentication` or `authorization`): the kubeconfig given, else
 * the pod's service account; undefined, as upstream, when neither is there (a pod whose token
 * cannot be read is logged). A kubeconfig given that cannot be loaded stops the manager.
 */
export async function delegationClient(which: 'authentication' | 'authorization', kubeconfig: string | undefined, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<KubeRest | undefined> {
  let kc: ResolvedKubeconfig;
  if (kubeconfig) {
    kc = await ResolvedKubeconfig.load(kubeconfig).catch((e: unknown) => {
      throw new Error(`--${which}-kubeconfig ${kubeconfig}: ${(e as Error).message}`);
    });
  } else {
    const where = inClusterStatus(env);
    if (where.kind === 'no') return undefined;
    if (where.kind === 'broken') {
      logger.warn({ delegation: which, err: where.error }, `cannot read the in-cluster configuration for delegated ${which}`);
      return undefined;
    }
    kc = await ResolvedKubeconfig.loadInCluster();
  }
  return new KubeRest(kc, new TokenBucket(200, 400), undefined, undefined, undefined, userAgentFor(`secure-port-${which}`));
}

export interface Backoff {
  durationMs: number;
  factor: number;
  jitter: number;
  steps: number;
}

/** upstream's DefaultAuthWebhookRetryBackoff */
export const WEBHOOK_BACKOFF: Backoff = { durationMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

function retriable(e: unknown): boolean {
  return !(e instanceof ApiError) || e.transient;
}

/** Runs call up to `steps` times while it fails with something worth retrying, sleeping the backoff between. */
export async function withBackoff<T>(
  call: () => Promise<T>,
  b: Backoff = WEBHOOK_BACKOFF,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  random: () => number = Math.random,
): Promise<T> {
  let delay = b.durationMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= b.steps || !retriable(e)) throw e;
      await sleep(delay * (1 + b.jitter * random()));
      delay *= b.factor;
    }
  }
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/** The TokenReview answer as the authenticator reads it. */
export function tokenReviewAnswer(status: TokenReviewStatus | undefined): TokenReviewAnswer {
  if (!status?.authenticated) return status?.error ? { authenticated: false, error: status.error } : { authenticated: false };
  const u = status.user ?? {};
  const user: UserInfo = { name: u.username ?? '', groups: u.groups ?? [] };
  if (u.uid) user.uid = u.uid;
  if (u.extra && Object.keys(u.extra).length) user.extra = u.extra;
  return { authenticated: true, user };
}

export function tokenReviewer(rest: KubeRest): TokenReviewFn {
  return async (token) => {
    const r = await withBackoff(() =>
      rest.request<{ status?: TokenReviewStatus }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        timeoutMs: REVIEW_TIMEOUT_MS,
      }),
    );
    return tokenReviewAnswer(r.body?.status);
  };
}

/** The SubjectAccessReview spec of a non-resource request. */
export function accessReviewSpec(a: AccessAttributes): Record<string, unknown> {
  return {
    user: a.user.name,
    ...(a.user.uid ? { uid: a.user.uid } : {}),
    groups: a.user.groups,
    ...(a.user.extra ? { extra: a.user.extra } : {}),
    nonResourceAttributes: { path: a.path, verb: a.verb },
  };
}

export function accessReviewer(rest: KubeRest): AccessReviewFn {
  return async (a) => {
    const r = await withBackoff(() =>
      rest.request<{ status?: AccessReviewAnswer }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: accessReviewSpec(a) },
        timeoutMs: REVIEW_TIMEOUT_MS,
      }),
    );
    const s = r.body?.status;
    return { allowed: s?.allowed === true, denied: s?.denied === true, reason: s?.reason ?? '' };
  };
}

/**
 * The cluster's client CA from kube-system/extension-apiserver-authentication (key
 * client-ca-file); undefined when the ConfigMap or the key is missing, as upstream then trusts no
 * client certificate. Throws when it cannot be read (the caller decides, by
 * --authentication-tolerate-lookup-failure, whether that stops the manager).
 */
export async function lookupClientCa(rest: KubeRest): Promise<string | undefined> {
  const { namespace, name } = AUTHENTICATION_CONFIGMAP;
  try {
    const r = await rest.request<{ data?: Record<string, string> }>('GET', `/api/v1/namespaces/${namespace}/configmaps/${name}`, { timeoutMs: REVIEW_TIMEOUT_MS });
    const ca = r.body?.data?.['client-ca-file'];
    return ca && ca.trim() ? ca : undefined;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    if (e instanceof ApiError && e.status === 403) {
      throw new Error(
        `cannot get configmap/${name} in ${namespace} (forbidden); usually fixed by ` +
          `'kubectl create rolebinding -n ${namespace} ROLEBINDING_NAME --role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'`,
      );
    }
    throw e;
  }
}
