/**
 * Which parts of an object a consumer reads: `true` keeps a value whole, an object keeps only the
 * named fields (applied to each element of an array). The shared store of a resource holds the
 * union of its consumers' masks, so a pod cached for three controllers is held once, with what any
 * of them reads and nothing else.
 */
export type FieldMask = true | { readonly [field: string]: FieldMask };

/** What every store keeps whatever its consumers ask: identity, owners, finalizers (the collector's view). */
export const METADATA: FieldMask = { apiVersion: true, kind: true, metadata: true };

export function unionMask(a: FieldMask, b: FieldMask): FieldMask {
  if (a === true || b === true) return true;
  const out: Record<string, FieldMask> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? unionMask(out[k], v) : v;
  return out;
}

/** Does `outer` keep everything `inner` keeps? */
export function covers(outer: FieldMask, inner: FieldMask): boolean {
  if (outer === true) return true;
  if (inner === true) return false;
  return Object.entries(inner).every(([k, v]) => k in outer && covers(outer[k], v));
}

/** Only metadata (and the type fields): such a resource can be listed and watched as PartialObjectMetadata. */
export function metadataOnly(mask: FieldMask): boolean {
  return mask !== true && Object.keys(mask).every((k) => k === 'metadata' || k === 'apiVersion' || k === 'kind');
}

export function prune(value: unknown, mask: FieldMask): unknown {
  if (mask === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => prune(v, mask));
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, m] of Object.entries(mask)) if (src[k] !== undefined) out[k] = prune(src[k], m);
  return out;
}
