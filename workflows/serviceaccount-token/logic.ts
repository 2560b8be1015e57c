/**
 * Pure decisions of the serviceaccount-token controller, modelled on kube-controller-manager v1.35's
 * tokens controller (syncSecret, syncServiceAccount, secretUpdateNeeded). Runs inside workflow code
 * and inside the watch's routes: no I/O, no clocks, no Node built-ins.
 */
import type { ServiceAccountLookup, TokenAction, TokenFill, TokenObservation, TokenSecretView } from './types';

/** What a Secret lacks, as upstream judges it: an empty token or namespace, or a ca.crt that is not the root CA. */
export function neededFill(s: { hasToken: boolean; hasNamespace: boolean; caCurrent: boolean }): TokenFill {
  return { token: !s.hasToken, ca: !s.caCurrent, namespace: !s.hasNamespace };
}

export function needsFill(f: TokenFill): boolean {
  return f.token || f.ca || f.namespace;
}

/** A Secret's ca.crt is current when no root CA is configured, or when it holds exactly the root CA's bytes. */
export function caCurrentFor(secretCaSha256: string | undefined, rootCaSha256: string | undefined): boolean {
  return rootCaSha256 === undefined || secretCaSha256 === rootCaSha256;
}

/**
 * Whether a token Secret belongs to an account: its name annotation names it, and its UID
 * annotation, when set, carries the account's UID (upstream's IsServiceAccountToken).
 */
export function belongsTo(secret: { serviceAccountName: string; serviceAccountUid?: string }, account: { name: string; uid: string }): boolean {
  return secret.serviceAccountName === account.name && (!secret.serviceAccountUid || secret.serviceAccountUid === account.uid);
}

/**
 * Whether the watch's view of a Secret is worth waking its workflow: it lacks data, or, once the
 * ServiceAccount cache is complete (`account` not 'unsynced'), the account it names is not there
 * (by name and UID). The workflow re-checks everything against the API before writing.
 */
export function secretNeedsSync(
  view: TokenSecretView,
  rootCaSha256: string | undefined,
  account: { uid: string } | 'missing' | 'unsynced',
): boolean {
  if (!view.serviceAccountName) return false; // upstream drops such a key; the API never admits one
  const fill = neededFill({ hasToken: view.hasToken, hasNamespace: view.hasNamespace, caCurrent: caCurrentFor(view.caSha256, rootCaSha256) });
  if (needsFill(fill)) return true;
  if (account === 'unsynced') return false;
  return account === 'missing' || !!(view.serviceAccountUid && view.serviceAccountUid !== account.uid);
}

function describeFill(f: TokenFill): string {
  const parts: string[] = [];
  if (f.token) parts.push('a token');
  if (f.ca) parts.push('the root CA');
  if (f.namespace) parts.push('its namespace');
  return parts.join(', ');
}

function gone(account: ServiceAccountLookup, secretName: string): TokenAction {
  if (account.state === 'exists' && account.referencesSecret) {
    return {
      type: 'removeReference',
      serviceAccount: { name: account.name, uid: account.uid },
      reason: `token Secret ${secretName} is gone: remove it from ServiceAccount ${account.name}'s secrets`,
    };
  }
  return { type: 'finish', reason: `token Secret ${secretName} is gone` };
}

/**
 * The one thing to do about a token Secret, from a fresh read of it and of the ServiceAccount it
 * names (live, by name, checked against its UID annotation):
 * - the Secret is gone: take it out of the account's `secrets` list if it is still there, then end;
 * - it names no account: nothing (upstream ignores such a Secret);
 * - the account does not exist (or has another UID): delete the Secret, unless it is already going;
 * - otherwise fill what is missing: token, ca.crt, namespace, plus both account annotations.
 */
export function decideTokenSecret(obs: TokenObservation, secretName: string): TokenAction {
  const s = obs.secret;
  if (!s) return gone(obs.serviceAccount, secretName);
  const who = `token Secret ${secretName}`;
  if (!s.serviceAccountName) return { type: 'nothing', reason: `${who} names no ServiceAccount` };
  const account = obs.serviceAccount;
  if (account.state !== 'exists') {
    const missing = s.serviceAccountUid
      ? `ServiceAccount ${s.serviceAccountName} with UID ${s.serviceAccountUid} does not exist`
      : `ServiceAccount ${s.serviceAccountName} does not exist`;
    if (s.deleting) return { type: 'nothing', reason: `${missing}; ${who} is already being deleted` };
    return { type: 'delete', reason: `${missing}: delete ${who}` };
  }
  const fill = neededFill(s);
  if (!needsFill(fill)) return { type: 'nothing', reason: `${who} is complete` };
  return {
    type: 'fill',
    fill,
    serviceAccount: { name: account.name, uid: account.uid },
    resourceVersion: s.resourceVersion,
    reason: `${who} lacks ${describeFill(fill)} for ServiceAccount ${account.name}`,
  };
}
