import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import * as fs from 'node:fs';
import type { Logger } from 'pino';
import { isApproved, isBuiltinSigner, signerProblem } from '../../workflows/common/csr';
import {
  CONTROLLER, SIGNER_FAILURE_REASON, certificateDurationMs, certificateValidity, keyUsagesOf, signerPlan,
} from '../../workflows/csrsigning/logic';
import type { FlagValues } from '../../workers/flags';
import { csrFacts } from '../certificates/csr';
import { issueCertificate, loadCertificateAuthority, parseCsr, verifyCsrSignature } from '../certificates/x509';
import { apiCall, isStatus } from '../kube/failures';
import { heartbeating } from '../kube/heartbeat';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { signingDurationMs, signingFilesOf } from './settings';

/** What the workflow asks: sign this CSR (name, UID, signer), and why. Never a key, never a request. */
export interface SignCsrRequest {
  name: string;
  uid: string;
  signerName: string;
  reason: string;
}

/** What a signing did. The certificate itself stays in the CSR; only its serial and validity come back. */
export interface SignCsrResult {
  /**
   * `issued`: written now; `already-issued`: the CSR had a certificate (a retry after a write whose
   * result was lost, or another signer); `failed-condition`: the signer's checks failed and the
   * Failed condition was written; `not-approved`: not (or no longer) approved, or denied or failed;
   * `rejected`: the request or the CA cannot be signed with (retried after a backoff, as upstream).
   */
  outcome: 'issued' | 'already-issued' | 'failed-condition' | 'not-approved' | 'not-for-signer' | 'gone' | 'replaced' | 'rejected';
  /** the CSR's resourceVersion after the write (or as read) */
  resourceVersion?: string;
  serialNumber?: string;
  /** RFC 3339 */
  notBefore?: string;
  notAfter?: string;
  /** the Failed condition's message, or why it was rejected */
  message?: string;
}

export interface CsrSigningDeps {
  /** the controller's client (certificate-controller): CSR reads and the /status subresource */
  rest: KubeRest;
  logger: Logger;
  flags: FlagValues;
}

const csrPath = (name: string) => resourcePath(RESOURCES.certificateSigningRequests, undefined, name);
const WRITE_ATTEMPTS = 5;

/** Go's time.Time String() for a UTC time, as upstream's signer-expired errors print it. */
const goTime = (d: Date) => `${d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')} +0000 UTC`;
/** metav1.Time is to the second. */
const metaNow = () => new Date(Math.floor(Date.now() / 1000) * 1000);

/**
 * The CSR signer's one activity. It reads the CSR from the API (the workflow passes only its name
 * and UID), reads the CA certificate and key from their files itself, and writes either the
 * certificate or the Failed condition to /status on the CSR exactly as read: the resourceVersion
 * guards the write, so of two attempts racing (a replica killed after its write, its retry on
 * another) one wins and the other, re-reading, finds the certificate there and writes nothing.
 */
export function createCsrSigningActivities(deps: CsrSigningDeps) {
  const rest = heartbeating(deps.rest);
  const log = deps.logger.child({ controller: CONTROLLER });
  const plan = signerPlan(signingFilesOf(deps.flags));
  const maxMs = signingDurationMs(deps.flags);

  async function writeStatus(csr: V1CertificateSigningRequest): Promise<string | undefined> {
    const written = (await rest.request<V1CertificateSigningRequest>('PUT', `${csrPath(csr.metadata?.name ?? '')}/status`, { body: csr })).body;
    return written.metadata?.resourceVersion;
  }

  async function attempt(req: SignCsrRequest): Promise<SignCsrResult | 'conflict'> {
    let csr: V1CertificateSigningRequest;
    try {
      csr = (await rest.request<V1CertificateSigningRequest>('GET', csrPath(req.name))).body;
    } catch (e) {
      if (isStatus(e, 404)) return { outcome: 'gone' };
      throw e;
    }
    const rv = csr.metadata?.resourceVersion;
    if (csr.metadata?.uid !== req.uid) return { outcome: 'replaced' };
    const f = csrFacts(csr);
    if (f.issued) return { outcome: 'already-issued', resourceVersion: rv };
    if (!isApproved(f) || f.failed) return { outcome: 'not-approved', resourceVersion: rv };
    const files = plan.kind === 'start' && isBuiltinSigner(f.signerName) ? plan.signers[f.signerName] : undefined;
    if (f.signerName !== req.signerName || !files || !isBuiltinSigner(f.signerName)) return { outcome: 'not-for-signer', resourceVersion: rv };
    if (!f.request) return { outcome: 'rejected', message: `unable to parse csr "${req.name}": ${f.parseError ?? 'unparseable'}` };

    const problem = signerProblem(f.signerName, f.request, f.usages);
    if (problem !== undefined) {
      const failed: V1CertificateSigningRequest = {
        ...csr,
        status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []),
          { type: 'Failed', status: 'True', reason: SIGNER_FAILURE_REASON, message: problem, lastUpdateTime: metaNow() }] },
      };
      try {
        const resourceVersion = await writeStatus(failed);
        log.info({ csr: req.name, uid: req.uid, signer: f.signerName, message: problem, reason: req.reason }, 'certificate signing request failed the signer\'s checks');
        return { outcome: 'failed-condition', resourceVersion, message: problem };
      } catch (e) {
        if (isStatus(e, 409)) return 'conflict';
        if (isStatus(e, 404)) return { outcome: 'gone' };
        throw e;
      }
    }

    // the request's own signature, the CA, the lifetime and the usages: a failure here is upstream's
    // "error auto signing csr", retried after a backoff without touching the CSR
    let issued: { pem: string; serialNumber: string; notBefore: Date; notAfter: Date };
    try {
      const parsed = parseCsr(Buffer.from(csr.spec.request, 'base64').toString('latin1'));
      verifyCsrSignature(parsed);
      const ca = loadCertificateAuthority(fs.readFileSync(files.certFile, 'utf8'), fs.readFileSync(files.keyFile, 'utf8'), files.certFile, files.keyFile);
      const now = Math.floor(Date.now() / 1000) * 1000;
      const ttl = certificateDurationMs(f.expirationSeconds, maxMs);
      const validity = certificateValidity(now, ttl, ca.notAfter.getTime(), goTime(ca.notAfter));
      if ('error' in validity) throw new Error(validity.error);
      const usages = keyUsagesOf(f.usages);
      if ('error' in usages) throw new Error(usages.error);
      const notBefore = new Date(validity.notBeforeMs);
      const notAfter = new Date(validity.notAfterMs);
      issued = { ...issueCertificate(ca, parsed, { notBefore, notAfter, ...usages }), notBefore, notAfter };
    } catch (e) {
      const message = `error auto signing csr: ${e instanceof Error ? e.message : String(e)}`;
      log.warn({ csr: req.name, uid: req.uid, signer: f.signerName, message }, 'certificate signing request not signed');
      return { outcome: 'rejected', message };
    }
    const body: V1CertificateSigningRequest = { ...csr, status: { ...csr.status, certificate: Buffer.from(issued.pem).toString('base64') } };
    try {
      const resourceVersion = await writeStatus(body);
      const result = {
        outcome: 'issued' as const, resourceVersion, serialNumber: issued.serialNumber,
        notBefore: issued.notBefore.toISOString(), notAfter: issued.notAfter.toISOString(),
      };
      log.info({ csr: req.name, uid: req.uid, signer: f.signerName, serialNumber: result.serialNumber, notBefore: result.notBefore,
        notAfter: result.notAfter, reason: req.reason }, 'issued certificate');
      return result;
    } catch (e) {
      // another attempt (or anyone) changed it since the read: read again, and find out
      if (isStatus(e, 409)) return 'conflict';
      if (isStatus(e, 404)) return { outcome: 'gone' };
      throw e;
    }
  }

  return {
    /** Issues the CSR's certificate (or its Failed condition) unless it is already settled. */
    async signCsr(req: SignCsrRequest): Promise<SignCsrResult> {
      return apiCall(async () => {
        for (let i = 1; i <= WRITE_ATTEMPTS; i++) {
          const r = await attempt(req);
          if (r !== 'conflict') return r;
        }
        throw new Error(`certificate signing request ${req.name} kept changing while being signed`);
      });
    },
  };
}

export type CsrSigningActivities = ReturnType<typeof createCsrSigningActivities>;
