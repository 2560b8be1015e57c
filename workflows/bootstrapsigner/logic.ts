import { parseRfc3339 } from '../tokencleaner/logic';

/**
 * What upstream's bootstrap signer decides, as pure functions: which bootstrap token Secrets may
 * sign the cluster-info ConfigMap, and how its `jws-kubeconfig-<id>` keys change. Nothing here
 * ever sees a token's secret part: the activity reduces each Secret to `TokenFacts` (whether the
 * secret is there, not what it is) and keeps the secret itself on its side.
 */

export const CONTROLLER = 'bootstrapsigner';
/** upstream's DefaultSignerOptions: the ConfigMap it signs and where the tokens live */
export const CONFIGMAP_NAMESPACE = 'kube-public';
export const CONFIGMAP_NAME = 'cluster-info';
export const TOKEN_NAMESPACE = 'kube-system';
export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
/** the ConfigMap key whose content is signed */
export const KUBECONFIG_KEY = 'kubeconfig';
export const SIGNATURE_PREFIX = 'jws-kubeconfig-';
/** the Secret data keys the signer reads */
export const TOKEN_ID_KEY = 'token-id';
export const TOKEN_SECRET_KEY = 'token-secret';
export const EXPIRATION_KEY = 'expiration';
export const USAGE_SIGNING_KEY = 'usage-bootstrap-signing';
export const SIGNER_DATA_KEYS = [TOKEN_ID_KEY, TOKEN_SECRET_KEY, EXPIRATION_KEY, USAGE_SIGNING_KEY] as const;

const SECRET_NAME = /^bootstrap-token-([a-z0-9]{6})$/;

/** The token ID a Secret's name gives (`bootstrap-token-<id>`, six of [a-z0-9]); undefined for any other name. */
export function tokenIdOfName(name: string): string | undefined {
  return SECRET_NAME.exec(name)?.[1];
}

/** The Secrets upstream's filter lets through: bootstrap tokens in kube-system. */
export function isSignerSecret(namespace: string, type: string | undefined): boolean {
  return namespace === TOKEN_NAMESPACE && type === BOOTSTRAP_TOKEN_TYPE;
}

/** The ConfigMap the signer keeps signed. */
export function isClusterInfo(namespace: string, name: string): boolean {
  return namespace === CONFIGMAP_NAMESPACE && name === CONFIGMAP_NAME;
}

/**
 * What the decision reads of one bootstrap token Secret: its name and its data values decoded
 * (missing keys as ''), except the secret part, of which only its presence is told.
 */
export interface TokenFacts {
  name: string;
  tokenId: string;
  hasSecret: boolean;
  expiration: string;
  usageSigning: string;
}

export type SigningVerdict =
  | { ok: true; tokenId: string; /** ms since the epoch, when the token has an expiration */ expiresAt?: number }
  | { ok: false; why: string };

/**
 * Upstream's validateSecretForSigning: the name must be `bootstrap-token-<id>`, `token-id` must
 * equal that id, `token-secret` must be non-empty, the token must not have expired (an expiration
 * that is not RFC 3339 counts as expired; none never expires), and `usage-bootstrap-signing` must
 * be exactly "true".
 */
export function signingVerdict(t: TokenFacts, nowMs: number): SigningVerdict {
  const nameId = tokenIdOfName(t.name);
  if (nameId === undefined) return { ok: false, why: 'name is not bootstrap-token-<id>' };
  if (!t.tokenId) return { ok: false, why: `no ${TOKEN_ID_KEY}` };
  if (t.tokenId !== nameId) return { ok: false, why: `${TOKEN_ID_KEY} does not match the name` };
  if (!t.hasSecret) return { ok: false, why: `no ${TOKEN_SECRET_KEY}` };
  let expiresAt: number | undefined;
  if (t.expiration) {
    expiresAt = parseRfc3339(t.expiration);
    if (expiresAt === undefined) return { ok: false, why: 'unparseable expiration' };
    if (expiresAt - nowMs <= 0) return { ok: false, why: 'expired' };
  }
  if (t.usageSigning !== 'true') return { ok: false, why: `${USAGE_SIGNING_KEY} is not "true"` };
  return { ok: true, tokenId: nameId, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

/** The tokens that sign, by ID (the first Secret per ID, as upstream keeps the first it lists), and the earliest expiry among them. */
export function signingTokens(tokens: readonly TokenFacts[], nowMs: number): {
  ids: string[];
  /** the Secret name signing for each id */
  byId: Map<string, string>;
  skipped: Array<{ secret: string; why: string }>;
  nextExpiryAt?: number;
} {
  const byId = new Map<string, string>();
  const skipped: Array<{ secret: string; why: string }> = [];
  let nextExpiryAt: number | undefined;
  for (const t of tokens) {
    const v = signingVerdict(t, nowMs);
    if (!v.ok) {
      skipped.push({ secret: t.name, why: v.why });
      continue;
    }
    if (byId.has(v.tokenId)) {
      skipped.push({ secret: t.name, why: 'duplicate token id' });
      continue;
    }
    byId.set(v.tokenId, t.name);
    if (v.expiresAt !== undefined && (nextExpiryAt === undefined || v.expiresAt < nextExpiryAt)) nextExpiryAt = v.expiresAt;
  }
  return { ids: [...byId.keys()].sort(), byId, skipped, ...(nextExpiryAt !== undefined ? { nextExpiryAt } : {}) };
}

export interface SignaturePlan {
  /** the ConfigMap's data to write: every key but the old signatures, then one signature per token */
  data: Record<string, string>;
  needUpdate: boolean;
  added: string[];
  changed: string[];
  removed: string[];
}

/**
 * Upstream's signConfigMap after the signatures are computed: every `jws-kubeconfig-*` key is
 * replaced by the computed set; an update is due when a signature is new or differs, or an old one
 * has no token any more. Other keys are kept as they are.
 */
export function planSignatures(data: Readonly<Record<string, string>>, signatures: ReadonlyMap<string, string>): SignaturePlan {
  const next: Record<string, string> = {};
  const old = new Map<string, string>();
  for (const [k, v] of Object.entries(data)) {
    if (k.startsWith(SIGNATURE_PREFIX)) old.set(k.slice(SIGNATURE_PREFIX.length), v);
    else next[k] = v;
  }
  const added: string[] = [];
  const changed: string[] = [];
  for (const [id, sig] of [...signatures].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const was = old.get(id);
    if (was === undefined) added.push(id);
    else if (was !== sig) changed.push(id);
    old.delete(id);
    next[SIGNATURE_PREFIX + id] = sig;
  }
  const removed = [...old.keys()].sort();
  return { data: next, needUpdate: added.length + changed.length + removed.length > 0, added, changed, removed };
}

/** How long after a signing token's expiry the workflow looks again: a margin for the clocks of two processes. */
export const EXPIRY_MARGIN_MS = 1000;

/** When to look again for the earliest signing token's expiry (undefined: no signing token expires). */
export function msUntilExpiryCheck(nextExpiryAt: number | undefined, nowMs: number): number | undefined {
  return nextExpiryAt === undefined ? undefined : Math.max(0, nextExpiryAt - nowMs) + EXPIRY_MARGIN_MS;
}
