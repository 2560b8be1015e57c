import { KUBELET_CLIENT_SIGNER, kubeletClientProblem, type CsrFacts } from '../common/csr';

/**
 * Upstream's CSR approver (pkg/controller/certificates/approver): a kubelet's client certificate
 * request, new or renewed, is approved when a SubjectAccessReview says its requester may create
 * the matching certificatesigningrequests subresource. Nothing else is ever approved or denied.
 */

export const CONTROLLER = 'csrapproving';

/** The subresources a recognized request is reviewed against, in upstream's order. */
export type ApprovalKind = 'selfnodeclient' | 'nodeclient';

/** Upstream's message for each, on the Approved condition (reason AutoApproved). */
export const APPROVAL_MESSAGES: Record<ApprovalKind, string> = {
  selfnodeclient: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  nodeclient: 'Auto approving kubelet client certificate after SubjectAccessReview.',
};

export const APPROVAL_REASON = 'AutoApproved';

/** isNodeClientCert: a kubelet client request for the kubelet client signer. */
export function isNodeClientCert(c: CsrFacts): boolean {
  return c.signerName === KUBELET_CLIENT_SIGNER && c.request !== undefined && kubeletClientProblem(c.request, c.usages) === undefined;
}

/** isSelfNodeClientCert: one a node makes for itself (its user is the certificate's CN), i.e. a renewal. */
export function isSelfNodeClientCert(c: CsrFacts): boolean {
  return c.request !== undefined && c.username === c.request.commonName && isNodeClientCert(c);
}

/** The recognizers that match, in the order upstream reviews them. */
export function recognizedAs(c: CsrFacts): ApprovalKind[] {
  const out: ApprovalKind[] = [];
  if (isSelfNodeClientCert(c)) out.push('selfnodeclient');
  if (isNodeClientCert(c)) out.push('nodeclient');
  return out;
}

/** Neither issued nor approved nor denied: upstream's handler looks at it. */
export const isPending = (c: CsrFacts) => !c.issued && !c.approved && !c.denied;

/** Worth a workflow: pending and recognized (an unparseable request is logged by upstream on every sync, and left). */
export const needsApproval = (c: CsrFacts) => isPending(c) && recognizedAs(c).length > 0;

/** Upstream's (ignorable) error when every review said no; the CSR is tried again after a backoff. */
export const notApprovedMessage = (name: string, tried: ApprovalKind[]) =>
  `recognized csr "${name}" as [${tried.join(' ')}] but subject access review was not approved`;
