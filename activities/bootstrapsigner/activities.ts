import type { Logger } from 'pino';
import {
  BOOTSTRAP_TOKEN_TYPE,
  CONFIGMAP_NAME,
  CONFIGMAP_NAMESPACE,
  CONTROLLER,
  EXPIRATION_KEY,
  KUBECONFIG_KEY,
  TOKEN_ID_KEY,
  TOKEN_NAMESPACE,
  TOKEN_SECRET_KEY,
  USAGE_SIGNING_KEY,
  planSignatures,
  signingTokens,
  type TokenFacts,
} from '../../workflows/bootstrapsigner/logic';
import { asActivityFailure, isStatus } from '../kube/failures';
import { heartbeating } from '../kube/heartbeat';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { computeDetachedSignature } from './jws';

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> | null };
type ConfigMapObject = KubeObject & { data?: Record<string, string> | null };

/** What the workflow asks for: a signing pass, and why (for the log). */
export interface SignClusterInfoRequest {
  reason: string;
}

/**
 * What a pass did. Token IDs, Secret names and resourceVersions only: the token secrets stay in
 * the activity, and the signatures (public as they are) stay in the ConfigMap.
 */
export interface SignClusterInfoResult {
  outcome: 'updated' | 'unchanged' | 'no-configmap' | 'no-kubeconfig' | 'conflict' | 'failed';
  /** the ConfigMap's resourceVersion after the pass (the one written, or the one read) */
  resourceVersion?: string;
  /** the token IDs the ConfigMap is (or, on a conflict, was about to be) signed by */
  signed: string[];
  added: string[];
  changed: string[];
  removed: string[];
  /** bootstrap token Secrets that may not sign, and why */
  skipped: Array<{ secret: string; why: string }>;
  /** the earliest expiry among the signing tokens, RFC 3339 */
  nextExpiryAt?: string;
  message?: string;
}

export interface BootstrapSignerDeps {
  /** the controller's own client: its Roles let it list Secrets in kube-system, get and update cluster-info */
  rest: KubeRest;
  logger: Logger;
}

const PAGE = 500;
const decoded = (data: Record<string, string> | null | undefined, key: string): string => {
  const v = data?.[key];
  return v ? Buffer.from(v, 'base64').toString('utf8') : '';
};

/**
 * One bootstrap token Secret split in two: the facts the decision reads, and the secret part's
 * bytes, which only the signing below touches.
 */
export function tokenFacts(s: SecretObject): { facts: TokenFacts; secret: Buffer } {
  const raw = s.data?.[TOKEN_SECRET_KEY];
  const secret = raw ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
  return {
    facts: {
      name: s.metadata?.name ?? '',
      tokenId: decoded(s.data, TOKEN_ID_KEY),
      hasSecret: secret.length > 0,
      expiration: decoded(s.data, EXPIRATION_KEY),
      usageSigning: decoded(s.data, USAGE_SIGNING_KEY),
    },
    secret,
  };
}

/**
 * The bootstrap signer's I/O: one activity that reads cluster-info and the bootstrap token
 * Secrets from the API (the shared cache keeps only digests of Secret values), signs, and writes
 * the ConfigMap back when a signature is new, differs or is left over. Idempotent: a retry reads
 * again and finds nothing to do, or does the same write.
 */
export function createBootstrapSignerActivities(deps: BootstrapSignerDeps) {
  const key = `${CONFIGMAP_NAMESPACE}/${CONFIGMAP_NAME}`;
  const rest = heartbeating(deps.rest);
  const log = deps.logger.child({ controller: CONTROLLER, key });
  const cmPath = resourcePath(RESOURCES.configMaps, CONFIGMAP_NAMESPACE, CONFIGMAP_NAME);
  const secretsPath = `${resourcePath(RESOURCES.secrets, TOKEN_NAMESPACE)}?fieldSelector=${encodeURIComponent(`type=${BOOTSTRAP_TOKEN_TYPE}`)}`;

  async function listTokens(): Promise<SecretObject[]> {
    const out: SecretObject[] = [];
    let cont = '';
    do {
      const page = (await rest.request<{ items?: SecretObject[]; metadata?: { continue?: string } }>('GET',
        `${secretsPath}&limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)).body;
      out.push(...(page.items ?? []));
      cont = page.metadata?.continue ?? '';
    } while (cont);
    return out;
  }

  async function pass(req: SignClusterInfoRequest): Promise<SignClusterInfoResult> {
    const empty = { signed: [], added: [], changed: [], removed: [], skipped: [] };
    let cm: ConfigMapObject;
    try {
      cm = (await rest.request<ConfigMapObject>('GET', cmPath)).body;
    } catch (e) {
      if (isStatus(e, 404)) return { outcome: 'no-configmap', ...empty };
      throw e;
    }
    const resourceVersion = cm.metadata?.resourceVersion ?? '';
    const data = cm.data ?? {};
    const content = data[KUBECONFIG_KEY];
    if (content === undefined) return { outcome: 'no-kubeconfig', resourceVersion, ...empty };

    const now = Date.now();
    const tokens = (await listTokens()).filter((s) => s.metadata?.namespace === TOKEN_NAMESPACE && s.type === BOOTSTRAP_TOKEN_TYPE).map(tokenFacts);
    const chosen = signingTokens(tokens.map((t) => t.facts), now);
    const secretOf = new Map(tokens.map((t) => [t.facts.name, t.secret]));
    const signatures = new Map<string, string>();
    for (const id of chosen.ids) signatures.set(id, computeDetachedSignature(content, id, secretOf.get(chosen.byId.get(id)!)!));
    const plan = planSignatures(data, signatures);
    const summary = {
      signed: chosen.ids, added: plan.added, changed: plan.changed, removed: plan.removed, skipped: chosen.skipped,
      ...(chosen.nextExpiryAt !== undefined ? { nextExpiryAt: new Date(chosen.nextExpiryAt).toISOString() } : {}),
    };
    if (!plan.needUpdate) return { outcome: 'unchanged', resourceVersion, ...summary };
    try {
      // the whole object as read, with its resourceVersion: a change since the read is a 409
      const written = (await rest.request<ConfigMapObject>('PUT', cmPath, { body: { ...cm, apiVersion: 'v1', kind: 'ConfigMap', data: plan.data } })).body;
      return { outcome: 'updated', resourceVersion: written.metadata?.resourceVersion ?? '', ...summary };
    } catch (e) {
      // as upstream: a ConfigMap changed or deleted meanwhile is no error; its event brings the next pass
      if (isStatus(e, 409)) return { outcome: 'conflict', resourceVersion, ...summary, message: 'changed while signing' };
      if (isStatus(e, 404)) return { outcome: 'no-configmap', ...empty };
      throw e;
    }
  }

  return {
    /** Signs cluster-info with every valid signing token and drops the signatures of the others. */
    async signClusterInfo(req: SignClusterInfoRequest): Promise<SignClusterInfoResult> {
      let result: SignClusterInfoResult;
      try {
        result = await pass(req);
      } catch (e) {
        if (e instanceof ApiError && !e.transient) {
          result = { outcome: 'failed', signed: [], added: [], changed: [], removed: [], skipped: [], message: e.serverMessage };
        } else {
          throw asActivityFailure(e);
        }
      }
      const { skipped, ...rest } = result;
      const level = result.outcome === 'failed' ? 'warn' : 'info';
      log[level]({ reason: req.reason, ...rest, ...(skipped.length ? { skipped: skipped.map((s) => `${s.secret}: ${s.why}`) } : {}) },
        result.outcome === 'updated' ? 'signed cluster-info' : `cluster-info signing: ${result.outcome}`);
      return result;
    },
  };
}

export type BootstrapSignerActivities = ReturnType<typeof createBootstrapSignerActivities>;
