/*
 * A pod's required node affinity against a node, as component-helpers' nodeaffinity matches it
 * (GetRequiredNodeAffinity(pod).Match(node)): the nodeSelector's labels, then the required terms,
 * ORed. The DaemonSet controller decides with it which nodes get a daemon pod.
 */
import { labelKeyError, labelValueError } from './selector';

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeAffinityView {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } | null;
  preferredDuringSchedulingIgnoredDuringExecution?: unknown;
}

export interface AffinityView {
  nodeAffinity?: NodeAffinityView | null;
  podAffinity?: unknown;
  podAntiAffinity?: unknown;
}

/** What matching reads of a node: its name (the one field a term may select on) and labels. */
export interface NodeLabelsView {
  name: string;
  labels?: Record<string, string>;
}

const INT64 = /^[+-]?[0-9]+$/;
const int64 = (s: string): bigint | undefined => {
  if (!INT64.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
};

/** labels.NewRequirement's checks, as a node selector's expressions go through them; undefined when valid. */
function expressionError(r: NodeSelectorRequirement): string | undefined {
  const keyError = labelKeyError(r.key);
  if (keyError) return keyError;
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return 'for \'in\', \'notin\' operators, values set can\'t be empty';
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return 'values set must be empty for exists and does not exist';
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) return 'for \'Gt\', \'Lt\' operators, exactly one value is required';
      if (int64(values[0]) === undefined) return 'for \'Gt\', \'Lt\' operators, the value must be an integer';
      return undefined;
    default:
      return `unsupported operator ${r.operator}`;
  }
  for (const v of values) {
    const e = labelValueError(v);
    if (e) return e;
  }
  return undefined;
}

function expressionMatches(r: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[r.key]);
    case 'NotIn':
      return !has || !values.includes(labels[r.key]);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      const n = has ? int64(labels[r.key]) : undefined;
      if (n === undefined) return false;
      const bound = int64(values[0])!;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** One term: every expression and field requirement holds; undefined when the term cannot be parsed. */
function termMatches(term: NodeSelectorTerm, node: NodeLabelsView): boolean | undefined {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.some((r) => expressionError(r) !== undefined)) return undefined;
  for (const f of fields) {
    if ((f.operator !== 'In' && f.operator !== 'NotIn') || (f.values ?? []).length !== 1) return undefined;
  }
  const labels = node.labels ?? {};
  if (exprs.length && !exprs.every((r) => expressionMatches(r, labels))) return false;
  // a node's only field is its name; upstream skips field requirements for a node without one
  if (fields.length && node.name) {
    for (const f of fields) {
      const equal = f.key === 'metadata.name' && f.values![0] === node.name;
      if (f.operator === 'In' ? !equal : f.key === 'metadata.name' && equal) return false;
    }
  }
  return true;
}

/**
 * Whether the node satisfies the pod's nodeSelector and required node affinity. Terms are ORed;
 * an empty term selects nothing; a term that cannot be parsed never matches.
 */
export function requiredNodeAffinityMatches(nodeSelector: Record<string, string> | undefined | null, affinity: AffinityView | undefined | null, node: NodeLabelsView): boolean {
  const labels = node.labels ?? {};
  for (const [k, v] of Object.entries(nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  for (const term of required.nodeSelectorTerms ?? []) {
    if (!(term.matchExpressions ?? []).length && !(term.matchFields ?? []).length) continue;
    if (termMatches(term, node) === true) return true;
  }
  return false;
}
