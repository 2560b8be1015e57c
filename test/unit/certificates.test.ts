import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { csrSigningController } from '../../activities/csrsigning/controller';
import { issueCertificate, loadCertificateAuthority, parseCsr, verifyCsrSignature } from '../../activities/certificates/x509';
import { apiServerClientProblem, kubeletClientProblem, kubeletServingProblem, signerProblem, type CsrFacts } from '../../workflows/common/csr';
import { recognizedAs, needsApproval, notApprovedMessage } from '../../workflows/csrapproving/logic';
import {
  certificateDurationMs, certificateValidity, keyUsagesOf, needsSigning, signerPlan, signingFlagProblems, startedSigners, type SigningFiles,
} from '../../workflows/csrsigning/logic';
import { makeCa, makeCsr } from '../support/x509';

const CLIENT = ['digital signature', 'key encipherment', 'client auth'];
const node = (name: string) => ({ commonName: `system:node:${name}`, organizations: ['system:nodes'], dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] });

const facts = (over: Partial<CsrFacts> = {}): CsrFacts => ({
  name: 'csr-1', uid: 'u1', resourceVersion: '1', signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
  username: 'system:bootstrap:abcdef', usages: CLIENT, approved: false, denied: false, failed: false, issued: false,
  request: node('n1'), ...over,
});

describe('upstream request checks', () => {
  test('kubelet client: organization, SANs, common name, usages, in upstream order', () => {
    expect(kubeletClientProblem(node('a'), CLIENT)).toBeUndefined();
    expect(kubeletClientProblem(node('a'), ['digital signature', 'client auth'])).toBeUndefined();
    expect(kubeletClientProblem(node('a'), ['client auth', 'digital signature', 'client auth'])).toBeUndefined();
    expect(kubeletClientProblem({ ...node('a'), organizations: ['system:nodes', 'x'] }, CLIENT)).toBe('subject organization is not system:nodes');
    expect(kubeletClientProblem({ ...node('a'), dnsNames: ['a'] }, CLIENT)).toBe('DNS subjectAltNames are not allowed');
    expect(kubeletClientProblem({ ...node('a'), ipAddresses: ['1.2.3.4'] }, CLIENT)).toBe('IP subjectAltNames are not allowed');
    expect(kubeletClientProblem({ ...node('a'), commonName: 'a' }, ['server auth'])).toBe('subject common name does not begin with system:node:');
    expect(kubeletClientProblem(node('a'), ['server auth'])).toBe('usages did not match [client auth digital signature key encipherment]');
  });
  test('kubelet serving: SAN required, usages before common name', () => {
    const r = { ...node('a'), dnsNames: ['a.example'] };
    expect(kubeletServingProblem(r, ['digital signature', 'key encipherment', 'server auth'])).toBeUndefined();
    expect(kubeletServingProblem(node('a'), ['server auth'])).toBe('DNS or IP subjectAltName is required');
    expect(kubeletServingProblem({ ...r, commonName: 'x' }, CLIENT)).toBe('usages did not match [digital signature key encipherment server auth]');
  });
  test('kube-apiserver client: client auth required, only signing usages besides', () => {
    expect(apiServerClientProblem(['client auth'])).toBeUndefined();
    expect(apiServerClientProblem(['digital signature', 'server auth'])).toBe('invalid usage for client certificate: server auth');
    expect(apiServerClientProblem(['digital signature'])).toBe('missing required usage for client certificate: client auth');
    expect(signerProblem('kubernetes.io/legacy-unknown', node('a'), ['anything'])).toBeUndefined();
  });
});

describe('approver recognizers', () => {
  test('a bootstrap request is nodeclient; a node renewing its own is selfnodeclient first', () => {
    expect(recognizedAs(facts())).toEqual(['nodeclient']);
    expect(recognizedAs(facts({ username: 'system:node:n1' }))).toEqual(['selfnodeclient', 'nodeclient']);
    expect(recognizedAs(facts({ signerName: 'kubernetes.io/kubelet-serving' }))).toEqual([]);
    expect(recognizedAs(facts({ request: undefined, parseError: 'bad' }))).toEqual([]);
    expect(recognizedAs(facts({ usages: ['client auth'] }))).toEqual([]);
  });
  test('only pending requests need approval', () => {
    expect(needsApproval(facts())).toBe(true);
    expect(needsApproval(facts({ approved: true }))).toBe(false);
    expect(needsApproval(facts({ denied: true }))).toBe(false);
    expect(needsApproval(facts({ issued: true }))).toBe(false);
    expect(notApprovedMessage('c', ['selfnodeclient', 'nodeclient'])).toBe('recognized csr "c" as [selfnodeclient nodeclient] but subject access review was not approved');
  });
});

describe('signer flags and plan', () => {
  const none = { certFile: '', keyFile: '' };
  const files = (over: Partial<SigningFiles> = {}): SigningFiles => ({
    certFile: '', keyFile: '', kubeletServing: none, kubeletClient: none, kubeApiServerClient: none, legacyUnknown: none, ...over,
  });
  test('upstream validation messages', () => {
    expect(signingFlagProblems(files({ certFile: 'c', keyFile: 'k' }))).toEqual([]);
    expect(signingFlagProblems(files({ kubeletClient: { certFile: '', keyFile: 'k' } }))).toEqual(['"cluster-signing-kube-apiserver-client": cannot specify key without cert']);
    expect(signingFlagProblems(files({ certFile: 'c', kubeApiServerClient: { certFile: 'c', keyFile: '' } }))).toEqual([
      '"cluster-signing-kube-apiserver": cannot specify cert without key',
      'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
    ]);
  });
  test('which signers start', () => {
    expect(signerPlan(files())).toEqual({ kind: 'skip', message: 'Skipping CSR signer controller because no csr cert/key was specified' });
    expect(signerPlan(files({ certFile: 'c' })).kind).toBe('skip');
    expect(startedSigners(signerPlan(files({ certFile: 'c', keyFile: 'k' })))).toEqual([
      'kubernetes.io/kubelet-serving', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kube-apiserver-client', 'kubernetes.io/legacy-unknown',
    ]);
    const only = signerPlan(files({ kubeletClient: { certFile: 'c', keyFile: 'k' } }));
    expect(startedSigners(only)).toEqual(['kubernetes.io/kube-apiserver-client-kubelet']);
    expect(signerPlan(files({ certFile: 'c', keyFile: 'k', legacyUnknown: { certFile: 'c', keyFile: 'k' } })).kind).toBe('error');
  });
  test('only approved, unfailed, unissued requests of a started signer are signed', () => {
    const s = ['kubernetes.io/kube-apiserver-client-kubelet'];
    expect(needsSigning(facts({ approved: true }), s)).toBe(true);
    expect(needsSigning(facts({ approved: true, denied: true }), s)).toBe(false);
    expect(needsSigning(facts({ approved: true, failed: true }), s)).toBe(false);
    expect(needsSigning(facts({ approved: true, issued: true }), s)).toBe(false);
    expect(needsSigning(facts({ approved: true, signerName: 'example.com/x' }), s)).toBe(false);
  });
});

describe('certificate lifetime', () => {
  const year = 8760 * 3600_000;
  test('expirationSeconds within [10 min, --cluster-signing-duration]', () => {
    expect(certificateDurationMs(undefined, year)).toBe(year);
    expect(certificateDurationMs(60, year)).toBe(600_000);
    expect(certificateDurationMs(3600, year)).toBe(3600_000);
    expect(certificateDurationMs(10 * 8760 * 3600, year)).toBe(year);
  });
  test('backdated NotBefore; NotAfter less the backdate unless short; capped by the CA', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(certificateValidity(now, 3600_000, now + year, '')).toEqual({ notBeforeMs: now - 300_000, notAfterMs: now + 3600_000 });
    expect(certificateValidity(now, year, now + 2 * year, '')).toEqual({ notBeforeMs: now - 300_000, notAfterMs: now + year - 300_000 });
    expect(certificateValidity(now, year, now + 1000, '')).toEqual({ notBeforeMs: now - 300_000, notAfterMs: now + 1000 });
    expect(certificateValidity(now, year, now - 1000, 'T')).toEqual({ error: 'refusing to sign a certificate that expired in the past: NotAfter=T' });
    expect(certificateValidity(now, year, now - 400_000, 'T')).toEqual({ error: 'the signer has expired: NotAfter=T' });
  });
  test('key usages in Go order; unknown ones rejected', () => {
    expect(keyUsagesOf(['client auth', 'server auth', 'key encipherment', 'digital signature', 'signing'])).toEqual({
      keyUsageBits: [0, 2], extKeyUsageOids: ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2'],
    });
    expect(keyUsagesOf(['client auth', 'nope'])).toEqual({ error: 'unrecognized usage values: ["nope"]' });
  });
});

describe('x509', () => {
  test('a kubelet CSR parses, verifies and is signed by an RSA and an ECDSA CA', () => {
    const { csrPem } = makeCsr({ cn: 'system:node:n1', o: ['system:nodes'] });
    const csr = parseCsr(csrPem);
    expect(csr.facts).toEqual(node('n1'));
    verifyCsrSignature(csr);
    for (const ec of [false, true]) {
      const caFiles = makeCa({ ec });
      const ca = loadCertificateAuthority(caFiles.certPem, caFiles.keyPem, 'ca.crt', 'ca.key');
      const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - 300_000);
      const notAfter = new Date(notBefore.getTime() + 3600_000);
      const issued = issueCertificate(ca, csr, { notBefore, notAfter, keyUsageBits: [0, 2], extKeyUsageOids: ['1.3.6.1.5.5.7.3.2'] });
      const cert = new X509Certificate(issued.pem);
      expect(cert.verify(new X509Certificate(caFiles.certPem).publicKey)).toBe(true);
      expect(cert.subject).toBe('O=system:nodes\nCN=system:node:n1');
      expect(cert.issuer).toBe('CN=test-ca');
      expect(cert.ca).toBe(false);
      expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
      expect(new Date(cert.validFrom).getTime()).toBe(notBefore.getTime());
      expect(new Date(cert.validTo).getTime()).toBe(notAfter.getTime());
      expect(cert.serialNumber.toLowerCase()).toBe(issued.serialNumber.replace(/^00/, '').toLowerCase());
    }
  });
  test('serving SANs are read and copied', () => {
    const csr = parseCsr(makeCsr({ cn: 'system:node:n1', o: ['system:nodes'], dnsNames: ['n1.example'], ipAddresses: ['10.0.0.1'] }).csrPem);
    expect(csr.facts.dnsNames).toEqual(['n1.example']);
    expect(csr.facts.ipAddresses).toEqual(['10.0.0.1']);
    const caFiles = makeCa();
    const issued = issueCertificate(loadCertificateAuthority(caFiles.certPem, caFiles.keyPem, 'c', 'k'), csr,
      { notBefore: new Date(), notAfter: new Date(Date.now() + 3600_000), keyUsageBits: [0], extKeyUsageOids: ['1.3.6.1.5.5.7.3.1'] });
    expect(new X509Certificate(issued.pem).subjectAltName).toBe('DNS:n1.example, IP Address:10.0.0.1');
  });
  test('bad input: not a CSR, a tampered signature, a key of another CA', () => {
    expect(() => parseCsr('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toThrow('PEM block type must be CERTIFICATE REQUEST');
    const { csrPem } = makeCsr({ cn: 'system:node:n1', o: ['system:nodes'], privateKey: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey });
    const csr = parseCsr(csrPem);
    verifyCsrSignature(csr);
    new Uint8Array(csr.request.signature)[10] ^= 0xff;
    expect(() => verifyCsrSignature(csr)).toThrow('unable to verify certificate request signature');
    const a = makeCa();
    const b = makeCa();
    expect(() => loadCertificateAuthority(a.certPem, b.keyPem, 'a.crt', 'b.key')).toThrow('private key does not match public key');
    expect(() => loadCertificateAuthority(a.certPem + a.certPem, a.keyPem, 'a.crt', 'a.key')).toThrow('expected 1 certificate, found 2');
  });
});

describe('csrsigning start', () => {
  const check = (flags: Record<string, string>) => csrSigningController.precondition!({ flags });
  test('skipped without files, stopped by unreadable or mismatched ones, started with a good CA', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csrsigning-'));
    const a = makeCa();
    const b = makeCa();
    fs.writeFileSync(path.join(dir, 'a.crt'), a.certPem);
    fs.writeFileSync(path.join(dir, 'a.key'), a.keyPem);
    fs.writeFileSync(path.join(dir, 'b.key'), b.keyPem);
    expect(check({})).toEqual({ fatal: false, message: 'Skipping CSR signer controller because no csr cert/key was specified' });
    expect(check({ 'cluster-signing-cert-file': path.join(dir, 'a.crt'), 'cluster-signing-key-file': path.join(dir, 'a.key') })).toBeUndefined();
    expect(check({ 'cluster-signing-cert-file': path.join(dir, 'a.crt'), 'cluster-signing-key-file': path.join(dir, 'b.key') })).toMatchObject({
      fatal: true, message: expect.stringContaining('failed to init kubernetes.io/kubelet-serving certificate controller'),
    });
    expect(check({ 'cluster-signing-kube-apiserver-client-cert-file': path.join(dir, 'gone.crt'), 'cluster-signing-kube-apiserver-client-key-file': path.join(dir, 'a.key') }))
      .toMatchObject({ fatal: true, message: expect.stringContaining('failed to init kubernetes.io/kube-apiserver-client certificate controller: error reading CA cert file') });
    fs.rmSync(dir, { recursive: true });
  });
});
