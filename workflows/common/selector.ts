/**
 * Label selector semantics of metav1.LabelSelector, as the controllers interpret them through
 * LabelSelectorAsSelector. Pure and deterministic: safe to call from workflow code.
 *
 *  - null / undefined selector: matches nothing.
 *  - {} (no matchLabels, no matchExpressions): matches everything.
 *  - otherwise every matchLabels entry AND every matchExpression must hold.
 *  - an invalid selector (see selectorError) matches nothing; upstream refuses to sync an object whose
 *    selector does not convert, so callers should check selectorError first and skip the reconcile.
 */
import type { LabelSelector, LabelSelectorRequirement } from './meta';

export type Labels = Readonly<Record<string, string>>;

const OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

// Name part of a qualified name and a label value share one shape: alphanumerics at both ends,
// '-', '_' and '.' allowed inside.
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME_PART = 63;
const MAX_PREFIX = 253;
const MAX_VALUE = 63;

function has(labels: Labels, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}

/** Checks a label key ("[prefix/]name"); returns a message or undefined. */
export function labelKeyError(key: string): string | undefined {
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) return `invalid label key ${JSON.stringify(key)}: prefix part must be non-empty`;
    if (prefix.length > MAX_PREFIX) return `invalid label key ${JSON.stringify(key)}: prefix part must be no more than ${MAX_PREFIX} characters`;
    if (!DNS1123_SUBDOMAIN.test(prefix)) return `invalid label key ${JSON.stringify(key)}: prefix part must be a lowercase DNS-1123 subdomain`;
  } else {
    return `invalid label key ${JSON.stringify(key)}: must be a name with an optional DNS subdomain prefix and '/'`;
  }
  if (name.length === 0) return `invalid label key ${JSON.stringify(key)}: name part must be non-empty`;
  if (name.length > MAX_NAME_PART) return `invalid label key ${JSON.stringify(key)}: name part must be no more than ${MAX_NAME_PART} characters`;
  if (!NAME_PART.test(name)) {
    return `invalid label key ${JSON.stringify(key)}: name part must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric`;
  }
  return undefined;
}

/** Checks a label value (may be empty); returns a message or undefined. */
export function labelValueError(value: string): string | undefined {
  if (value.length === 0) return undefined;
  if (value.length > MAX_VALUE) return `invalid label value ${JSON.stringify(value)}: must be no more than ${MAX_VALUE} characters`;
  if (!NAME_PART.test(value)) {
    return `invalid label value ${JSON.stringify(value)}: must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric`;
  }
  return undefined;
}

function requirementError(req: LabelSelectorRequirement): string | undefined {
  if (!OPERATORS.has(req.operator)) return `${JSON.stringify(req.operator)} is not a valid label selector operator`;
  const keyErr = labelKeyError(req.key);
  if (keyErr) return keyErr;
  const values = req.values ?? [];
  if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) {
    return `key ${JSON.stringify(req.key)}: operator ${req.operator} needs a non-empty values set`;
  }
  if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length !== 0) {
    return `key ${JSON.stringify(req.key)}: operator ${req.operator} takes no values`;
  }
  for (const v of values) {
    const valErr = labelValueError(v);
    if (valErr) return valErr;
  }
  return undefined;
}

/**
 * Why a selector cannot be turned into a matcher, or undefined when it can. A null/undefined selector is
 * valid (it just matches nothing), like upstream's conversion of a nil selector.
 */
export function selectorError(selector: LabelSelector | null | undefined): string | undefined {
  if (selector == null) return undefined;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    const err = labelKeyError(k) ?? labelValueError(v);
    if (err) return err;
  }
  for (const req of selector.matchExpressions ?? []) {
    const err = requirementError(req);
    if (err) return err;
  }
  return undefined;
}

/** True when the selector is null/undefined (matches nothing) rather than empty (matches everything). */
export function isNothingSelector(selector: LabelSelector | null | undefined): boolean {
  return selector == null;
}

/** True for {} — the selector that matches every label set. */
export function isEverythingSelector(selector: LabelSelector | null | undefined): boolean {
  if (selector == null) return false;
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

function requirementMatches(req: LabelSelectorRequirement, labels: Labels): boolean {
  const values = req.values ?? [];
  const present = has(labels, req.key);
  switch (req.operator) {
    case 'In':
      return present && values.includes(labels[req.key]);
    case 'NotIn':
      // A missing key satisfies NotIn.
      return !present || !values.includes(labels[req.key]);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      return false;
  }
}

/** Does `labels` satisfy `selector`? See the module comment for null, empty and invalid selectors. */
export function selectorMatches(selector: LabelSelector | null | undefined, labels: Labels | null | undefined): boolean {
  if (selector == null) return false;
  if (selectorError(selector) !== undefined) return false;
  const set: Labels = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(set, k) || set[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    if (!requirementMatches(req, set)) return false;
  }
  return true;
}

/**
 * A ReplicationController's map selector as a LabelSelector, the way the RC controller converts it:
 * an absent map stays absent (matches nothing), a present map becomes matchLabels (so {} matches everything).
 */
export function selectorFromMap(map: Record<string, string> | null | undefined): LabelSelector | null {
  if (map == null) return null;
  return { matchLabels: { ...map } };
}

/** Does `labels` contain every key/value of `subset`? (An empty subset is contained in anything.) */
export function labelsContain(labels: Labels | null | undefined, subset: Labels | null | undefined): boolean {
  const set: Labels = labels ?? {};
  for (const [k, v] of Object.entries(subset ?? {})) {
    if (!has(set, k) || set[k] !== v) return false;
  }
  return true;
}
