import { CertificationRequest, CertificationRequestInfo, Attributes } from '@peculiar/asn1-csr';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  Attribute,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  Extension,
  Extensions,
  GeneralName,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';
import { createHash, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { pem } from '../../activities/certificates/x509';

/*
 * Test-side PKCS#10 and CA making, with the same ASN.1 library the signer uses: the CSRs a
 * kubelet sends (ECDSA P-256, O=system:nodes, CN=system:node:<name>) and throwaway CAs.
 */

const SIG = {
  ecdsaSha256: '1.2.840.10045.4.3.2',
  rsaSha256: '1.2.840.113549.1.1.11',
};

export interface SubjectSpec {
  cn?: string;
  o?: string[];
}

function name(s: SubjectSpec): Name {
  const rdns: RelativeDistinguishedName[] = [];
  for (const o of s.o ?? []) rdns.push(new RelativeDistinguishedName([new AttributeTypeAndValue({ type: '2.5.4.10', value: new AttributeValue({ utf8String: o }) })]));
  if (s.cn !== undefined) rdns.push(new RelativeDistinguishedName([new AttributeTypeAndValue({ type: '2.5.4.3', value: new AttributeValue({ utf8String: s.cn }) })]));
  return new Name(rdns);
}

function spkiOf(key: KeyObject): SubjectPublicKeyInfo {
  return AsnConvert.parse(key.export({ format: 'der', type: 'spki' }), SubjectPublicKeyInfo);
}

const algOf = (key: KeyObject) => key.asymmetricKeyType === 'rsa'
  ? new AlgorithmIdentifier({ algorithm: SIG.rsaSha256, parameters: null })
  : new AlgorithmIdentifier({ algorithm: SIG.ecdsaSha256 });

export interface CsrSpec extends SubjectSpec {
  dnsNames?: string[];
  ipAddresses?: string[];
  /** default: a new ECDSA P-256 key */
  privateKey?: KeyObject;
}

/** A PEM CSR and its private key (PEM, for a client certificate's kubeconfig). */
export function makeCsr(spec: CsrSpec): { csrPem: string; keyPem: string; privateKey: KeyObject } {
  const privateKey = spec.privateKey ?? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const publicKey = createPublicKey(privateKey);
  const attrs: Attribute[] = [];
  const sans = [...(spec.dnsNames ?? []).map((d) => new GeneralName({ dNSName: d })), ...(spec.ipAddresses ?? []).map((ip) => new GeneralName({ iPAddress: ip }))];
  if (sans.length) {
    const exts = new Extensions([new Extension({ extnID: '2.5.29.17', critical: false, extnValue: new OctetString(AsnConvert.serialize(new SubjectAlternativeName(sans))) })]);
    attrs.push(new Attribute({ type: '1.2.840.113549.1.9.14', values: [AsnConvert.serialize(exts)] }));
  }
  const info = new CertificationRequestInfo({ version: 0, subject: name(spec), subjectPKInfo: spkiOf(publicKey), attributes: new Attributes(attrs) });
  const der = Buffer.from(AsnConvert.serialize(info));
  const signature = sign('sha256', der, privateKey);
  const req = new CertificationRequest({ certificationRequestInfo: info, signatureAlgorithm: algOf(privateKey), signature: new Uint8Array(signature).buffer });
  return {
    csrPem: pem('CERTIFICATE REQUEST', new Uint8Array(AsnConvert.serialize(req))),
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    privateKey,
  };
}

/** A self-signed CA (RSA 2048 unless `ec`), valid from `notBefore` to `notAfter`, with a subjectKeyIdentifier. */
export function makeCa(opts: { cn?: string; ec?: boolean; notBefore?: Date; notAfter?: Date } = {}): { certPem: string; keyPem: string } {
  const { privateKey, publicKey } = opts.ec ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const subject = name({ cn: opts.cn ?? 'test-ca' });
  const spki = spkiOf(publicKey);
  const skid = createHash('sha1').update(Buffer.from(spki.subjectPublicKey)).digest();
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: new Uint8Array([1]).buffer,
    signature: algOf(privateKey),
    issuer: subject,
    validity: new Validity({ notBefore: opts.notBefore ?? new Date(Date.now() - 3600_000), notAfter: opts.notAfter ?? new Date(Date.now() + 365 * 86400_000) }),
    subject,
    subjectPublicKeyInfo: spki,
    extensions: new Extensions([
      new Extension({ extnID: '2.5.29.19', critical: true, extnValue: new OctetString(AsnConvert.serialize(new BasicConstraints({ cA: true }))) }),
      new Extension({ extnID: '2.5.29.14', critical: false, extnValue: new OctetString(AsnConvert.serialize(new SubjectKeyIdentifier(new Uint8Array(skid)))) }),
    ]),
  });
  const signature = sign('sha256', Buffer.from(AsnConvert.serialize(tbs)), privateKey);
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: algOf(privateKey), signatureValue: new Uint8Array(signature).buffer });
  return { certPem: pem('CERTIFICATE', new Uint8Array(AsnConvert.serialize(cert))), keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}
