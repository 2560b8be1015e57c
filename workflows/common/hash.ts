/*
 * The hashes upstream names objects with: Go's hash/fnv (FNV-1 and FNV-1a, 32 bits) and
 * k8s.io/apimachinery's rand.SafeEncodeString, which spells a hash's decimal text in the alphabet
 * of generated names. Hand-written because the names must come out byte for byte as upstream's.
 */
import { utf8Bytes } from './utf8';

/** the alphabet of generated name suffixes: no vowels, no characters that look alike */
export const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a, 32 bits (Go's fnv.New32a), of bytes. */
export function fnv1a32Bytes(bytes: Iterable<number>): number {
  let h = FNV32_OFFSET;
  for (const b of bytes) {
    h ^= b & 0xff;
    h = Math.imul(h, FNV32_PRIME) >>> 0;
  }
  return h >>> 0;
}

/** FNV-1, 32 bits (Go's fnv.New32): multiply, then xor. */
export function fnv132Bytes(bytes: Iterable<number>): number {
  let h = FNV32_OFFSET;
  for (const b of bytes) {
    h = Math.imul(h, FNV32_PRIME) >>> 0;
    h = (h ^ (b & 0xff)) >>> 0;
  }
  return h >>> 0;
}

/** 32-bit FNV-1a of the UTF-8 bytes of `s`. */
export function fnv1a32(s: string): number {
  return fnv1a32Bytes(utf8Bytes(s));
}

/** Each character's code modulo 27 picked from the generated-name alphabet. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += NAME_SUFFIX_ALPHABET[(ch.codePointAt(0) as number) % NAME_SUFFIX_ALPHABET.length];
  return out;
}

/** collisionCount as upstream mixes it into a template hash: uint32 little endian, then four zero bytes. */
export function collisionBytes(collisionCount: number): number[] {
  const c = collisionCount >>> 0;
  return [c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, (c >>> 24) & 0xff, 0, 0, 0, 0];
}
