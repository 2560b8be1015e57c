import { BUILTIN_SIGNERS, isApproved, type BuiltinSigner, type CsrFacts } from '../common/csr';

/**
 * Upstream's CSR signer (pkg/controller/certificates/signer and authority) and the flag rules of
 * cmd/kube-controller-manager/app (certificates.go, options/csrsigningcontroller.go): which
 * signers start on which files, how long a certificate lives, and which key usages it carries.
 * Pure: the activity that signs applies these to the request it reads.
 */

export const CONTROLLER = 'csrsigning';

/** The Failed condition's reason when a signer's checks reject a request. */
export const SIGNER_FAILURE_REASON = 'SignerValidationFailure';

/** Backdating of NotBefore, and the lifetime under which it is not taken off NotAfter (upstream's 5 min and 8 h). */
export const BACKDATE_MS = 5 * 60_000;
export const SHORT_MS = 8 * 3600_000;
/** The shortest lifetime a CSR's expirationSeconds may ask for. */
export const MIN_DURATION_MS = 10 * 60_000;

/** The --cluster-signing-* file flags, as given ('' when not). */
export interface SigningFiles {
  certFile: string;
  keyFile: string;
  kubeletServing: { certFile: string; keyFile: string };
  kubeletClient: { certFile: string; keyFile: string };
  kubeApiServerClient: { certFile: string; keyFile: string };
  legacyUnknown: { certFile: string; keyFile: string };
}

export interface CaFiles {
  certFile: string;
  keyFile: string;
}

const PER_SIGNER: ReadonlyArray<[BuiltinSigner, keyof Omit<SigningFiles, 'certFile' | 'keyFile'>, string]> = [
  ['kubernetes.io/kubelet-serving', 'kubeletServing', 'cluster-signing-kubelet-serving'],
  ['kubernetes.io/kube-apiserver-client-kubelet', 'kubeletClient', 'cluster-signing-kube-apiserver-client'],
  ['kubernetes.io/kube-apiserver-client', 'kubeApiServerClient', 'cluster-signing-kube-apiserver'],
  ['kubernetes.io/legacy-unknown', 'legacyUnknown', 'cluster-signing-legacy-unknown'],
];

const anySpecific = (f: SigningFiles) => PER_SIGNER.some(([, k]) => f[k].certFile !== '' || f[k].keyFile !== '');

/**
 * Upstream's option validation (a bad combination stops the manager before it starts), its
 * messages included: upstream names the per-signer pairs as its code does, the kubelet client
 * pair as "cluster-signing-kube-apiserver-client" and the kube-apiserver client pair as
 * "cluster-signing-kube-apiserver".
 */
export function signingFlagProblems(f: SigningFiles): string[] {
  const out: string[] = [];
  for (const [, k, label] of PER_SIGNER) {
    const { certFile, keyFile } = f[k];
    if (certFile === '' && keyFile !== '') out.push(`"${label}": cannot specify key without cert`);
    if (certFile !== '' && keyFile === '') out.push(`"${label}": cannot specify cert without key`);
  }
  if ((f.certFile !== '' || f.keyFile !== '') && anySpecific(f)) {
    out.push('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
  }
  return out;
}

export type SignerPlan =
  | { kind: 'skip'; message: string }
  | { kind: 'error'; message: string }
  | { kind: 'start'; signers: Partial<Record<BuiltinSigner, CaFiles>>; skipped: BuiltinSigner[] };

/**
 * Which signers start, on which files: with the cluster-wide pair, all four on it; with per-signer
 * pairs, each signer that has one (a pair half given still starts it, and fails to read a file);
 * with neither, the controller is skipped.
 */
export function signerPlan(f: SigningFiles): SignerPlan {
  const missingSingle = f.certFile === '' || f.keyFile === '';
  const specific = anySpecific(f);
  if (missingSingle && !specific) return { kind: 'skip', message: 'Skipping CSR signer controller because no csr cert/key was specified' };
  if (!missingSingle && specific) return { kind: 'error', message: 'cannot specify default and per controller certs at the same time' };
  const signers: Partial<Record<BuiltinSigner, CaFiles>> = {};
  const skipped: BuiltinSigner[] = [];
  for (const [signer, k] of PER_SIGNER) {
    const files = specific ? f[k] : { certFile: f.certFile, keyFile: f.keyFile };
    if (files.certFile !== '' || files.keyFile !== '') signers[signer] = files;
    else skipped.push(signer);
  }
  return { kind: 'start', signers, skipped };
}

/** The signers a plan starts, in upstream's order. */
export const startedSigners = (p: SignerPlan): BuiltinSigner[] =>
  p.kind === 'start' ? BUILTIN_SIGNERS.filter((s) => p.signers[s] !== undefined) : [];

/** Worth a workflow: approved (not denied), not failed, not yet issued, for a signer this deployment runs. */
export function needsSigning(c: CsrFacts, signers: readonly string[]): boolean {
  return isApproved(c) && !c.failed && !c.issued && signers.includes(c.signerName);
}

/**
 * The lifetime asked for: --cluster-signing-duration, or the CSR's expirationSeconds within
 * [10 min, that duration].
 */
export function certificateDurationMs(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined) return maxMs;
  const asked = expirationSeconds * 1000;
  if (asked > maxMs) return maxMs;
  if (asked < MIN_DURATION_MS) return MIN_DURATION_MS;
  return asked;
}

export type Validity = { notBeforeMs: number; notAfterMs: number } | { error: string };

/**
 * NotBefore and NotAfter as upstream's permissive policy sets them: NotBefore backdated by 5
 * minutes; NotAfter `ttl` from now, less the backdating unless the lifetime is short (under 8 h);
 * never past the CA's own NotAfter. A CA past its NotAfter signs nothing. Go formats the errors'
 * times with time.Time's String, which is left to the caller (`caNotAfterText`).
 */
export function certificateValidity(nowMs: number, ttlMs: number, caNotAfterMs: number, caNotAfterText: string): Validity {
  const notBeforeMs = nowMs - BACKDATE_MS;
  let notAfterMs = ttlMs < SHORT_MS ? nowMs + ttlMs : nowMs + ttlMs - BACKDATE_MS;
  if (!(notAfterMs < caNotAfterMs)) notAfterMs = caNotAfterMs;
  if (!(notBeforeMs < caNotAfterMs)) return { error: `the signer has expired: NotAfter=${caNotAfterText}` };
  if (!(nowMs < caNotAfterMs)) return { error: `refusing to sign a certificate that expired in the past: NotAfter=${caNotAfterText}` };
  return { notBeforeMs, notAfterMs };
}

/** X.509 KeyUsage bits (bit 0 = digitalSignature ... bit 8 = decipherOnly) by CSR usage. */
const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'key agreement': 4,
  'data encipherment': 3,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

/** Extended key usages by CSR usage: Go's enum rank (its sort order) and OID. */
const EXT_KEY_USAGES: Readonly<Record<string, { rank: number; oid: string }>> = {
  any: { rank: 0, oid: '2.5.29.37.0' },
  'server auth': { rank: 1, oid: '1.3.6.1.5.5.7.3.1' },
  'client auth': { rank: 2, oid: '1.3.6.1.5.5.7.3.2' },
  'code signing': { rank: 3, oid: '1.3.6.1.5.5.7.3.3' },
  'email protection': { rank: 4, oid: '1.3.6.1.5.5.7.3.4' },
  's/mime': { rank: 4, oid: '1.3.6.1.5.5.7.3.4' },
  'ipsec end system': { rank: 5, oid: '1.3.6.1.5.5.7.3.5' },
  'ipsec tunnel': { rank: 6, oid: '1.3.6.1.5.5.7.3.6' },
  'ipsec user': { rank: 7, oid: '1.3.6.1.5.5.7.3.7' },
  timestamping: { rank: 8, oid: '1.3.6.1.5.5.7.3.8' },
  'ocsp signing': { rank: 9, oid: '1.3.6.1.5.5.7.3.9' },
  'microsoft sgc': { rank: 10, oid: '1.3.6.1.4.1.311.10.3.3' },
  'netscape sgc': { rank: 11, oid: '2.16.840.1.113730.4.1' },
};

export type KeyUsages = { keyUsageBits: number[]; extKeyUsageOids: string[] } | { error: string };

/** The certificate's key usages and extended key usages (deduplicated, in Go's order), or upstream's error for unknown ones. */
export function keyUsagesOf(usages: readonly string[]): KeyUsages {
  const bits = new Set<number>();
  const ext = new Map<number, string>();
  const unknown: string[] = [];
  for (const u of usages) {
    if (u in KEY_USAGE_BITS) bits.add(KEY_USAGE_BITS[u]);
    else if (u in EXT_KEY_USAGES) ext.set(EXT_KEY_USAGES[u].rank, EXT_KEY_USAGES[u].oid);
    else unknown.push(u);
  }
  if (unknown.length) return { error: `unrecognized usage values: [${unknown.map((u) => JSON.stringify(u)).join(' ')}]` };
  return { keyUsageBits: [...bits].sort((a, b) => a - b), extKeyUsageOids: [...ext.entries()].sort((a, b) => a[0] - b[0]).map(([, o]) => o) };
}
