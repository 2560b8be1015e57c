import type { FieldDifference } from './types';

/*
 * How two writes' contents are compared. Both sides are normalized the same way before they are
 * sent to the ledger: what must differ between two managers (times, generated names) is masked,
 * so that what is left differs only where the decisions did.
 */

/** The most differing fields kept per finding: enough to see what differs, bounded in the ledger's state. */
export const MAX_DIFFERENCES = 20;
/** Longest string kept of a differing value. */
const MAX_VALUE_CHARS = 200;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/**
 * A generated name's random tail: Kubernetes' (and ours') 5 characters of its consonant-and-digit
 * alphabet after a dash. Upstream's and ours' pods of one owner get different tails.
 */
const GENERATED_TAIL = /(\b[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?-)[bcdfghjklmnpqrstvwxz2456789]{5}\b/g;

export const MASKED_TIME = '<time>';

/** A string as compared: a time is any time, a generated name's tail any tail. */
export function normalizeString(s: string): string {
  if (RFC3339.test(s)) return MASKED_TIME;
  return s.replace(GENERATED_TAIL, '$1*****');
}

/** A deep copy with every string normalized (see normalizeString). */
export function normalizeContent<T>(v: T): T {
  if (typeof v === 'string') return normalizeString(v) as T;
  if (Array.isArray(v)) return v.map((x: unknown) => normalizeContent(x)) as T;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = normalizeContent(x);
    return out as T;
  }
  return v;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * An array element's name in a path: conditions by type, containers and the like by name, else
 * its index. Conditions listed in another order are the same conditions.
 */
function elementKey(v: unknown, i: number): string {
  if (isObject(v)) {
    if (typeof v.type === 'string') return `[type=${v.type}]`;
    if (typeof v.name === 'string') return `[name=${v.name}]`;
  }
  return `[${i}]`;
}

function keyedElements(a: unknown[]): Map<string, unknown> | undefined {
  const m = new Map<string, unknown>();
  a.forEach((v, i) => m.set(elementKey(v, i), v));
  // two elements with one key (two unnamed conditions of one type) fall back to indexes
  return m.size === a.length ? m : undefined;
}

function clip(v: unknown): unknown {
  if (v === undefined) return undefined;
  const s = JSON.stringify(v);
  return s.length <= MAX_VALUE_CHARS ? v : `${s.slice(0, MAX_VALUE_CHARS)}…`;
}

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const isUid = (v: unknown) => typeof v === 'string' && UID.test(v);

const isZero = (v: unknown) => v === 0 || v === false || v === '' || (Array.isArray(v) && !v.length) || (isObject(v) && !Object.keys(v).length);

function walk(path: string, a: unknown, b: unknown, out: FieldDifference[], oursZeroIsAbsent: boolean): void {
  if (out.length >= MAX_DIFFERENCES) return;
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) walk(path ? `${path}.${k}` : k, a[k], b[k], out, oursZeroIsAbsent);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    // a list of UIDs is a set (a Job's uncountedTerminatedPods): each manager lists it in the
    // order its cache gave the pods
    if (a.length && a.every(isUid) && b.every(isUid)) {
      walkArrays(path, [...a].sort(), [...b].sort(), out, oursZeroIsAbsent);
      return;
    }
    walkArrays(path, a, b, out, oursZeroIsAbsent);
    return;
  }
  if (oursZeroIsAbsent && b === undefined && isZero(a)) return;
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, ...(a !== undefined ? { ours: clip(a) } : {}), ...(b !== undefined ? { theirs: clip(b) } : {}) });
}

function walkArrays(path: string, a: unknown[], b: unknown[], out: FieldDifference[], oursZeroIsAbsent: boolean): void {
  const ka = keyedElements(a);
  const kb = keyedElements(b);
  if (ka && kb) {
    for (const k of [...new Set([...ka.keys(), ...kb.keys()])]) walk(`${path}${k}`, ka.get(k), kb.get(k), out, oursZeroIsAbsent);
  } else {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(`${path}[${i}]`, a[i], b[i], out, oursZeroIsAbsent);
  }
}

/**
 * The fields in which ours and theirs differ, by path (`status.conditions[type=Available].reason`).
 * `only`: compare only these top-level fields (theirs seen as metadata only). `oursFromRequest`:
 * ours is a request's body, which the API server has not serialized, so a zero value it spells out
 * (`minReadySeconds: 0`) is what the server would have left out.
 */
export function diffContent(
  ours: Record<string, unknown> | undefined,
  theirs: Record<string, unknown> | undefined,
  o: { only?: readonly string[]; oursFromRequest?: boolean } = {},
): FieldDifference[] {
  const only = o.only;
  const pick = (c: Record<string, unknown> | undefined) => (c && only ? Object.fromEntries(Object.entries(c).filter(([k]) => only.includes(k))) : c ?? {});
  const out: FieldDifference[] = [];
  walk('', pick(ours), pick(theirs), out, !!o.oursFromRequest);
  return out;
}
