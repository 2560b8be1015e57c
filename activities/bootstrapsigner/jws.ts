import { createHmac } from 'node:crypto';

/*
 * The detached JWS (RFC 7515 appendix F) the bootstrap signer writes, byte for byte as upstream's
 * cluster-bootstrap token/jws package makes it with go-jose v2. Written by hand instead of with a
 * JOSE library because the bytes must be upstream's, and those follow from how go-jose builds the
 * protected header, which no JavaScript library promises to repeat:
 *
 * - the header holds exactly `alg` and `kid` (go-jose adds no `typ` and, for a symmetric key, no
 *   JWK), serialized by Go's encoding/json from a map, so the keys come in sorted order with no
 *   spaces: {"alg":"HS256","kid":"<id>"};
 * - each part is base64url without padding (base64.RawURLEncoding);
 * - the content part is left out of the result: header + ".." + signature.
 *
 * Go's encoder would escape <, > and & (and U+2028/U+2029) inside the kid where JSON.stringify does
 * not; a token ID is six of [a-z0-9] (the signer checks it against the Secret's name first), so the
 * two agree on every kid that can reach here, and a kid outside that set is refused rather than
 * signed with a header that might differ.
 */

const KID = /^[a-z0-9]{6}$/;

const b64url = (b: Buffer) => b.toString('base64url');

/**
 * The detached HS256 signature of `content` (its UTF-8 bytes) with the token's secret part as the
 * HMAC key (its bytes as the Secret holds them).
 */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: Buffer): string {
  if (!KID.test(tokenId)) throw new Error('a bootstrap token ID is six characters of [a-z0-9]');
  const header = b64url(Buffer.from(`{"alg":"HS256","kid":"${tokenId}"}`, 'utf8'));
  const payload = b64url(Buffer.from(content, 'utf8'));
  const mac = createHmac('sha256', tokenSecret).update(`${header}.${payload}`, 'ascii').digest();
  return `${header}..${b64url(mac)}`;
}
