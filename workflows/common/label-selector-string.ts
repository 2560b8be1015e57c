/**
 * The string form of a label selector (`app=web,tier in (a,b),!canary`), as a scale subresource's
 * status.selector carries it and as `?labelSelector=` takes it. Upstream parses it with
 * labels.Parse; this is the same grammar: `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (..)`,
 * `k notin (..)`, `k>n`, `k<n`, joined by commas. Hand-written because the HPA must tell a
 * selector it cannot parse (its InvalidSelector condition) and match pods against other HPAs'
 * selectors, and no bundle-able library speaks this grammar.
 */
import { labelKeyError, labelValueError } from './selector';

export type StringRequirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type ParsedSelector = { ok: true; requirements: StringRequirement[] } | { ok: false; error: string };

type Token = { kind: 'ident' | 'op' | 'comma' | 'open' | 'close' | 'not'; text: string };

const OPERATORS = ['==', '!=', '=', '>', '<'];

function tokenize(s: string): Token[] | string {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    if (c === ',') { out.push({ kind: 'comma', text: c }); i++; continue; }
    if (c === '(') { out.push({ kind: 'open', text: c }); i++; continue; }
    if (c === ')') { out.push({ kind: 'close', text: c }); i++; continue; }
    const op = OPERATORS.find((o) => s.startsWith(o, i));
    if (op) { out.push({ kind: 'op', text: op }); i += op.length; continue; }
    if (c === '!') { out.push({ kind: 'not', text: c }); i++; continue; }
    let j = i;
    while (j < s.length && !' \t\n,()=!<>'.includes(s[j])) j++;
    if (j === i) return `unexpected character ${JSON.stringify(c)} at ${i}`;
    out.push({ kind: 'ident', text: s.slice(i, j) });
    i = j;
  }
  return out;
}

/** Parse a selector string; an empty string selects everything (no requirements). */
export function parseSelectorString(selector: string): ParsedSelector {
  const tokens = tokenize(selector);
  if (typeof tokens === 'string') return { ok: false, error: `unable to parse requirement: ${tokens}` };
  const reqs: StringRequirement[] = [];
  let p = 0;
  const fail = (what: string): ParsedSelector => ({ ok: false, error: `unable to parse requirement: ${what}` });
  const keyOk = (k: string) => labelKeyError(k);
  while (p < tokens.length) {
    let negated = false;
    if (tokens[p].kind === 'not') { negated = true; p++; }
    const key = tokens[p];
    if (!key || key.kind !== 'ident') return fail(`found '${key?.text ?? ''}', expected: identifier`);
    const bad = keyOk(key.text);
    if (bad) return fail(`invalid label key "${key.text}": ${bad}`);
    p++;
    const next = tokens[p];
    if (negated) {
      if (next && next.kind !== 'comma') return fail(`found '${next.text}', expected: ',' or 'end of string'`);
      reqs.push({ key: key.text, op: '!' });
    } else if (!next || next.kind === 'comma') {
      reqs.push({ key: key.text, op: 'exists' });
    } else if (next.kind === 'op') {
      p++;
      const v = tokens[p];
      const value = v && v.kind === 'ident' ? v.text : '';
      if (v && v.kind === 'ident') p++;
      if (next.text === '>' || next.text === '<') {
        const n = Number(value);
        if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) return fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push({ key: key.text, op: next.text === '>' ? 'gt' : 'lt', value: n });
      } else {
        const vErr = labelValueError(value);
        if (vErr) return fail(`invalid label value: "${value}": ${vErr}`);
        reqs.push({ key: key.text, op: next.text === '!=' ? 'notin' : 'in', values: [value] });
      }
    } else if (next.kind === 'ident' && (next.text === 'in' || next.text === 'notin')) {
      p++;
      if (tokens[p]?.kind !== 'open') return fail(`found '${tokens[p]?.text ?? ''}', expected: '('`);
      p++;
      const values: string[] = [];
      for (;;) {
        const t = tokens[p];
        if (!t) return fail(`found '', expected: ')'`);
        if (t.kind === 'close') { p++; break; }
        if (t.kind === 'comma') { p++; if (values.length === 0 || tokens[p]?.kind === 'close' || tokens[p]?.kind === 'comma') values.push(''); continue; }
        if (t.kind !== 'ident') return fail(`found '${t.text}', expected: ',', ')' or identifier`);
        const vErr = labelValueError(t.text);
        if (vErr) return fail(`invalid label value: "${t.text}": ${vErr}`);
        values.push(t.text);
        p++;
      }
      reqs.push({ key: key.text, op: next.text as 'in' | 'notin', values: values.length ? values : [''] });
    } else {
      return fail(`found '${next.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    if (p < tokens.length) {
      if (tokens[p].kind !== 'comma') return fail(`found '${tokens[p].text}', expected: ',' or 'end of string'`);
      p++;
      if (p >= tokens.length) return fail(`found '', expected: identifier after ','`);
    }
  }
  return { ok: true, requirements: reqs };
}

/** Whether a label set satisfies every requirement (an empty list matches everything). */
export function requirementsMatch(reqs: readonly StringRequirement[], labels: Readonly<Record<string, string>> | undefined | null): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case 'exists': return has;
      case '!': return !has;
      case 'in': return has && r.values.includes(l[r.key]);
      case 'notin': return !has || !r.values.includes(l[r.key]);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(l[r.key])) return false;
        const n = Number(l[r.key]);
        return r.op === 'gt' ? n > r.value : n < r.value;
      }
      default: return false;
    }
  });
}

/**
 * A metav1.LabelSelector in the string form upstream sends as `?labelSelector=` (its
 * LabelSelectorAsSelector(...).String()): requirements sorted by key, set values sorted; nil and
 * empty selectors give "".
 */
export function labelSelectorToString(sel: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> } | undefined | null): string {
  if (!sel) return '';
  const parts: Array<{ key: string; text: string }> = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push({ key: k, text: `${k}=${v}` });
  for (const e of sel.matchExpressions ?? []) {
    const vals = [...new Set(e.values ?? [])].sort().join(',');
    switch (e.operator) {
      case 'In': parts.push({ key: e.key, text: `${e.key} in (${vals})` }); break;
      case 'NotIn': parts.push({ key: e.key, text: `${e.key} notin (${vals})` }); break;
      case 'Exists': parts.push({ key: e.key, text: e.key }); break;
      case 'DoesNotExist': parts.push({ key: e.key, text: `!${e.key}` }); break;
      default: break;
    }
  }
  // a stable sort by key, as Go's sort of requirements by key leaves equal keys in their order
  return parts.map((p, i) => ({ ...p, i })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i)).map((p) => p.text).join(',');
}
