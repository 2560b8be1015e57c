import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import type { CsrCleanupRule, CsrView } from '../../workflows/csrcleaner/logic';
import type { FieldMask } from '../informers/fields';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

type CsrObject = KubeObject & {
  status?: { certificate?: string | null; conditions?: Array<{ type?: string; lastUpdateTime?: string | null }> | null };
};

/** What csrCleanerView reads of a CSR: its conditions' types and times, and its certificate (public). */
export const CSR_CLEANER_FIELDS: FieldMask = {
  metadata: true,
  status: { certificate: true, conditions: { type: true, lastUpdateTime: true } },
};

/**
 * The NotAfter of the first certificate in the first PEM block of status.certificate (base64 in
 * JSON), as upstream reads it; undefined when there is no block or it does not parse (upstream then
 * does not count the certificate as expired).
 */
export function certificateNotAfter(certificateB64: string): string | undefined {
  const pem = Buffer.from(certificateB64, 'base64').toString('latin1');
  const m = /-----BEGIN ([^\n-]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m) return undefined;
  // PEM headers (Key: value lines before a blank line) are not part of the body
  const body = m[2].includes(':') ? m[2].split(/\r?\n\r?\n/).slice(1).join('\n') : m[2];
  try {
    const cert = new X509Certificate(Buffer.from(body.replace(/\s+/g, ''), 'base64'));
    const t = Date.parse(cert.validTo);
    return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
  } catch {
    return undefined;
  }
}

/** The slice of a CSR the cleaner judges; used by the watch and by the live read alike. */
export function csrCleanerView(o: KubeObject): CsrView {
  const c = o as CsrObject;
  const m = c.metadata ?? {};
  const cert = c.status?.certificate ?? '';
  const notAfter = cert ? certificateNotAfter(cert) : undefined;
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
    conditions: (c.status?.conditions ?? []).map((x) => ({ type: x.type ?? '', ...(x.lastUpdateTime ? { lastUpdateTime: x.lastUpdateTime } : {}) })),
    issued: cert.length > 0,
    ...(notAfter ? { certificateNotAfter: notAfter } : {}),
  };
}

export interface ReadCsrRequest {
  name: string;
}

export interface DeleteCsrRequest {
  name: string;
  /** the CSR the decision was made for: another one under the name is never deleted */
  uid: string;
  rule: CsrCleanupRule;
  /** RFC 3339: when the rule's deadline passed */
  dueAt: string;
  /** why, in words, for the log */
  reason: string;
}

export interface DeleteCsrResult {
  /** `gone`: already deleted; `replaced`: the name now holds another CSR (UID precondition failed) */
  outcome: 'deleted' | 'gone' | 'replaced';
}

export interface CsrCleanerDeps {
  rest: KubeRest;
  logger: Logger;
}

const csrPath = (name: string) => resourcePath(RESOURCES.certificateSigningRequests, undefined, name);

/** The CSR cleaner's I/O: a live read before deleting (the watch may be behind) and a guarded delete. */
export function createCsrCleanerActivities(deps: CsrCleanerDeps) {
  const log = deps.logger.child({ controller: 'csrcleaner' });
  return {
    /** The CSR as the API server has it now; undefined when it is gone. */
    async readCsrForCleanup(req: ReadCsrRequest): Promise<CsrView | undefined> {
      return apiCall(async () => {
        try {
          return csrCleanerView((await deps.rest.request<KubeObject>('GET', csrPath(req.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return undefined;
          throw e;
        }
      });
    },

    /** Deletes a CSR past its deadline, with a UID precondition (upstream deletes by name; a newcomer is never its target). */
    async deleteCsr(req: DeleteCsrRequest): Promise<DeleteCsrResult> {
      return apiCall(async () => {
        try {
          await deps.rest.request('DELETE', csrPath(req.name), {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: req.uid } },
          });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) {
            log.info({ csr: req.name, uid: req.uid }, 'CSR under this name was replaced; not deleting it');
            return { outcome: 'replaced' };
          }
          throw e;
        }
        log.info({ csr: req.name, uid: req.uid, rule: req.rule, dueAt: req.dueAt, reason: req.reason },
          'cleaned up certificate signing request');
        return { outcome: 'deleted' };
      });
    },
  };
}

export type CsrCleanerActivities = ReturnType<typeof createCsrCleanerActivities>;
