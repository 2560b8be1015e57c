import { createHash } from 'node:crypto';
import { belongsTo, secretNeedsSync } from '../../workflows/serviceaccount-token/logic';
import { CA_KEY, NAMESPACE_KEY, SA_NAME_ANNOTATION, SA_UID_ANNOTATION, TOKEN_KEY, type TokenSecretView } from '../../workflows/serviceaccount-token/types';
import {
  TOKEN_CONTROLLER,
  mergeTokenSecretEvents,
  tokenSecretWorkflowId,
  type TokenSecretEvent,
  type TokenSecretWorkflowInput,
} from '../../workflows/serviceaccount-token/workflow';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { tokenSecretWorkflow } from '../../workflows/serviceaccount-token/workflow';

export const SERVICE_ACCOUNTS_PATH = '/api/v1/serviceaccounts';
/** Only token Secrets: the rest of the cluster's Secrets never reach this process. */
export const TOKEN_SECRETS_PATH = '/api/v1/secrets?fieldSelector=type%3Dkubernetes.io%2Fservice-account-token';

export interface TokenRouteOptions {
  /** hex SHA-256 of the CA tokens carry (rootCaSha256() of the controller's options); none: no CA is configured */
  rootCaSha256?: string;
}

interface AccountEntry {
  uid: string;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** The watch's view of a token Secret. Its data is judged here and then let go: only booleans and a hash of the public CA stay. */
function secretView(o: SecretObject): TokenSecretView {
  const m = o.metadata ?? {};
  const data = o.data ?? {};
  const ca = data[CA_KEY];
  const uidAnnotation = m.annotations?.[SA_UID_ANNOTATION];
  const view: TokenSecretView = {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    serviceAccountName: m.annotations?.[SA_NAME_ANNOTATION] ?? '',
    ...(uidAnnotation ? { serviceAccountUid: uidAnnotation } : {}),
    hasToken: (data[TOKEN_KEY] ?? '').length > 0,
    hasNamespace: (data[NAMESPACE_KEY] ?? '').length > 0,
    ...(ca ? { caSha256: createHash('sha256').update(Buffer.from(ca, 'base64')).digest('hex') } : {}),
    ...(m.deletionTimestamp ? { deleting: true } : {}),
  };
  // the reflector's copy is ours alone (no other family watches this path): let the token go now
  delete o.data;
  return view;
}

/**
 * Routes of the serviceaccount-token controller, as upstream's handlers and sync functions pick
 * their work: a token Secret that lacks a token, namespace or the current CA, or whose
 * ServiceAccount is not there (by name and UID, once the accounts are listed), wakes its workflow;
 * a deleted Secret wakes it to clean up and end; a deleted ServiceAccount wakes every Secret that
 * belongs to it. Complete Secrets of existing accounts cost nothing.
 */
export function tokenRoutes(input: InformerInput, signaller: Signaller, options: TokenRouteOptions = {}): RouteFamily | undefined {
  if (!input.controllers.includes(TOKEN_CONTROLLER)) return undefined;
  const accounts = new Map<string, AccountEntry>(); // ns/name
  const secrets = new Map<string, TokenSecretView>(); // uid
  let accountsListed = false;

  const queue = (s: TokenSecretView, event: TokenSecretEvent) => {
    const args: TokenSecretWorkflowInput = {
      namespace: s.namespace, name: s.name, uid: s.uid, tuning: input.tuning,
      ...(s.serviceAccountName ? { serviceAccountName: s.serviceAccountName } : {}),
      ...(s.serviceAccountUid ? { serviceAccountUid: s.serviceAccountUid } : {}),
    };
    signaller.queue({
      controller: TOKEN_CONTROLLER, workflow: tokenSecretWorkflow, kind: 'Secret',
      namespace: s.namespace, name: s.name, uid: s.uid, args, workflowId: tokenSecretWorkflowId(s.namespace, s.name),
    }, event, mergeTokenSecretEvents);
  };

  const accountFor = (s: TokenSecretView): AccountEntry | 'missing' | 'unsynced' =>
    accountsListed ? accounts.get(keyOf(s.namespace, s.serviceAccountName)) ?? 'missing' : 'unsynced';

  const evaluate = (s: TokenSecretView) => {
    if (secretNeedsSync(s, options.rootCaSha256, accountFor(s))) queue(s, { secret: s });
  };

  const upsertSecret = (s: TokenSecretView) => {
    secrets.set(s.uid, s);
    evaluate(s);
  };

  const removeSecret = (uid: string, last?: TokenSecretView) => {
    const s = secrets.get(uid) ?? last;
    secrets.delete(uid);
    if (s) queue(s, { secretDeletedUid: uid });
  };

  const accountDeleted = (namespace: string, name: string, uid: string) => {
    accounts.delete(keyOf(namespace, name));
    for (const s of secrets.values()) {
      if (s.namespace === namespace && belongsTo(s, { name, uid })) queue(s, { serviceAccountDeleted: { name, uid } });
    }
  };

  const upsertAccount = (o: KubeObject) => {
    const m = o.metadata ?? {};
    const key = keyOf(m.namespace ?? '', m.name ?? '');
    const before = accounts.get(key);
    // a missed delete: the name now holds another account
    if (before && before.uid !== m.uid) accountDeleted(m.namespace ?? '', m.name ?? '', before.uid);
    accounts.set(key, { uid: m.uid ?? '' });
  };

  const accountHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        upsertAccount(o);
        seen.add(keyOf(o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
      }
      for (const [key, a] of [...accounts]) {
        if (seen.has(key)) continue;
        const [namespace, name] = key.split('/');
        accountDeleted(namespace, name, a.uid);
      }
      if (!accountsListed) {
        // until now a Secret's account could not be judged missing; judge them all once
        accountsListed = true;
        for (const s of secrets.values()) evaluate(s);
      }
    },
    event(type, o) {
      const m = o.metadata ?? {};
      if (type === 'DELETED') accountDeleted(m.namespace ?? '', m.name ?? '', m.uid ?? '');
      else upsertAccount(o);
    },
  };

  const secretHandler: Handler = {
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const s = secretView(o as SecretObject);
        seen.add(s.uid);
        upsertSecret(s);
      }
      for (const uid of [...secrets.keys()]) if (!seen.has(uid)) removeSecret(uid);
    },
    event(type, o) {
      const s = secretView(o as SecretObject);
      if (type === 'DELETED') removeSecret(s.uid, s);
      else upsertSecret(s);
    },
  };

  return {
    handlers: new Map<string, Handler>([
      [SERVICE_ACCOUNTS_PATH, accountHandler],
      [TOKEN_SECRETS_PATH, secretHandler],
    ]),
    // an account's name and UID are all this controller reads of it
    metadataOnly: new Set([SERVICE_ACCOUNTS_PATH]),
    sizes: () => ({ tokenSecrets: secrets.size, serviceAccounts: accounts.size }),
  };
}
