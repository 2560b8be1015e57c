/*
 * PKCS#10 requests in, X.509 certificates out, for the CSR approver and signer.
 *
 * Why these libraries: @peculiar/asn1-csr and @peculiar/asn1-x509 (PeculiarVentures, the
 * maintained ASN.1 schemas under @peculiar/x509 and PKI.js) give the exact DER structures of
 * RFC 2986 and RFC 5280, for RSA, ECDSA (P-256, P-384, P-521) and Ed25519 keys alike. Building the
 * TBSCertificate from them lets us lay it out as Go's x509.CreateCertificate does (subject
 * re-encoded in Go's attribute order, extensions in Go's order and criticality). The keys and
 * signatures stay in node:crypto, which reads every PEM key format kubeadm and openssl write
 * (PKCS#1, PKCS#8, SEC1); node-forge cannot read EC keys, and @peculiar/x509 itself needs a
 * global reflect-metadata polyfill (tsyringe) we would rather not load into the manager.
 *
 * The CA private key is read from its file by the signing activity, used here, and dropped: it is
 * never returned, logged or put in an error message.
 */
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { CertificationRequest } from '@peculiar/asn1-csr';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  KeyIdentifier,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';
import { createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import type { CsrRequestFacts } from '../../workflows/common/csr';

const OID = {
  cn: '2.5.4.3',
  serialNumber: '2.5.4.5',
  c: '2.5.4.6',
  l: '2.5.4.7',
  st: '2.5.4.8',
  street: '2.5.4.9',
  o: '2.5.4.10',
  ou: '2.5.4.11',
  postalCode: '2.5.4.17',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
} as const;

/** Go's pkix.Name.ToRDNSequence order: the attributes it knows; others are dropped on re-encoding. */
const SUBJECT_ORDER = [OID.c, OID.o, OID.ou, OID.l, OID.st, OID.street, OID.postalCode, OID.serialNumber, OID.cn];

/** Signature algorithms a request may be signed with: OID -> node's digest (null: Ed25519). */
const VERIFY_ALGORITHMS: Readonly<Record<string, string | null>> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

export interface ParsedCsr {
  facts: CsrRequestFacts;
  /** the request's DER: what the certificate is made from */
  request: CertificationRequest;
}

/** The first PEM block of `text`: its type and DER, or undefined when there is none. */
export function firstPemBlock(text: string): { type: string; der: Buffer } | undefined {
  const m = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(text);
  if (!m) return undefined;
  const body = m[2].includes(':') ? m[2].split(/\r?\n\r?\n/).slice(1).join('\n') : m[2];
  return { type: m[1], der: Buffer.from(body.replace(/\s+/g, ''), 'base64') };
}

function allPemBlocks(text: string): Array<{ type: string; der: Buffer }> {
  const out: Array<{ type: string; der: Buffer }> = [];
  const re = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ type: m[1], der: Buffer.from(m[2].replace(/\s+/g, ''), 'base64') });
  return out;
}

export function pem(type: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN ${type}-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${type}-----\n`;
}

const text = (v: AttributeValue) => v.utf8String ?? v.printableString ?? v.ia5String ?? v.teletexString ?? v.bmpString ?? v.universalString;

function sansOf(req: CertificationRequest): Pick<CsrRequestFacts, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris'> {
  const out = { dnsNames: [] as string[], ipAddresses: [] as string[], emailAddresses: [] as string[], uris: [] as string[] };
  for (const attr of req.certificationRequestInfo.attributes) {
    if (attr.type !== OID.extensionRequest) continue;
    for (const v of attr.values) {
      for (const ext of AsnConvert.parse(v, Extensions)) {
        if (ext.extnID !== OID.subjectAltName) continue;
        for (const n of AsnConvert.parse(ext.extnValue.buffer, SubjectAlternativeName)) {
          if (n.dNSName !== undefined) out.dnsNames.push(n.dNSName);
          else if (n.rfc822Name !== undefined) out.emailAddresses.push(n.rfc822Name);
          else if (n.iPAddress !== undefined) out.ipAddresses.push(n.iPAddress);
          else if (n.uniformResourceIdentifier !== undefined) out.uris.push(n.uniformResourceIdentifier);
        }
      }
    }
  }
  return out;
}

/**
 * Upstream's ParseCSR: the first PEM block must be a CERTIFICATE REQUEST, and its DER a PKCS#10
 * request. Throws with the reason otherwise. The signature is not checked here (nor by upstream's
 * parse); verifyCsrSignature does that before signing.
 */
export function parseCsr(requestPem: string): ParsedCsr {
  const block = firstPemBlock(requestPem);
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const request = AsnConvert.parse(block.der, CertificationRequest);
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of request.certificationRequestInfo.subject) {
    for (const atv of rdn) {
      const v = text(atv.value);
      if (v === undefined) continue;
      if (atv.type === OID.cn) commonName = v;
      else if (atv.type === OID.o) organizations.push(v);
    }
  }
  return { request, facts: { commonName, organizations, ...sansOf(request) } };
}

/** The request is signed by the key it carries (upstream's CheckSignature before signing). */
export function verifyCsrSignature(csr: ParsedCsr): void {
  const info = csr.request.certificationRequestInfo;
  const raw = csr.request.certificationRequestInfoRaw ?? AsnConvert.serialize(info);
  const alg = csr.request.signatureAlgorithm.algorithm;
  if (!(alg in VERIFY_ALGORITHMS)) throw new Error(`unable to verify certificate request signature: x509: cannot verify signature: algorithm unimplemented (${alg})`);
  const key = createPublicKey({ key: Buffer.from(AsnConvert.serialize(info.subjectPKInfo)), format: 'der', type: 'spki' });
  const ok = verify(VERIFY_ALGORITHMS[alg], Buffer.from(raw), key, Buffer.from(csr.request.signature));
  if (!ok) throw new Error('unable to verify certificate request signature: x509: ECDSA verification failure');
}

/** A CA: its certificate (public) and its private key (kept in this object only). */
export interface CertificateAuthority {
  certificate: Certificate;
  /** the CA certificate's NotAfter */
  notAfter: Date;
  key: KeyObject;
}

/**
 * Reads a CA from the PEM texts of its files, as upstream's CA provider does: exactly one
 * certificate, a private key (RSA, ECDSA or Ed25519), and the two must belong together.
 * Errors name the file, never its content.
 */
export function loadCertificateAuthority(certPem: string, keyPem: string, certFile: string, keyFile: string): CertificateAuthority {
  const certs = allPemBlocks(certPem).filter((b) => b.type === 'CERTIFICATE');
  if (certs.length !== 1) throw new Error(`error reading CA cert file "${certFile}": expected 1 certificate, found ${certs.length}`);
  let certificate: Certificate;
  try {
    certificate = AsnConvert.parse(certs[0].der, Certificate);
  } catch (e) {
    throw new Error(`error reading CA cert file "${certFile}": ${(e as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new Error(`error reading CA key file "${keyFile}": data does not contain a valid RSA or ECDSA private key`);
  }
  const certKey = createPublicKey({ key: Buffer.from(AsnConvert.serialize(certificate.tbsCertificate.subjectPublicKeyInfo)), format: 'der', type: 'spki' });
  const mine = createPublicKey(key).export({ format: 'der', type: 'spki' });
  if (!Buffer.from(certKey.export({ format: 'der', type: 'spki' })).equals(Buffer.from(mine))) {
    throw new Error(`error reading CA cert file "${certFile}": tls: private key does not match public key`);
  }
  return { certificate, notAfter: certificate.tbsCertificate.validity.notAfter.getTime(), key };
}

/** Go's isPrintable for encoding/asn1 (no '*', no '&'): PrintableString, else UTF8String. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

function nameOf(subject: Name): Name {
  const byType = new Map<string, string[]>();
  for (const rdn of subject) for (const atv of rdn) {
    const v = text(atv.value);
    if (v === undefined || !SUBJECT_ORDER.includes(atv.type as (typeof SUBJECT_ORDER)[number])) continue;
    if (atv.type === OID.cn || atv.type === OID.serialNumber) byType.set(atv.type, [v]);
    else byType.set(atv.type, [...(byType.get(atv.type) ?? []), v]);
  }
  const rdns: RelativeDistinguishedName[] = [];
  for (const type of SUBJECT_ORDER) {
    const values = byType.get(type);
    if (!values?.length) continue;
    rdns.push(new RelativeDistinguishedName(values.map((v) => new AttributeTypeAndValue({
      type, value: new AttributeValue(PRINTABLE.test(v) ? { printableString: v } : { utf8String: v }),
    }))));
  }
  return new Name(rdns);
}

/** KeyUsage as Go encodes it: bit 0 first, trailing zero bits dropped (DER). */
function keyUsageDer(bits: readonly number[]): Buffer {
  let value = 0;
  for (const b of bits) value |= 1 << b;
  const bytes = [0, 0];
  for (let b = 0; b < 9; b++) if (value & (1 << b)) bytes[b >> 3] |= 0x80 >> (b & 7);
  const len = bytes[1] ? 2 : 1;
  const last = bytes[len - 1];
  let unused = 0;
  while (unused < 8 && !(last & (1 << unused))) unused++;
  if (last === 0) unused = 0;
  return Buffer.from([0x03, len + 1, unused, ...bytes.slice(0, len)]);
}

/** A serial below 2^128, random, as upstream draws it; DER INTEGER content (positive, minimal). */
function randomSerial(): ArrayBuffer {
  let b = randomBytes(16);
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  b = b.subarray(i);
  const out = b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : Buffer.from(b);
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

function signatureAlgorithmOf(key: KeyObject): { id: AlgorithmIdentifier; digest: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      // sha256WithRSAEncryption, parameters NULL
      return { id: new AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null }), digest: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { id: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.3' }), digest: 'sha384' };
      if (curve === 'secp521r1') return { id: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.4' }), digest: 'sha512' };
      return { id: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.2' }), digest: 'sha256' };
    }
    case 'ed25519':
      return { id: new AlgorithmIdentifier({ algorithm: '1.3.101.112' }), digest: null };
    default:
      throw new Error(`failed to sign certificate: x509: unsupported CA key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

const ext = (extnID: string, critical: boolean, der: ArrayBuffer | Uint8Array) =>
  new Extension({ extnID, critical, extnValue: new OctetString(der instanceof Uint8Array ? der : new Uint8Array(der)) });

export interface CertificateTemplate {
  notBefore: Date;
  notAfter: Date;
  keyUsageBits: readonly number[];
  extKeyUsageOids: readonly string[];
}

export interface IssuedCertificate {
  pem: string;
  /** hex, as openssl prints it */
  serialNumber: string;
}

/**
 * Signs a certificate for the request's key and subject, as upstream's authority does with its
 * permissive policy: the request's extensions are not copied (its subjectAltNames are), the
 * certificate is not a CA, and its key usages are those the CSR object lists.
 */
export function issueCertificate(ca: CertificateAuthority, csr: ParsedCsr, t: CertificateTemplate): IssuedCertificate {
  const subject = nameOf(csr.request.certificationRequestInfo.subject);
  const issuer = ca.certificate.tbsCertificate.subject;
  const extensions: Extension[] = [];
  if (t.keyUsageBits.length) extensions.push(ext(OID.keyUsage, true, keyUsageDer(t.keyUsageBits)));
  if (t.extKeyUsageOids.length) extensions.push(ext(OID.extKeyUsage, false, AsnConvert.serialize(new ExtendedKeyUsage([...t.extKeyUsageOids]))));
  extensions.push(ext(OID.basicConstraints, true, AsnConvert.serialize(new BasicConstraints())));
  const skid = (ca.certificate.tbsCertificate.extensions ?? []).find((e) => e.extnID === OID.subjectKeyId);
  const subjectDer = Buffer.from(AsnConvert.serialize(subject));
  if (skid && !Buffer.from(AsnConvert.serialize(issuer)).equals(subjectDer)) {
    const keyId = AsnConvert.parse(skid.extnValue.buffer, KeyIdentifier);
    extensions.push(ext(OID.authorityKeyId, false, AsnConvert.serialize(new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(keyId.buffer) }))));
  }
  const f = csr.facts;
  const sans = [
    ...f.dnsNames.map((d) => new GeneralName({ dNSName: d })),
    ...f.emailAddresses.map((e) => new GeneralName({ rfc822Name: e })),
    ...f.ipAddresses.filter((ip) => isIP(ip) !== 0).map((ip) => new GeneralName({ iPAddress: ip })),
    ...f.uris.map((u) => new GeneralName({ uniformResourceIdentifier: u })),
  ];
  if (sans.length) extensions.push(ext(OID.subjectAltName, subject.length === 0, AsnConvert.serialize(new SubjectAlternativeName(sans))));

  const alg = signatureAlgorithmOf(ca.key);
  const serial = randomSerial();
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial,
    signature: alg.id,
    issuer,
    validity: new Validity({ notBefore: t.notBefore, notAfter: t.notAfter }),
    subject,
    subjectPublicKeyInfo: csr.request.certificationRequestInfo.subjectPKInfo,
    extensions: new Extensions(extensions),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signature = sign(alg.digest, tbsDer, ca.key);
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: alg.id, signatureValue: new Uint8Array(signature).buffer });
  return { pem: pem('CERTIFICATE', new Uint8Array(AsnConvert.serialize(cert))), serialNumber: Buffer.from(serial).toString('hex') };
}
