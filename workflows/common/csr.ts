/*
 * What the CSR approver and signer know of a CertificateSigningRequest, and upstream's checks of
 * its PKCS#10 request (pkg/apis/certificates helpers): pure, so workflows and unit tests use them.
 * The parsing itself (DER, signatures) happens outside workflows, in activities/certificates/.
 */
import type { LoopTuning } from '../runtime/object-loop';

export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

/** The built-in signers, in the order upstream starts them. */
export const BUILTIN_SIGNERS = [KUBELET_SERVING_SIGNER, KUBELET_CLIENT_SIGNER, APISERVER_CLIENT_SIGNER, LEGACY_UNKNOWN_SIGNER] as const;
export type BuiltinSigner = (typeof BUILTIN_SIGNERS)[number];

/** The parts of the x509 request the checks read: subject and subjectAltNames, as Go's parser yields them. */
export interface CsrRequestFacts {
  /** the last CN of the subject ('' when none) */
  commonName: string;
  /** every O of the subject, in order */
  organizations: string[];
  dnsNames: string[];
  /** textual IPs */
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

/** A CSR as the approver and the signer see it: no request bytes, no certificate bytes. */
export interface CsrFacts {
  name: string;
  uid: string;
  resourceVersion: string;
  signerName: string;
  /** spec.username: who created it */
  username: string;
  usages: string[];
  expirationSeconds?: number;
  /** an Approved condition is present */
  approved: boolean;
  /** a Denied condition is present */
  denied: boolean;
  /** a Failed condition is present with status True (or no status) */
  failed: boolean;
  /** status.certificate is not empty */
  issued: boolean;
  /** the parsed request; absent when it does not parse */
  request?: CsrRequestFacts;
  /** why the request did not parse */
  parseError?: string;
}

/** Upstream's IsCertificateRequestApproved: approved and not denied. */
export const isApproved = (c: CsrFacts) => c.approved && !c.denied;

/** Go's sets.String.List(): sorted, and %v prints it as [a b c]. */
const listOf = (s: Iterable<string>) => `[${[...new Set(s)].sort().join(' ')}]`;

function sameSet(usages: readonly string[], want: readonly string[]): boolean {
  const a = new Set(usages);
  return a.size === want.length && want.every((u) => a.has(u));
}

const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

const onlySystemNodes = (r: CsrRequestFacts) => r.organizations.length === 1 && r.organizations[0] === 'system:nodes';

/** Upstream's ValidateKubeletClientCSR: the error message, or undefined when the request is a kubelet client one. */
export function kubeletClientProblem(r: CsrRequestFacts, usages: readonly string[]): string | undefined {
  if (!onlySystemNodes(r)) return 'subject organization is not system:nodes';
  if (r.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (r.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (r.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (r.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!r.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, KUBELET_CLIENT_USAGES_NO_RSA)) return `usages did not match ${listOf(KUBELET_CLIENT_USAGES)}`;
  return undefined;
}

/** Upstream's ValidateKubeletServingCSR. */
export function kubeletServingProblem(r: CsrRequestFacts, usages: readonly string[]): string | undefined {
  if (!onlySystemNodes(r)) return 'subject organization is not system:nodes';
  if (r.dnsNames.length === 0 && r.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (r.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (r.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, KUBELET_SERVING_USAGES_NO_RSA)) return `usages did not match ${listOf(KUBELET_SERVING_USAGES)}`;
  if (!r.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** Upstream's check of a kube-apiserver-client request: client auth, and nothing but signing usages besides. */
export function apiServerClientProblem(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'digital signature' || u === 'key encipherment') continue;
    if (u === 'client auth') {
      clientAuth = true;
      continue;
    }
    return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/**
 * A signer's verdict on a request for it: the message of the Failed condition upstream writes
 * (reason SignerValidationFailure), or undefined when the signer may issue it.
 */
export function signerProblem(signer: BuiltinSigner, r: CsrRequestFacts, usages: readonly string[]): string | undefined {
  switch (signer) {
    case KUBELET_SERVING_SIGNER:
      return kubeletServingProblem(r, usages);
    case KUBELET_CLIENT_SIGNER:
      return kubeletClientProblem(r, usages);
    case APISERVER_CLIENT_SIGNER:
      return apiServerClientProblem(usages);
    case LEGACY_UNKNOWN_SIGNER:
      return undefined;
  }
}

export const isBuiltinSigner = (s: string): s is BuiltinSigner => (BUILTIN_SIGNERS as readonly string[]).includes(s);

/** What the watch sends the approver's and signer's per-CSR runs: the CSR as seen, or that it was deleted. */
export type CsrEvent = { csr: CsrFacts } | { deletedUid: string };

export interface CsrWorkflowInput {
  name: string;
  uid: string;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: the CSR as last seen */
  csr?: CsrFacts;
}

/** The latest view wins: a CSR's spec never changes, its status only moves on. */
export function latestCsrEvent(_earlier: CsrEvent, later: CsrEvent): CsrEvent {
  return later;
}

/** What a per-CSR run of the approver or signer knows of its CSR: the watch's latest view, and whether it went. */
export class CsrSeen {
  csr: CsrFacts | undefined;
  deleted = false;

  constructor(private readonly input: CsrWorkflowInput) {
    this.csr = input.csr;
  }

  /** the UID this run works for: the CSR seen, else the one it was started for */
  get uid(): string {
    return this.csr?.uid ?? this.input.uid;
  }

  apply(e: CsrEvent): void {
    if ('deletedUid' in e) {
      // the deletion of another CSR under the name (this run's successor) changes nothing here
      if (e.deletedUid === this.uid) this.deleted = true;
      return;
    }
    this.csr = e.csr;
    this.deleted = false;
  }

  /** the input of a run for `uid`: this one's next (continue-as-new) or a new CSR's under the name */
  inputFor(uid: string): CsrWorkflowInput {
    return { ...this.input, uid, csr: this.csr?.uid === uid ? this.csr : undefined };
  }
}
