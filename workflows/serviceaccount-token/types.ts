/**
 * Payloads that cross the workflow boundary for the serviceaccount-token controller. A token Secret
 * is described by names, UIDs, versions and booleans about its data (and the SHA-256 of its public
 * ca.crt): never by the data itself. The decisions live in ./logic.ts.
 */

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

/** The data keys the controller fills. */
export const TOKEN_KEY = 'token';
export const CA_KEY = 'ca.crt';
export const NAMESPACE_KEY = 'namespace';

/** One token Secret as the watch sees it: what it names and which of its data is present. */
export interface TokenSecretView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** the kubernetes.io/service-account.name annotation */
  serviceAccountName: string;
  /** the kubernetes.io/service-account.uid annotation, when set */
  serviceAccountUid?: string;
  hasToken: boolean;
  hasNamespace: boolean;
  /** hex SHA-256 of data['ca.crt'], when present */
  caSha256?: string;
  deleting?: boolean;
}

/** One token Secret as an activity read it from the API, judged against the manager's root CA. */
export interface TokenSecretState {
  uid: string;
  resourceVersion: string;
  serviceAccountName: string;
  serviceAccountUid?: string;
  hasToken: boolean;
  hasNamespace: boolean;
  /** true when no root CA is configured, or data['ca.crt'] holds exactly its bytes */
  caCurrent: boolean;
  deleting: boolean;
}

/** The ServiceAccount a Secret names, read live by name and checked against the Secret's UID annotation. */
export type ServiceAccountLookup =
  | {
      state: 'exists';
      name: string;
      uid: string;
      resourceVersion: string;
      /** whether its `secrets` list names the Secret in question */
      referencesSecret: boolean;
    }
  /** 404, or the name now holds an account with another UID */
  | { state: 'absent' }
  /** nothing to look up: the Secret names no account */
  | { state: 'unknown' };

export interface TokenObservation {
  /** absent when the Secret with the workflow's UID is gone */
  secret?: TokenSecretState;
  /** the UID of another token Secret now under the same name, if any */
  replacedByUid?: string;
  serviceAccount: ServiceAccountLookup;
}

/** Which data keys a fill writes. */
export interface TokenFill {
  token: boolean;
  ca: boolean;
  namespace: boolean;
}

/** What the controller does about one Secret, each with its reason in words. */
export type TokenAction =
  /** write the missing or stale data and the account annotations, guarded by the version read */
  | { type: 'fill'; fill: TokenFill; serviceAccount: { name: string; uid: string }; resourceVersion: string; reason: string }
  /** delete the Secret with a UID precondition: its ServiceAccount does not exist */
  | { type: 'delete'; reason: string }
  /** the Secret is gone: drop its name from the account's `secrets` list */
  | { type: 'removeReference'; serviceAccount: { name: string; uid: string }; reason: string }
  /** the Secret is gone and nothing refers to it: the workflow ends */
  | { type: 'finish'; reason: string }
  | { type: 'nothing'; reason: string };
