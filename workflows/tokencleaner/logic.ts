/**
 * When a bootstrap token Secret is due for deletion, as upstream's token cleaner decides: only
 * Secrets of type bootstrap.kubernetes.io/token in kube-system; one without an `expiration` (or
 * with an empty one) never expires; one whose expiration is not an RFC 3339 time is treated as
 * expired; otherwise it expires once the clock reaches that time.
 */

export const CONTROLLER = 'tokencleaner';
export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
/** upstream's DefaultTokenCleanerOptions: the namespace it watches */
export const TOKEN_NAMESPACE = 'kube-system';
export const EXPIRATION_KEY = 'expiration';

/**
 * What the cleaner carries of a bootstrap token Secret: never its token, only whom it is and when
 * it expires (a time is no credential).
 */
export interface BootstrapTokenView {
  namespace: string;
  name: string;
  uid: string;
  type: string;
  /** the decoded `expiration` value; absent when the key is missing or empty */
  expiration?: string;
}

/** The Secrets upstream's filter lets through: the type and the namespace. */
export function isCleanerSecret(namespace: string, type: string | undefined): boolean {
  return namespace === TOKEN_NAMESPACE && type === BOOTSTRAP_TOKEN_TYPE;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Go's time.Parse(time.RFC3339, s), in milliseconds since the epoch; undefined where Go fails:
 * another layout, a field out of range (month 13, 31 April, hour 24), an offset beyond ±23:59.
 */
export function parseRfc3339(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  if (m[8] !== 'Z' && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const frac = m[7] ? Number(`0${m[7]}`) * 1000 : 0;
  const offsetMin = m[8] === 'Z' ? 0 : (m[8][0] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  // setUTCFullYear, not Date.UTC: the latter maps years 0-99 to 1900-1999, Go does not
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime() + Math.floor(frac) - offsetMin * 60_000;
}

export type TokenDecision =
  | { kind: 'keep'; why: string }
  | { kind: 'wait'; ms: number; expiresAt: number }
  | { kind: 'delete'; why: 'expired' | 'unparseable expiration'; expiresAt?: number };

/** Upstream's evalSecret with GetExpiration: delete once expired (or unreadable), else wait for it. */
export function decideToken(token: BootstrapTokenView, nowMs: number): TokenDecision {
  if (!isCleanerSecret(token.namespace, token.type)) return { kind: 'keep', why: 'not a bootstrap token in kube-system' };
  if (!token.expiration) return { kind: 'keep', why: 'has no expiration' };
  const at = parseRfc3339(token.expiration);
  if (at === undefined) return { kind: 'delete', why: 'unparseable expiration' };
  const remaining = at - nowMs;
  if (remaining <= 0) return { kind: 'delete', why: 'expired', expiresAt: at };
  return { kind: 'wait', ms: remaining, expiresAt: at };
}
