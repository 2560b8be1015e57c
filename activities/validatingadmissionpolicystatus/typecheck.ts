/**
 * The type check of a ValidatingAdmissionPolicy's expressions, as upstream's TypeChecker does it
 * (apiserver admission/plugin/policy/validating/typechecking.go), on a CEL library for JavaScript.
 *
 * Library: @marcbachmann/cel-js. Among the npm CEL implementations it is the one that type-checks
 * an expression against declared variable types without evaluating it (`Environment.check`):
 * declared object types with typed fields, lists, maps, timestamps, durations, the standard
 * overloads and macros, optional syntax. It has no dependencies, is actively released and typed.
 * @bufbuild/cel and cel-js (ChromeGG) are evaluators (so their packages describe them), with no
 * check against declared types. Only activities load it: workflows never see a CEL value.
 *
 * What upstream checks: each validation's expression and messageExpression, against the type of
 * every kind the policy's matchConstraints select (at most 10, wildcards and subresources
 * skipped), with `object` and `oldObject` of that type, `params` of the paramKind's type when it
 * resolves (not declared at all when it does not), `request`, `namespaceObject`, `authorizer`, and
 * `variables` whose fields have the types the policy's variables compile to (object types as
 * dyn). Upstream's warning is `<gvk>: <cel-go issues>\n` per kind, joined by a newline; cel-go's
 * issue text is `ERROR: <input>:<line>:<col>: <message>`, the source line and a caret line. The
 * library reports one error per expression (cel-go all of them), at its own positions and in
 * its own words: both are translated here to cel-go's for the errors it shares (undefined field,
 * no matching overload of an operator or function, undeclared reference). docs/COMPATIBILITY.md
 * says what differs.
 */
import { Environment } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import { gvkString, type CelType, type GroupVersionKind } from './schema';

/** What the check reads of the policy (spec fields; the expressions as written). */
export interface PolicyExpressions {
  validations: Array<{ expression: string; messageExpression?: string }>;
  variables: Array<{ name: string; expression: string }>;
}

/** One kind the policy matches, with its type (from the API server's OpenAPI). */
export interface KindType {
  gvk: GroupVersionKind;
  type: CelType;
}

/** An entry of status.typeChecking.expressionWarnings. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** One problem the library found, placed and worded as cel-go would. */
export interface CelIssue {
  /** 0-based offset into the expression, as JavaScript indexes strings (UTF-16 units, the library's positions) */
  offset: number;
  message: string;
}

const prim = (name: Extract<CelType, { kind: 'primitive' }>['name']): CelType => ({ kind: 'primitive', name });
const obj = (name: string, fields: Record<string, CelType>): CelType => ({ kind: 'object', name, fields });
const list = (elem: CelType): CelType => ({ kind: 'list', elem });
const map = (value: CelType): CelType => ({ kind: 'map', value });
const S = prim('string');

/** apiserver's hand-made AdmissionRequest type (plugin/cel BuildRequestType). */
export const REQUEST_TYPE: CelType = (() => {
  const gvk = obj('kubernetes.GroupVersionKind', { group: S, version: S, kind: S });
  const gvr = obj('kubernetes.GroupVersionResource', { group: S, version: S, resource: S });
  const user = obj('kubernetes.UserInfo', { username: S, uid: S, groups: list(S), extra: map(list(S)) });
  return obj('kubernetes.AdmissionRequest', {
    kind: gvk, resource: gvr, subResource: S, requestKind: gvk, requestResource: gvr, requestSubResource: S,
    name: S, namespace: S, operation: S, userInfo: user, dryRun: prim('bool'), options: prim('dyn'),
  });
})();

/** apiserver's hand-made Namespace type (plugin/cel BuildNamespaceType). */
export const NAMESPACE_TYPE: CelType = (() => {
  const ts = prim('google.protobuf.Timestamp');
  const cond = obj('kubernetes.NamespaceCondition', { status: S, type: S, lastTransitionTime: ts, message: S, reason: S });
  return obj('kubernetes.Namespace', {
    metadata: obj('kubernetes.NamespaceMetadata', {
      name: S, generateName: S, namespace: S, labels: map(S), annotations: map(S), UID: S, creationTimestamp: ts,
      deletionGracePeriodSeconds: prim('int'), deletionTimestamp: ts, generation: prim('int'), resourceVersion: S, finalizers: list(S),
    }),
    spec: obj('kubernetes.NamespaceSpec', { finalizers: list(S) }),
    status: obj('kubernetes.NamespaceStatus', { conditions: list(cond), phase: S }),
  });
})();

/** Registers the object types a type needs (each once, inner ones first) and gives its name in the library's syntax. */
function declare(env: Environment, t: CelType, seen: Map<string, ReadonlySet<string>>): string {
  switch (t.kind) {
    case 'primitive': return t.name;
    case 'list': return `list<${declare(env, t.elem, seen)}>`;
    case 'map': return `map<string, ${declare(env, t.value, seen)}>`;
    case 'object': {
      if (!seen.has(t.name)) {
        const fields: Record<string, string> = {};
        for (const [k, f] of Object.entries(t.fields)) fields[k] = declare(env, f, seen);
        env.registerType(t.name, { fields });
        // cel-go's object types are nullable: `oldObject == null` checks there
        for (const sig of [`${t.name} == null`]) {
          env.registerOperator(sig, () => false);
        }
        seen.set(t.name, new Set(Object.keys(t.fields)));
      }
      return t.name;
    }
  }
}

/**
 * The type a variable is declared with in `variables` (apiserver's convertCelTypeToDeclType): the
 * simple types as they are, lists and maps with their element types converted, anything else
 * (an object type, a failed compilation) dyn.
 */
export function variableFieldType(libType: string | undefined): string {
  if (!libType) return 'dyn';
  const t = libType.trim();
  if (['bool', 'bytes', 'double', 'int', 'uint', 'string', 'null', 'google.protobuf.Timestamp', 'google.protobuf.Duration'].includes(t)) return t;
  const inner = /^(list|map)<(.*)>$/.exec(t);
  if (inner) {
    const args = splitTypeArgs(inner[2]);
    if (inner[1] === 'list' && args.length === 1) return `list<${variableFieldType(args[0])}>`;
    if (inner[1] === 'map' && args.length === 2) return `map<${variableFieldType(args[0])}, ${variableFieldType(args[1])}>`;
  }
  return 'dyn';
}

function splitTypeArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '<') depth++;
    if (ch === '>') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** A library type name as cel-go prints it: `list(int)`, `map(string, int)`. */
export function celGoTypeName(libType: string): string {
  const t = libType.trim();
  const inner = /^(list|map)<(.*)>$/.exec(t);
  if (!inner) return t.replace(/\.__idx__(?=\.|$)/g, '.@idx').replace(/\.__elem__(?=\.|$)/g, '.@elem');
  return `${inner[1]}(${splitTypeArgs(inner[2]).map(celGoTypeName).join(', ')})`;
}

/** cel-go's names of the operators, as its overload errors print them. */
const OPERATOR_NAMES: Record<string, string> = {
  '==': '_==_', '!=': '_!=_', '<': '_<_', '<=': '_<=_', '>': '_>_', '>=': '_>=_', '+': '_+_', '-': '_-_', '*': '_*_',
  '/': '_/_', '%': '_%_', in: '@in', '&&': '_&&_', '||': '_||_', '!_': '!_', '-_': '-_', '[]': '_[_]', '?:': '_?_:_',
};

/** Where cel-go puts the issue: the operator's token, a select's dot, a call's opening parenthesis. */
function tokenOffset(node: ASTNode, input: string): number {
  const end = (n: unknown) => (n && typeof n === 'object' && 'end' in n ? (n as { end: number }).end : node.start);
  switch (node.op) {
    case '.':
    case '.?': {
      const i = input.indexOf('.', end(node.args[0]));
      return i >= 0 ? i : node.pos;
    }
    case 'call': {
      const i = input.indexOf('(', node.start);
      return i >= 0 ? i : node.pos;
    }
    case 'rcall': {
      const i = input.indexOf('(', end(node.args[1]));
      return i >= 0 ? i : node.pos;
    }
    case '[]':
    case '[?]': {
      const i = input.indexOf('[', end(node.args[0]));
      return i >= 0 ? i : node.pos;
    }
    case '?:': {
      const i = input.indexOf('?', end(node.args[0]));
      return i >= 0 ? i : node.pos;
    }
    case '!_':
    case '-_':
      return node.start;
    default: {
      if (Array.isArray(node.args) && node.args.length === 2 && typeof node.op === 'string') {
        const i = input.indexOf(node.op, end(node.args[0]));
        return i >= 0 ? i : node.pos;
      }
      return node.pos;
    }
  }
}

/**
 * The library's error, in cel-go's words and at cel-go's position; undefined when it is not a type
 * error upstream can have: a parse error (the API server compiled the expression with cel-go when
 * the policy was written, so the library's parser is the one at fault) or a call of a function
 * the library does not know (Kubernetes' CEL libraries: quantity, url, ip, cidr, authorizer, ...).
 */
export function translateIssue(err: Error & { node?: unknown }, input: string, knownFunctions: ReadonlySet<string>,
  typeOfSource: (source: string) => string | undefined = () => undefined): CelIssue | undefined {
  if (err.name !== 'TypeError') return undefined;
  const node = err.node as ASTNode | undefined;
  const first = err.message.split('\n')[0].trim();
  if (!node || typeof node !== 'object' || !('op' in node)) return { offset: 0, message: first };
  const offset = tokenOffset(node, input);
  let m: RegExpExecArray | null;
  if ((node.op === 'call' || node.op === 'rcall')) {
    const fn = node.args[0];
    if (!knownFunctions.has(fn)) return undefined;
    m = /^found no matching overload for '(?:(.+?)\.)?[^.(]+\((.*)\)'$/.exec(first);
    if (m) {
      const args = splitTypeArgs(m[2]).map(celGoTypeName).join(', ');
      const applied = node.op === 'rcall' ? `${celGoTypeName(m[1] ?? 'dyn')}.(${args})` : `(${args})`;
      return { offset, message: `found no matching overload for '${fn}' applied to '${applied}'` };
    }
    return { offset, message: first };
  }
  if ((m = /^No such key: (.+)$/.exec(first))) return { offset, message: `undefined field '${m[1]}'` };
  if ((m = /^Unknown variable: (.+)$/.exec(first))) return { offset, message: `undeclared reference to '${m[1]}' (in container '')` };
  if ((m = /^no such overload: ([!-])(\S+)$/.exec(first))) {
    return { offset, message: `found no matching overload for '${m[1]}_' applied to '(${celGoTypeName(m[2])})'` };
  }
  if (node.op === '[]' && (m = /^List index must be int, got '(.+)'$/.exec(first))) {
    const operand = node.args[0];
    const listType = typeOfSource(input.slice(operand.start, operand.end));
    if (listType) return { offset, message: `found no matching overload for '_[_]' applied to '(${celGoTypeName(listType)}, ${celGoTypeName(m[1])})'` };
  }
  if ((m = /^no such overload: (.+?) (==|!=|<=|>=|<|>|\+|-|\*|\/|%|in|&&|\|\|) (.+)$/.exec(first))) {
    return { offset, message: `found no matching overload for '${OPERATOR_NAMES[m[2]]}' applied to '(${celGoTypeName(m[1])}, ${celGoTypeName(m[3])})'` };
  }
  return { offset, message: first };
}

const WIDE_DOT = '\uff0e';
const WIDE_CARET = '\uff3e';
const MAX_SNIPPET = 16384;

/** cel-go's display of one issue: `ERROR: <input>:line:col: message`, the line, and a caret under the column. */
export function formatIssue(input: string, issue: CelIssue): string {
  // cel-go counts columns in code points
  const chars = [...input];
  const offset = Math.min([...input.slice(0, Math.max(0, issue.offset))].length, chars.length);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (chars[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  const col = offset - lineStart;
  let out = `ERROR: <input>:${line}:${col + 1}: ${issue.message}`;
  let lineEnd = chars.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = chars.length;
  const snippetChars = chars.slice(lineStart, lineEnd).map((c) => (c === '\t' ? ' ' : c));
  const snippet = snippetChars.join('');
  if (Buffer.byteLength(snippet) <= MAX_SNIPPET) {
    const wide = (c: string | undefined) => c !== undefined && Buffer.byteLength(c) > 1;
    let ind = '';
    for (let i = 0; i < col && i < snippetChars.length; i++) ind += wide(snippetChars[i]) ? WIDE_DOT : '.';
    ind += wide(snippetChars[col]) ? WIDE_CARET : '^';
    out += `\n | ${snippet}\n | ${ind}`;
  }
  return out;
}

/** Upstream's text for one expression: per kind with an issue, `<gvk>: <issues>\n`, joined by a newline. */
export function formatWarning(results: Array<{ gvk: GroupVersionKind; issues: string }>): string {
  return results.map((r) => `${gvkString(r.gvk)}: ${r.issues}\n`).join('\n');
}

/** The environment for one kind: the declared variables, before the policy's own variables. */
function baseEnvironment(object: CelType, params: CelType | undefined, seen: Map<string, ReadonlySet<string>>): Environment {
  const env = new Environment({ unlistedVariablesAreDyn: false, enableOptionalTypes: true, homogeneousAggregateLiterals: true });
  env.registerVariable('namespaceObject', declare(env, NAMESPACE_TYPE, seen));
  env.registerVariable('request', declare(env, REQUEST_TYPE, seen));
  const objectType = declare(env, object, seen);
  env.registerVariable('object', objectType);
  env.registerVariable('oldObject', objectType);
  if (params) env.registerVariable('params', declare(env, params, seen));
  // the authorizer's functions are Kubernetes' library; calls on it are left unchecked (see translateIssue)
  env.registerVariable('authorizer', 'dyn');
  return env;
}

function knownFunctionsOf(env: Environment): Set<string> {
  return new Set(env.getDefinitions().functions.map((f) => f.name));
}

/** The type the library gives a piece of an expression on its own (undefined when it does not check alone: a macro's variable). */
function typeOfSource(env: Environment, source: string): string | undefined {
  try {
    const r = env.check(source);
    return r.valid ? r.type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `has(x.f)` where x is an object type without f: cel-go reports the undefined field, the
 * library does not. Found by walking the parsed expression; x is typed on its own, so a macro's
 * variable (`c` in `all(c, has(c.f))`) is not looked into.
 */
function hasIssues(env: Environment, expression: string, objectFields: ReadonlyMap<string, ReadonlySet<string>>): CelIssue[] {
  let ast: ASTNode;
  try {
    ast = env.parse(expression).ast;
  } catch {
    return [];
  }
  const out: CelIssue[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(visit);
      return;
    }
    if (!n || typeof n !== 'object' || !('op' in n)) return;
    const node = n as ASTNode;
    if (node.op === 'call' && node.args[0] === 'has' && node.args[1].length === 1 && node.args[1][0].op === '.') {
      const sel = node.args[1][0] as Extract<ASTNode, { op: '.' }>;
      const operand = sel.args[0];
      const t = typeOfSource(env, expression.slice(operand.start, operand.end));
      const fields = t !== undefined ? objectFields.get(t) : undefined;
      if (fields && !fields.has(sel.args[1])) {
        // cel-go places it at the macro's parenthesis
        const paren = expression.indexOf('(', node.start);
        out.push({ offset: paren >= 0 ? paren : node.pos, message: `undefined field '${sel.args[1]}'` });
      }
    }
    visit(node.args);
  };
  visit(ast);
  return out;
}

/** The issues of one expression in one environment, formatted as cel-go's and in its order; undefined when it checks. */
function checkOne(env: Environment, expression: string, known: ReadonlySet<string>, objectFields: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  let r;
  try {
    r = env.check(expression);
  } catch (e) {
    r = { valid: false, error: e as Error };
  }
  const issues = hasIssues(env, expression, objectFields);
  if (!r.valid && r.error) {
    const issue = translateIssue(r.error as Error & { node?: unknown }, expression, known, (src) => typeOfSource(env, src));
    if (issue && !issues.some((i) => i.offset === issue.offset)) issues.push(issue);
  }
  if (issues.length === 0) return undefined;
  issues.sort((a, b) => a.offset - b.offset);
  return issues.map((i) => formatIssue(expression, i)).join('\n');
}

/**
 * Upstream's Check: the warnings of each validation's expression and messageExpression, in order,
 * over every matched kind (in the order given: group, version, kind). `params` is the paramKind's
 * type, or undefined when the policy has none or it did not resolve.
 */
export function checkPolicy(policy: PolicyExpressions, kinds: KindType[], params: CelType | undefined): ExpressionWarning[] {
  const envs = kinds.flatMap((k) => {
    const objectFields = new Map<string, ReadonlySet<string>>();
    let base: Environment;
    try {
      base = baseEnvironment(k.type, params, objectFields);
    } catch {
      // a type the library cannot declare: that kind is not checked, as upstream skips a kind whose schema fails
      return [];
    }
    // each variable sees the ones before it; a variable that does not check is dyn
    const fields: Record<string, string> = {};
    for (const v of policy.variables) {
      const env = base.clone();
      env.registerType('kubernetes.variables', { fields: { ...fields } });
      env.registerVariable('variables', 'kubernetes.variables');
      let t: string | undefined;
      try {
        const r = env.check(v.expression);
        t = r.valid ? r.type : undefined;
      } catch {
        t = undefined;
      }
      fields[v.name] = variableFieldType(t);
    }
    const env = base.clone();
    env.registerType('kubernetes.variables', { fields });
    env.registerVariable('variables', 'kubernetes.variables');
    return [{ gvk: k.gvk, env, known: knownFunctionsOf(env), objectFields }];
  });
  const check = (expression: string): string | undefined => {
    const results: Array<{ gvk: GroupVersionKind; issues: string }> = [];
    for (const e of envs) {
      const issues = checkOne(e.env, expression, e.known, e.objectFields);
      if (issues !== undefined) results.push({ gvk: e.gvk, issues });
    }
    return results.length ? formatWarning(results) : undefined;
  };
  const warnings: ExpressionWarning[] = [];
  policy.validations.forEach((v, i) => {
    const w = check(v.expression);
    if (w !== undefined) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = check(v.messageExpression);
    if (m !== undefined) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}
