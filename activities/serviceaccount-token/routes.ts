import { belongsTo, secretNeedsSync } from '../../workflows/serviceaccount-token/logic';
import {
  CA_KEY,
  NAMESPACE_KEY,
  SA_NAME_ANNOTATION,
  SA_UID_ANNOTATION,
  SERVICE_ACCOUNT_TOKEN_TYPE,
  TOKEN_KEY,
  type TokenSecretView,
} from '../../workflows/serviceaccount-token/types';
import {
  TOKEN_CONTROLLER,
  mergeTokenSecretEvents,
  tokenSecretWorkflowId,
  type TokenSecretEvent,
  type TokenSecretWorkflowInput,
} from '../../workflows/serviceaccount-token/workflow';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import { METADATA, type FieldMask } from '../informers/fields';
import type { StoreIndex } from '../informers/store';
import type { RouteContext } from '../../workers/descriptor';
import { sha256Hex } from '../root-ca-cert-publisher/activities';
import { tokenSecretWorkflow } from '../../workflows/serviceaccount-token/workflow';

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

/**
 * What secretView reads of a Secret. The cache has already replaced each data value by the hex
 * SHA-256 of its bytes ('' when empty), so no token is ever held: only whether one is there.
 */
export const TOKEN_SECRET_FIELDS: FieldMask = { metadata: true, type: true, data: true };

/** An account's name and UID are all this controller reads of it. */
export const TOKEN_ACCOUNT_FIELDS: FieldMask = METADATA;

/** The Secrets store holds every Secret; only token Secrets are this controller's. */
const isTokenSecret = (o: KubeObject): boolean => (o as SecretObject).type === SERVICE_ACCOUNT_TOKEN_TYPE;

/** Token Secrets by `<namespace>/<the account name they carry>`: whom a deleted account's Secrets are. */
const TOKEN_SECRETS_BY_ACCOUNT: StoreIndex = {
  name: 'token-secrets-by-account',
  keys: (o) => (isTokenSecret(o) ? [`${o.metadata?.namespace ?? ''}/${o.metadata?.annotations?.[SA_NAME_ANNOTATION] ?? ''}`] : []),
};

/** The watch's view of a token Secret, from the cached digests: booleans and the digest of the public CA. */
export function secretView(o: KubeObject): TokenSecretView {
  const m = o.metadata ?? {};
  const data = (o as SecretObject).data ?? {};
  const ca = data[CA_KEY];
  const uidAnnotation = m.annotations?.[SA_UID_ANNOTATION];
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    serviceAccountName: m.annotations?.[SA_NAME_ANNOTATION] ?? '',
    ...(uidAnnotation ? { serviceAccountUid: uidAnnotation } : {}),
    hasToken: (data[TOKEN_KEY] ?? '') !== '',
    hasNamespace: (data[NAMESPACE_KEY] ?? '') !== '',
    ...(ca ? { caSha256: ca } : {}),
    ...(m.deletionTimestamp ? { deleting: true } : {}),
  };
}

/**
 * Routes of the serviceaccount-token controller, as upstream's handlers and sync functions pick
 * their work: a token Secret that lacks a token, namespace or the current CA, or whose
 * ServiceAccount is not there (by name and UID, once the accounts are listed), wakes its workflow;
 * a deleted Secret wakes it to clean up and end; a deleted ServiceAccount wakes every Secret that
 * belongs to it. Complete Secrets of existing accounts cost nothing.
 */
export function tokenRoutes({ input, signaller, cache, rootCa }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(TOKEN_CONTROLLER)) return undefined;
  /** hex SHA-256 of the CA tokens carry; none: no CA is configured */
  const rootCaSha256 = rootCa ? sha256Hex(rootCa) : undefined;

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

  // both stores exist before either listener can run: each listener reads the other store
  const accounts = cache.watch(RESOURCES.serviceAccounts, TOKEN_ACCOUNT_FIELDS);
  const secrets = cache.watch(RESOURCES.secrets, TOKEN_SECRET_FIELDS);
  secrets.addIndex(TOKEN_SECRETS_BY_ACCOUNT);

  const accountFor = (s: TokenSecretView): { uid: string } | 'missing' | 'unsynced' => {
    if (!accounts.synced) return 'unsynced';
    const a = accounts.getByName(s.namespace, s.serviceAccountName);
    return a ? { uid: a.metadata?.uid ?? '' } : 'missing';
  };

  const evaluate = (s: TokenSecretView) => {
    if (secretNeedsSync(s, rootCaSha256, accountFor(s))) queue(s, { secret: s });
  };

  secrets.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        if (!isTokenSecret(ev.old)) return;
        const s = secretView(ev.old);
        queue(s, { secretDeletedUid: s.uid });
        return;
      }
      // a relist judges every token Secret again, as upstream's resync does
      if (isTokenSecret(ev.obj)) evaluate(secretView(ev.obj));
    },
  });

  accounts.subscribe({
    onEvent(ev) {
      // an account replaced under its name while the watch was down comes as its old UID deleted
      if (ev.type !== 'deleted') return;
      const m = ev.old.metadata ?? {};
      const namespace = m.namespace ?? '';
      const name = m.name ?? '';
      const uid = m.uid ?? '';
      for (const o of secrets.byIndex(TOKEN_SECRETS_BY_ACCOUNT, `${namespace}/${name}`)) {
        const s = secretView(o);
        if (belongsTo(s, { name, uid })) queue(s, { serviceAccountDeleted: { name, uid } });
      }
    },
    onListed(first) {
      // until now a Secret's account could not be judged missing; judge them all once
      if (!first) return;
      for (const o of secrets.list()) if (isTokenSecret(o)) evaluate(secretView(o));
    },
  });

  return {};
}
