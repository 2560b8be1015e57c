import { X509Certificate, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import {
  CA_KEY,
  NAMESPACE_KEY,
  SA_NAME_ANNOTATION,
  SA_UID_ANNOTATION,
  SERVICE_ACCOUNT_TOKEN_TYPE,
  TOKEN_KEY,
  type ServiceAccountLookup,
  type TokenFill,
  type TokenObservation,
  type TokenSecretState,
} from '../../workflows/serviceaccount-token/types';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { updateGuarded } from '../kube/update';
import { parseSigningKey, signLegacyToken, type SigningKey } from './jwt';

const CONTROLLER = 'serviceaccount-token';

/** The manager's flags this controller reads, as upstream's --service-account-private-key-file and --root-ca-file. */
export interface TokenControllerOptions {
  privateKeyFile?: string;
  rootCaFile?: string;
  /**
   * The CA of the manager's own kubeconfig (PEM text or bytes): upstream puts it into tokens when
   * --root-ca-file is not given. Ignored when rootCaFile is set.
   */
  kubeconfigCa?: Buffer | string;
}

export interface TokenActivityDeps extends TokenControllerOptions {
  rest: KubeRest;
  logger: Logger;
  /** upstream's tokens controller records no Events; kept for the shape every controller shares */
  recordEvent: RecordEvent;
}

export interface SecretKey {
  namespace: string;
  name: string;
  uid: string;
}

export interface ObserveTokenSecretRequest extends SecretKey {
  /** the account the Secret named when last seen; used once the Secret is gone */
  serviceAccount?: { name: string; uid?: string };
}

export interface FillTokenSecretRequest extends SecretKey {
  /** the version the decision was made from; a newer Secret is a conflict */
  resourceVersion: string;
  serviceAccount: { name: string; uid: string };
  fill: TokenFill;
  reason: string;
}

/** Never the token: only whether the write happened, and the version it produced. */
export type FillTokenSecretResult = { outcome: 'filled'; resourceVersion: string } | { outcome: 'conflict' } | { outcome: 'gone' };

export interface DeleteTokenSecretRequest extends SecretKey {
  reason: string;
}

export interface DeleteTokenSecretResult {
  outcome: 'deleted' | 'gone';
}

export interface RemoveSecretReferenceRequest {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  secretName: string;
  reason: string;
}

export interface RemoveSecretReferenceResult {
  outcome: 'removed' | 'notReferenced' | 'conflict' | 'gone';
}

interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

interface ServiceAccountObject extends KubeObject {
  secrets?: Array<{ name?: string }>;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Upstream's check of --root-ca-file: at least one certificate, and every certificate block parses. */
function validateCaBundle(bytes: Buffer, file: string): void {
  let found = 0;
  for (const m of bytes.toString('utf8').matchAll(PEM_BLOCK)) {
    if (m[1] !== 'CERTIFICATE') continue;
    try {
      new X509Certificate(m[0]);
    } catch (e) {
      throw new Error(`error parsing root-ca-file at ${file}: ${(e as Error).message}`);
    }
    found++;
  }
  if (!found) throw new Error(`error parsing root-ca-file at ${file}: data does not contain any valid RSA or ECDSA certificates`);
}

/** The CA bytes tokens carry: --root-ca-file when given (validated), else the kubeconfig's CA, else none. */
export function loadRootCa(opts: TokenControllerOptions): Buffer | undefined {
  if (opts.rootCaFile) {
    const bytes = fs.readFileSync(opts.rootCaFile);
    validateCaBundle(bytes, opts.rootCaFile);
    return bytes;
  }
  const fallback = typeof opts.kubeconfigCa === 'string' ? Buffer.from(opts.kubeconfigCa) : opts.kubeconfigCa;
  return fallback && fallback.length > 0 ? fallback : undefined;
}

/**
 * Hex SHA-256 of the CA bytes tokens carry, for tokenRoutes' third argument: a hash of a public
 * certificate, so it may travel in payloads, unlike anything read from a Secret's data.
 */
export function rootCaSha256(opts: TokenControllerOptions): string | undefined {
  const ca = loadRootCa(opts);
  return ca ? createHash('sha256').update(ca).digest('hex') : undefined;
}

function loadSigningKeyFile(file: string): SigningKey {
  try {
    return parseSigningKey(fs.readFileSync(file));
  } catch (e) {
    throw new Error(`error reading key for service account token controller: error reading private key file ${file}: ${(e as Error).message}`);
  }
}

/**
 * Why the controller cannot run with these options, or undefined when it can. Without a key
 * upstream skips the controller with a log line (`fatal: false`: log it, leave it out); with a key
 * or CA file it cannot use, upstream fails to start (`fatal: true`).
 */
export function tokenControllerConfigError(opts: TokenControllerOptions): { fatal: boolean; message: string } | undefined {
  if (!opts.privateKeyFile) return { fatal: false, message: 'serviceaccount-token controller is disabled because there is no private key (--service-account-private-key-file)' };
  try {
    loadSigningKeyFile(opts.privateKeyFile);
    loadRootCa(opts);
  } catch (e) {
    return { fatal: true, message: (e as Error).message };
  }
  return undefined;
}

function secretPath(namespace: string, name: string): string {
  return resourcePath(RESOURCES.secrets, namespace, name);
}

function serviceAccountPath(namespace: string, name: string): string {
  return resourcePath(RESOURCES.serviceAccounts, namespace, name);
}

function present(data: Record<string, string>, key: string): boolean {
  return (data[key] ?? '').length > 0;
}

/**
 * The Secret and ServiceAccount I/O of the serviceaccount-token controller. Tokens are minted and
 * written here and nowhere else; what goes back to the workflow is booleans, names and versions.
 */
export function createTokenActivities(deps: TokenActivityDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: CONTROLLER });
  // read once, on first use: a worker that never serves this controller never touches the files
  let key: SigningKey | undefined;
  let rootCa: { bytes?: Buffer } | undefined;

  function signingKey(): SigningKey {
    if (key) return key;
    if (!deps.privateKeyFile) {
      throw ApplicationFailure.create({ message: 'no --service-account-private-key-file: the serviceaccount-token controller must not be enabled', type: 'TokenControllerConfig', nonRetryable: true });
    }
    try {
      key = loadSigningKeyFile(deps.privateKeyFile);
    } catch (e) {
      throw ApplicationFailure.create({ message: (e as Error).message, type: 'TokenControllerConfig', nonRetryable: true });
    }
    return key;
  }

  function caBytes(): Buffer | undefined {
    if (!rootCa) {
      try {
        rootCa = { bytes: loadRootCa(deps) };
      } catch (e) {
        throw ApplicationFailure.create({ message: (e as Error).message, type: 'TokenControllerConfig', nonRetryable: true });
      }
    }
    return rootCa.bytes;
  }

  function stateOf(s: SecretObject): TokenSecretState {
    const m = s.metadata ?? {};
    const data = s.data ?? {};
    const ca = caBytes();
    const uidAnnotation = m.annotations?.[SA_UID_ANNOTATION];
    return {
      uid: m.uid ?? '',
      resourceVersion: m.resourceVersion ?? '',
      serviceAccountName: m.annotations?.[SA_NAME_ANNOTATION] ?? '',
      ...(uidAnnotation ? { serviceAccountUid: uidAnnotation } : {}),
      hasToken: present(data, TOKEN_KEY),
      hasNamespace: present(data, NAMESPACE_KEY),
      caCurrent: !ca || Buffer.from(data[CA_KEY] ?? '', 'base64').equals(ca),
      deleting: !!m.deletionTimestamp,
    };
  }

  async function lookupAccount(namespace: string, name: string, uid: string | undefined, secretName: string): Promise<ServiceAccountLookup> {
    let sa: ServiceAccountObject;
    try {
      sa = (await rest.request<ServiceAccountObject>('GET', serviceAccountPath(namespace, name))).body;
    } catch (e) {
      if (isStatus(e, 404)) return { state: 'absent' };
      throw e;
    }
    const m = sa.metadata ?? {};
    if (uid && m.uid !== uid) return { state: 'absent' };
    return {
      state: 'exists',
      name,
      uid: m.uid ?? '',
      resourceVersion: m.resourceVersion ?? '',
      referencesSecret: (sa.secrets ?? []).some((r) => r.name === secretName),
    };
  }

  const keyOf = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`;

  return {
    /** A fresh read of the Secret (by UID) and of the ServiceAccount it names (by name and UID annotation). */
    async observeTokenSecret(req: ObserveTokenSecretRequest): Promise<TokenObservation> {
      return apiCall(async () => {
        let secret: TokenSecretState | undefined;
        let replacedByUid: string | undefined;
        try {
          const live = (await rest.request<SecretObject>('GET', secretPath(req.namespace, req.name))).body;
          if (live.metadata?.uid === req.uid) secret = stateOf(live);
          else if (live.type === SERVICE_ACCOUNT_TOKEN_TYPE && live.metadata?.uid) replacedByUid = live.metadata.uid;
        } catch (e) {
          if (!isStatus(e, 404)) throw e;
        }
        const account = secret ? { name: secret.serviceAccountName, uid: secret.serviceAccountUid } : req.serviceAccount;
        const serviceAccount: ServiceAccountLookup = account?.name
          ? await lookupAccount(req.namespace, account.name, account.uid, req.name)
          : { state: 'unknown' };
        return { ...(secret ? { secret } : {}), ...(replacedByUid ? { replacedByUid } : {}), serviceAccount };
      });
    },

    /**
     * Writes the missing data (a freshly signed token, the root CA, the namespace) and both account
     * annotations, with the resourceVersion the decision was made at.
     */
    async fillTokenSecret(req: FillTokenSecretRequest): Promise<FillTokenSecretResult> {
      const signer = req.fill.token ? signingKey() : undefined;
      const ca = req.fill.ca ? caBytes() : undefined;
      let minted: string | undefined;
      const scrub = (s: string) => (minted ? s.split(minted).join('<token>').split(Buffer.from(minted).toString('base64')).join('<token>') : s);
      return apiCall(async () => {
        try {
          const updated = await updateGuarded(rest, secretPath(req.namespace, req.name), { uid: req.uid, resourceVersion: req.resourceVersion }, (obj) => {
            const s = obj as SecretObject;
            const data = { ...(s.data ?? {}) };
            if (ca) data[CA_KEY] = ca.toString('base64');
            if (req.fill.namespace) data[NAMESPACE_KEY] = Buffer.from(req.namespace).toString('base64');
            if (signer) {
              minted = signLegacyToken(signer, {
                namespace: req.namespace,
                serviceAccountName: req.serviceAccount.name,
                serviceAccountUid: req.serviceAccount.uid,
                secretName: req.name,
              });
              data[TOKEN_KEY] = Buffer.from(minted).toString('base64');
            }
            s.data = data;
            s.metadata = {
              ...s.metadata,
              annotations: { ...s.metadata?.annotations, [SA_NAME_ANNOTATION]: req.serviceAccount.name, [SA_UID_ANNOTATION]: req.serviceAccount.uid },
            };
          });
          log.info({ key: keyOf(req), fill: req.fill, reason: req.reason }, 'filled token secret');
          return { outcome: 'filled' as const, resourceVersion: updated.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) {
            log.info({ key: keyOf(req) }, 'token secret changed since it was read; re-observing');
            return { outcome: 'conflict' as const };
          }
          if (isStatus(e, 404)) return { outcome: 'gone' as const };
          // the apiserver does not echo Secret data, but this message is about to enter history
          if (e instanceof ApiError) throw new ApiError(e.status, e.reason, scrub(e.message), e.retryAfterSeconds, scrub(e.serverMessage));
          throw new Error(scrub(String(e)));
        }
      });
    },

    /** DELETE with the Secret's UID as precondition; gone or replaced counts as done, as upstream. */
    async deleteTokenSecret(req: DeleteTokenSecretRequest): Promise<DeleteTokenSecretResult> {
      return apiCall(async () => {
        try {
          await rest.request('DELETE', secretPath(req.namespace, req.name), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: req.uid } } });
        } catch (e) {
          if (isStatus(e, 404, 409)) return { outcome: 'gone' as const };
          throw e;
        }
        log.info({ key: keyOf(req), reason: req.reason }, 'deleted token secret');
        return { outcome: 'deleted' as const };
      });
    },

    /** Takes a deleted Secret's name out of its ServiceAccount's `secrets`, on a fresh read of the account. */
    async removeServiceAccountSecretReference(req: RemoveSecretReferenceRequest): Promise<RemoveSecretReferenceResult> {
      return apiCall(async () => {
        const path = serviceAccountPath(req.namespace, req.serviceAccount.name);
        try {
          const sa = (await rest.request<ServiceAccountObject & Record<string, unknown>>('GET', path)).body;
          if (sa.metadata?.uid !== req.serviceAccount.uid) return { outcome: 'gone' as const };
          const refs = sa.secrets ?? [];
          if (!refs.some((r) => r.name === req.secretName)) return { outcome: 'notReferenced' as const };
          const kept = refs.filter((r) => r.name !== req.secretName);
          const body: ServiceAccountObject & Record<string, unknown> = { ...sa, secrets: kept };
          if (!kept.length) delete body.secrets;
          await rest.request('PUT', path, { body });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' as const };
          if (isStatus(e, 409)) return { outcome: 'conflict' as const };
          throw e;
        }
        log.info({ key: `${req.namespace}/${req.serviceAccount.name}`, secret: req.secretName, reason: req.reason }, 'removed secret reference from service account');
        return { outcome: 'removed' as const };
      });
    },
  };
}

export type TokenActivities = ReturnType<typeof createTokenActivities>;
