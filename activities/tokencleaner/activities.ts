import type { Logger } from 'pino';
import { EXPIRATION_KEY, type BootstrapTokenView } from '../../workflows/tokencleaner/logic';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> | null };

/**
 * The slice of a live Secret the cleaner may hold: name, UID, type and the decoded `expiration`.
 * Nothing else of its data leaves this function.
 */
export function bootstrapTokenView(o: KubeObject): BootstrapTokenView {
  const s = o as SecretObject;
  const m = s.metadata ?? {};
  const raw = s.data?.[EXPIRATION_KEY];
  const expiration = raw ? Buffer.from(raw, 'base64').toString('utf8') : '';
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    type: s.type ?? '',
    ...(expiration ? { expiration } : {}),
  };
}

export interface ReadBootstrapTokenRequest {
  namespace: string;
  name: string;
}

export interface DeleteBootstrapTokenRequest {
  namespace: string;
  name: string;
  /** the Secret the decision was made for (upstream's UID precondition) */
  uid: string;
  /** why, in words, for the log: `expired` or `unparseable expiration` */
  reason: string;
  /** RFC 3339, when it parsed */
  expiredAt?: string;
}

export interface DeleteBootstrapTokenResult {
  /** `gone`: already deleted; `replaced`: the name now holds another Secret */
  outcome: 'deleted' | 'gone' | 'replaced';
}

export interface TokenCleanerDeps {
  rest: KubeRest;
  logger: Logger;
}

const secretPath = (ns: string, name: string) => resourcePath(RESOURCES.secrets, ns, name);

/** The token cleaner's I/O: a live read that keeps only the expiration, and a guarded delete. */
export function createTokenCleanerActivities(deps: TokenCleanerDeps) {
  const log = deps.logger.child({ controller: 'tokencleaner' });
  return {
    /** The Secret's type and expiration as the API server has them now; undefined when it is gone. */
    async readBootstrapToken(req: ReadBootstrapTokenRequest): Promise<BootstrapTokenView | undefined> {
      return apiCall(async () => {
        try {
          return bootstrapTokenView((await deps.rest.request<KubeObject>('GET', secretPath(req.namespace, req.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return undefined;
          throw e;
        }
      });
    },

    /** Deletes an expired bootstrap token with upstream's UID precondition; gone or replaced is no error. */
    async deleteExpiredBootstrapToken(req: DeleteBootstrapTokenRequest): Promise<DeleteBootstrapTokenResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.name}`;
        try {
          await deps.rest.request('DELETE', secretPath(req.namespace, req.name), {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: req.uid } },
          });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) {
            log.info({ secret: key, uid: req.uid }, 'bootstrap token under this name was replaced; not deleting it');
            return { outcome: 'replaced' };
          }
          throw e;
        }
        log.info({ secret: key, uid: req.uid, reason: req.reason, ...(req.expiredAt ? { expiredAt: req.expiredAt } : {}) },
          'deleted expired bootstrap token secret');
        return { outcome: 'deleted' };
      });
    },
  };
}

export type TokenCleanerActivities = ReturnType<typeof createTokenCleanerActivities>;
