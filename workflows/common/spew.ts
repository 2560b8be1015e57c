/*
 * Upstream names DaemonSet and StatefulSet revisions (and Deployments' ReplicaSets) by
 * pkg/controller.ComputeHash: FNV-1a over go-spew's "%#v" dump of the PodTemplateSpec Go struct,
 * every field in declaration order with its Go type, zero values included. To give revisions the
 * names upstream gives them, this prints that dump from the API's JSON. It has to be hand-written:
 * the text is Go's reflection of Go types. The types' layout is generated from the Go source by
 * hack/gotypes (go-types/pod-template-spec.json), and test/unit/spew-hash.test.ts holds it to dumps
 * and hashes upstream's own code made.
 *
 * What the dump prints is what kube-controller-manager holds after decoding the object from
 * protobuf: an empty list or map is nil, and a quantity keeps the text of its canonical form.
 */
import LAYOUT from './go-types/pod-template-spec.json';
import { collisionBytes, fnv1a32Bytes, safeEncodeString } from './hash';
import { utf8Bytes } from './utf8';

interface GoField {
  name: string;
  json?: string;
  inline?: boolean;
  type: string;
}

interface GoType {
  kind: string;
  elem?: string;
  key?: string;
  fields?: GoField[];
  special?: string;
}

const TYPES = LAYOUT.types as Record<string, GoType>;

/** A value the dump cannot be reproduced for (a quantity beyond int64, a set timestamp); the caller falls back. */
export class SpewUnsupported extends Error {}

type Json = unknown;

/** Byte-wise order of Go strings (spew sorts map keys so). */
function goLess(a: string, b: string): number {
  const x = utf8Bytes(a);
  const y = utf8Bytes(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const DECIMAL_SUFFIXES: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const INT64_MAX = 2n ** 63n - 1n;

/** The pieces of a quantity string, as resource.parseQuantityString splits it. */
function splitQuantity(str: string): { positive: boolean; num: string; denom: string; suffix: string } {
  let pos = 0;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < str.length && str[pos] === '0') pos++;
  if (pos >= str.length) return { positive, num: '0', denom: '', suffix: '' };
  const digits = (from: number) => {
    let i = from;
    while (i < str.length && str[i] >= '0' && str[i] <= '9') i++;
    return i;
  };
  let end = digits(pos);
  const num = str.slice(pos, end) || '0';
  let denom = '';
  if (str[end] === '.') {
    const d = digits(end + 1);
    denom = str.slice(end + 1, d);
    end = d;
  }
  return { positive, num, denom, suffix: str.slice(end) };
}

/**
 * resource.ParseQuantity's result for the values it keeps in an int64 (every quantity a pod
 * template realistically has): the amount and scale, the format, and the text it keeps when
 * the input was already canonical. Anything on its arbitrary-precision path is unsupported here.
 */
function goQuantity(str: string): Record<string, Json> {
  const q = (value: bigint, scale: number, format: string, s: string) => ({ i: { value, scale }, d: { Dec: null }, s, Format: format });
  if (str === '0') return q(0n, 0, 'DecimalSI', '0');
  const { positive, num, denom, suffix } = splitQuantity(str);
  let exponent: number;
  let format: string;
  if (suffix in DECIMAL_SUFFIXES) {
    exponent = DECIMAL_SUFFIXES[suffix];
    format = 'DecimalSI';
  } else if (suffix in BINARY_SUFFIXES) {
    exponent = BINARY_SUFFIXES[suffix];
    format = 'BinarySI';
  } else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    exponent = Number(suffix.slice(1));
    format = 'DecimalExponent';
  } else {
    throw new SpewUnsupported(`quantity ${JSON.stringify(str)}`);
  }
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc(Math.fround(Math.fround(exponent) * 3 / 10)) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = num + denom;
      const value = BigInt(shifted);
      if (value > INT64_MAX) throw new SpewUnsupported(`quantity ${JSON.stringify(str)}`);
      let result = value * mantissa;
      if (result <= INT64_MAX) {
        if (!positive) result = -result;
        const canonical = format === 'BinarySI'
          ? exponent % 10 === 0 && (value & 7n) !== 0n
          : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return q(result, scale, format, canonical ? str : '');
      }
    }
  }
  throw new SpewUnsupported(`quantity ${JSON.stringify(str)}`);
}

/** The Go value behind a special type's JSON form. */
function goValueOf(special: string, v: Json): Json {
  switch (special) {
    case 'quantity':
      if (v === undefined || v === null) return undefined;
      return goQuantity(String(v));
    case 'time':
      if (v === undefined || v === null) return undefined;
      throw new SpewUnsupported('a set timestamp in a template');
    case 'intOrString':
      if (typeof v === 'string') return { Type: 1, IntVal: 0, StrVal: v };
      return { Type: 0, IntVal: typeof v === 'number' ? v : 0, StrVal: '' };
    default:
      return v;
  }
}

function print(typeName: string, v: Json, showType: boolean, out: string[]): void {
  const t = TYPES[typeName];
  if (!t) throw new SpewUnsupported(`no layout for ${typeName}`);
  if (t.kind === 'ptr') {
    if (v === undefined || v === null) {
      out.push(showType ? `(${typeName})<nil>` : '<nil>');
      return;
    }
    out.push(showType ? `(${typeName})` : '<*>');
    print(t.elem!, v, false, out);
    return;
  }
  if (showType) out.push(`(${typeName})`);
  const value = t.special ? goValueOf(t.special, v) : v;
  switch (t.kind) {
    case 'bool':
      out.push(value ? 'true' : 'false');
      return;
    case 'int':
    case 'uint':
      out.push(String(value ?? 0));
      return;
    case 'float':
      if (value !== undefined && value !== null && !Number.isInteger(value)) throw new SpewUnsupported('a fractional number');
      out.push(String(value ?? 0));
      return;
    case 'string':
      out.push(String(value ?? ''));
      return;
    case 'slice': {
      const a = value as Json[] | undefined | null;
      if (!Array.isArray(a) || a.length === 0) {
        out.push('<nil>');
        return;
      }
      out.push('[');
      a.forEach((e, i) => {
        if (i > 0) out.push(' ');
        print(t.elem!, e, false, out);
      });
      out.push(']');
      return;
    }
    case 'map': {
      const m = value as Record<string, Json> | undefined | null;
      const keys = m ? Object.keys(m).sort(goLess) : [];
      if (keys.length === 0) {
        out.push('<nil>');
        return;
      }
      out.push('map[');
      keys.forEach((k, i) => {
        if (i > 0) out.push(' ');
        print(t.key!, k, false, out);
        out.push(':');
        print(t.elem!, m![k], false, out);
      });
      out.push(']');
      return;
    }
    case 'struct': {
      const o = (value ?? {}) as Record<string, Json>;
      out.push('{');
      t.fields!.forEach((f, i) => {
        if (i > 0) out.push(' ');
        out.push(`${f.name}:`);
        print(f.type, f.inline ? o : f.json ? o[f.json] : undefined, true, out);
      });
      out.push('}');
      return;
    }
    case 'interface':
      if (value !== undefined && value !== null) throw new SpewUnsupported(`an interface value in ${typeName}`);
      out.push('<nil>');
      return;
    default:
      throw new SpewUnsupported(`kind ${t.kind}`);
  }
}

/** go-spew's "%#v" of a PodTemplateSpec (util/dump.ForHash), from the template's API JSON. */
export function spewPodTemplate(template: Json): string {
  const out: string[] = [];
  print(LAYOUT.root, template, true, out);
  return out.join('');
}

/**
 * pkg/controller.ComputeHash: the hash upstream names a template's revision by; with a
 * collisionCount (0 included) mixed in as upstream does. Throws SpewUnsupported for templates
 * whose dump cannot be reproduced.
 */
export function computeTemplateHash(template: Json, collisionCount?: number | null): string {
  const bytes = utf8Bytes(spewPodTemplate(template));
  if (collisionCount !== undefined && collisionCount !== null) bytes.push(...collisionBytes(collisionCount));
  return safeEncodeString(String(fnv1a32Bytes(bytes)));
}
