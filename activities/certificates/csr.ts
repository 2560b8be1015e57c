import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import type { CsrFacts } from '../../workflows/common/csr';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { parseCsr } from './x509';

/** What the approver and signer read of a CSR (the request to parse it; the certificate only to see it is there). */
export const CSR_FACT_FIELDS: FieldMask = {
  metadata: true,
  spec: { signerName: true, username: true, usages: true, expirationSeconds: true, request: true },
  status: { certificate: true, conditions: { type: true, status: true } },
};

/** The facts the approver and signer decide on, with the request parsed (spec.request is base64 PEM in JSON). */
export function csrFacts(o: KubeObject | V1CertificateSigningRequest): CsrFacts {
  const c = o as unknown as V1CertificateSigningRequest;
  const m = c.metadata ?? {};
  const conditions = c.status?.conditions ?? [];
  const has = (type: string) => conditions.some((x) => x.type === type);
  let parsed: Pick<CsrFacts, 'request' | 'parseError'>;
  try {
    parsed = { request: parseCsr(Buffer.from(c.spec?.request ?? '', 'base64').toString('latin1')).facts };
  } catch (e) {
    parsed = { parseError: (e as Error).message || 'unparseable request' };
  }
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    signerName: c.spec?.signerName ?? '',
    username: c.spec?.username ?? '',
    usages: c.spec?.usages ?? [],
    ...(c.spec?.expirationSeconds !== undefined && c.spec.expirationSeconds !== null ? { expirationSeconds: c.spec.expirationSeconds } : {}),
    approved: has('Approved'),
    denied: has('Denied'),
    failed: conditions.some((x) => x.type === 'Failed' && (!x.status || x.status === 'True')),
    issued: (c.status?.certificate ?? '').length > 0,
    ...parsed,
  };
}
