import type { V1CertificateSigningRequest, V1SubjectAccessReview } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { APPROVAL_REASON, CONTROLLER, isPending, type ApprovalKind } from '../../workflows/csrapproving/logic';
import { csrFacts } from '../certificates/csr';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

export interface ReviewCsrRequest {
  name: string;
  /** the CSR the decision was made for */
  uid: string;
  /** the subresource its requester must be allowed to create */
  kind: ApprovalKind;
  /** why, in words, for the history and the log */
  reason: string;
}

export interface ReviewCsrResult {
  /** `settled`: approved, denied or issued meanwhile; `replaced`: the name holds another CSR now */
  outcome: 'allowed' | 'not-allowed' | 'gone' | 'replaced' | 'settled';
  /** the authorizer's reason, when it gave one */
  why?: string;
}

export interface ApproveCsrRequest {
  name: string;
  uid: string;
  kind: ApprovalKind;
  /** the Approved condition's message */
  message: string;
  reason: string;
}

export interface ApproveCsrResult {
  outcome: 'approved' | 'gone' | 'replaced' | 'settled';
  resourceVersion?: string;
}

export interface CsrApprovingDeps {
  /** the controller's client (certificate-controller): SubjectAccessReviews and the /approval subresource */
  rest: KubeRest;
  logger: Logger;
}

const csrPath = (name: string) => resourcePath(RESOURCES.certificateSigningRequests, undefined, name);
const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
/** a write that conflicts is read and tried again this many times before the activity's own retry */
const WRITE_ATTEMPTS = 5;

/**
 * The CSR approver's I/O: the SubjectAccessReview upstream makes for a recognized request (as its
 * requester: user, UID, groups, extra), and the approval, written to /approval on the CSR as read
 * just before (its resourceVersion guards the write; a CSR settled meanwhile is left as it is).
 */
export function createCsrApprovingActivities(deps: CsrApprovingDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });

  async function read(name: string, uid: string): Promise<V1CertificateSigningRequest | 'gone' | 'replaced'> {
    try {
      const csr = (await deps.rest.request<V1CertificateSigningRequest>('GET', csrPath(name))).body;
      return csr.metadata?.uid === uid ? csr : 'replaced';
    } catch (e) {
      if (isStatus(e, 404)) return 'gone';
      throw e;
    }
  }

  return {
    /** Asks the authorizer whether the CSR's requester may create certificatesigningrequests/<kind>. */
    async reviewCsrAccess(req: ReviewCsrRequest): Promise<ReviewCsrResult> {
      return apiCall(async () => {
        const csr = await read(req.name, req.uid);
        if (typeof csr === 'string') return { outcome: csr };
        if (!isPending(csrFacts(csr))) return { outcome: 'settled' };
        const spec = csr.spec;
        const sar: V1SubjectAccessReview = {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: spec.username,
            uid: spec.uid,
            groups: spec.groups,
            extra: spec.extra,
            resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource: req.kind, version: '*' },
          },
        };
        const res = (await deps.rest.request<V1SubjectAccessReview>('POST', SAR_PATH, { body: sar })).body;
        const allowed = res.status?.allowed === true;
        log.debug({ csr: req.name, kind: req.kind, allowed }, 'subject access review');
        return { outcome: allowed ? 'allowed' : 'not-allowed', ...(res.status?.reason ? { why: res.status.reason } : {}) };
      });
    },

    /** Adds upstream's Approved condition (reason AutoApproved) through /approval; idempotent by re-reading. */
    async approveCsr(req: ApproveCsrRequest): Promise<ApproveCsrResult> {
      return apiCall(async () => {
        for (let attempt = 1; ; attempt++) {
          const csr = await read(req.name, req.uid);
          if (typeof csr === 'string') return { outcome: csr };
          if (!isPending(csrFacts(csr))) return { outcome: 'settled', resourceVersion: csr.metadata?.resourceVersion };
          const body: V1CertificateSigningRequest = {
            ...csr,
            status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: APPROVAL_REASON, message: req.message }] },
          };
          try {
            const written = (await deps.rest.request<V1CertificateSigningRequest>('PUT', `${csrPath(req.name)}/approval`, { body })).body;
            log.info({ csr: req.name, uid: req.uid, kind: req.kind, reason: req.reason }, 'approved certificate signing request');
            return { outcome: 'approved', resourceVersion: written.metadata?.resourceVersion };
          } catch (e) {
            if (isStatus(e, 409) && attempt < WRITE_ATTEMPTS) continue;
            if (isStatus(e, 404)) return { outcome: 'gone' };
            throw e;
          }
        }
      });
    },
  };
}

export type CsrApprovingActivities = ReturnType<typeof createCsrApprovingActivities>;
