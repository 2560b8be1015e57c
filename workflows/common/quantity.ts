/**
 * Kubernetes resource quantities (apimachinery's resource.Quantity) as exact decimals: parsing,
 * sums, comparison and the canonical string the API server stores. Pure and deterministic, so
 * workflow code can compare a quota's status with what it computed.
 *
 * A quantity is `value * 10^scale` (arbitrary precision) plus the format it prints in. The format
 * comes from the suffix it was parsed with and survives arithmetic the way upstream's does: a sum
 * keeps the format of its left operand unless that operand is zero, in which case it takes the
 * right one's. That is why `100m + 1Gi` prints as `1073741824100m` but `0 + 1Gi` as `1Gi`.
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  readonly value: bigint;
  readonly scale: number;
  readonly format: QuantityFormat;
}

export class QuantityError extends Error {
  constructor(readonly input: string, reason: string) {
    super(`quantity ${JSON.stringify(input)}: ${reason}`);
    this.name = 'QuantityError';
  }
}

/** Upstream keeps nano precision: anything finer is rounded up (away from zero) to 1n. */
const MIN_SCALE = -9;
/** A BinarySI quantity is capped at int64's maximum when parsed. */
const MAX_BINARY = (1n << 63n) - 1n;

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** sign, integer digits, fraction digits, then a suffix made of the letters and an optional signed exponent */
const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)$/;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

function interpretSuffix(s: string): { base: 10 | 2; exponent: number; format: QuantityFormat } | undefined {
  if (s in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[s], format: 'DecimalSI' };
  if (s in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[s], format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E')) {
    const exp = s.slice(1);
    if (!/^[+-]?[0-9]+$/.test(exp)) return undefined;
    const n = Number(exp);
    if (!Number.isSafeInteger(n)) return undefined;
    return { base: 10, exponent: n, format: 'DecimalExponent' };
  }
  return undefined;
}

/** Parses a quantity as the API server does, or throws QuantityError. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(str, 'empty');
  const m = SHAPE.exec(str);
  if (!m) throw new QuantityError(str, 'must look like <number><suffix>');
  const [, sign, intDigits, fracDigits = '', suffix] = m;
  const suf = interpretSuffix(suffix);
  if (!suf) throw new QuantityError(str, `unknown suffix ${JSON.stringify(suffix)}`);

  const digits = `${intDigits}${fracDigits}` || '0';
  let value = BigInt(digits);
  let scale = -fracDigits.length;
  if (suf.base === 10) scale += suf.exponent;
  else value *= 1n << BigInt(suf.exponent);
  if (sign === '-') value = -value;

  if (scale < MIN_SCALE) {
    // round the magnitude up: asking for a sliver of a resource still asks for some of it
    const div = pow10(MIN_SCALE - scale);
    const mag = abs(value);
    const rounded = (mag + div - 1n) / div;
    value = value < 0n ? -rounded : rounded;
    scale = MIN_SCALE;
  }

  let format = suf.format;
  if (format === 'BinarySI') {
    if (cmpMagnitude({ value, scale }, MAX_BINARY, 0) > 0) {
      value = value < 0n ? -MAX_BINARY : MAX_BINARY;
      scale = 0;
    }
    if (value !== 0n && cmpMagnitude({ value, scale }, 1n, 0) < 0) format = 'DecimalSI';
  }
  return { value, scale, format };
}

/** parseQuantity, or undefined for a malformed string. */
export function tryParseQuantity(str: string | undefined | null): Quantity | undefined {
  if (typeof str !== 'string') return undefined;
  try {
    return parseQuantity(str);
  } catch {
    return undefined;
  }
}

export function zeroQuantity(format: QuantityFormat = 'DecimalSI'): Quantity {
  return { value: 0n, scale: 0, format };
}

export function fromInt(n: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { value: BigInt(n), scale: 0, format };
}

function align(a: { value: bigint; scale: number }, b: { value: bigint; scale: number }): [bigint, bigint, number] {
  const s = Math.min(a.scale, b.scale);
  return [a.value * pow10(a.scale - s), b.value * pow10(b.scale - s), s];
}

function cmpMagnitude(q: { value: bigint; scale: number }, other: bigint, otherScale: number): number {
  const [x, y] = align({ value: abs(q.value), scale: q.scale }, { value: other, scale: otherScale });
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isZero(q: Quantity): boolean {
  return q.value === 0n;
}

export function sign(q: Quantity): -1 | 0 | 1 {
  return q.value < 0n ? -1 : q.value > 0n ? 1 : 0;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b; formats do not matter. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a + b, printed in a's format unless a is zero (then in b's), as upstream's Quantity.Add. */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const [x, y, scale] = align(a, b);
  return { value: x + y, scale, format: a.value === 0n ? b.format : a.format };
}

/** The larger of a and b; a wins a tie (upstream replaces only on strictly greater). */
export function maxQuantity(a: Quantity, b: Quantity): Quantity {
  return compareQuantities(b, a) > 0 ? b : a;
}

/** Rounded up (away from zero) to a whole number, keeping the format; storage is charged in whole bytes. */
export function roundUpToInteger(q: Quantity): Quantity {
  if (q.scale >= 0) return q;
  const div = pow10(-q.scale);
  const mag = abs(q.value);
  const whole = (mag + div - 1n) / div;
  return { value: q.value < 0n ? -whole : whole, scale: 0, format: q.format };
}

function isInteger(q: Quantity): boolean {
  return q.scale >= 0 || q.value % pow10(-q.scale) === 0n;
}

function integerValue(q: Quantity): bigint {
  return q.scale >= 0 ? q.value * pow10(q.scale) : q.value / pow10(-q.scale);
}

/** The value without trailing decimal zeros, as mantissa and base-10 exponent. */
function stripTens(value: bigint, scale: number): [bigint, number] {
  let v = value;
  let e = scale;
  while (abs(v) >= 10n && v % 10n === 0n) {
    v /= 10n;
    e++;
  }
  return [v, e];
}

/**
 * The canonical string of a quantity, as the API server serializes it: no fraction digits, the
 * largest suffix that keeps the value exact, an exponent that is a multiple of three, and BinarySI
 * values that are not whole multiples of a power of 1024 (or are below 1024) written in DecimalSI.
 */
export function formatQuantity(q: Quantity): string {
  if (q.value === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI' && (cmpMagnitude(q, 1024n, 0) < 0 || !isInteger(q))) format = 'DecimalSI';

  if (format === 'BinarySI') {
    let v = integerValue(q);
    let k = 0;
    // upstream has no suffix past Ei; stop there so the printed value stays exact
    while (k < BINARY_BY_EXPONENT.length - 1 && abs(v) >= 1024n && v % 1024n === 0n) {
      v /= 1024n;
      k++;
    }
    return `${v}${BINARY_BY_EXPONENT[k]}`;
  }

  let [v, e] = stripTens(q.value, q.scale);
  const down = ((e % 3) + 3) % 3;
  if (down) {
    v *= pow10(down);
    e -= down;
  }
  if (format === 'DecimalExponent') return e === 0 ? `${v}` : `${v}e${e}`;
  if (e > 18) {
    // past the largest SI suffix: keep the value exact under E
    v *= pow10(e - 18);
    e = 18;
  }
  if (e < MIN_SCALE) return `${v}e${e}`; // not produced by parsing or sums of parsed values
  return `${v}${DECIMAL_BY_EXPONENT.get(e) ?? ''}`;
}

/** Parse then print: the form the API server would store for `s`. */
export function canonicalQuantity(s: string): string {
  return formatQuantity(parseQuantity(s));
}

/** Two quantity strings naming the same amount; a malformed string equals only itself. */
export function quantitiesEqual(a: string | undefined, b: string | undefined): boolean {
  if (a === b) return true;
  const qa = tryParseQuantity(a);
  const qb = tryParseQuantity(b);
  return qa !== undefined && qb !== undefined && compareQuantities(qa, qb) === 0;
}

/**
 * Two resource lists with the same names and semantically equal amounts (upstream's quota.Equals
 * and semantic DeepEqual); an absent list equals an empty one, as it does once serialized.
 */
export function resourceListsEqual(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => b !== undefined && Object.prototype.hasOwnProperty.call(b, k) && quantitiesEqual(a?.[k], b[k]));
}
