import { selectorMatches } from '../common/selector';
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { LabelSelector } from '../common/meta';

/** rbac/v1 PolicyRule: client-node's model is the JSON shape exactly. */
export type PolicyRule = V1PolicyRule;

/** A ClusterRole as aggregation reads it. */
export interface ClusterRoleView {
  name: string;
  labels: Record<string, string>;
  rules: PolicyRule[];
}

const FIELDS = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const;

/** Equal as apimachinery's semantic equality sees rules: an absent list and an empty one are the same. */
export function sameRule(a: PolicyRule, b: PolicyRule): boolean {
  return FIELDS.every((f) => {
    const x = a[f] ?? [];
    const y = b[f] ?? [];
    return x.length === y.length && x.every((v, i) => v === y[i]);
  });
}

export function sameRules(a: readonly PolicyRule[], b: readonly PolicyRule[]): boolean {
  return a.length === b.length && a.every((r, i) => sameRule(r, b[i]));
}

/** The roles a selector picks, by name order, as upstream walks them; never the aggregating role itself. */
export function sourcesOf(selfName: string, selectors: readonly LabelSelector[], roles: readonly ClusterRoleView[]): ClusterRoleView[] {
  const picked = new Map<string, ClusterRoleView>();
  for (const s of selectors) for (const r of roles) if (r.name !== selfName && selectorMatches(s, r.labels)) picked.set(r.name, r);
  return [...picked.values()];
}

/**
 * The rules an aggregated role should hold: for each selector in order, the rules of the roles it
 * matches in name order, each rule kept once (the first time it is seen).
 */
export function aggregateRules(selfName: string, selectors: readonly LabelSelector[], roles: readonly ClusterRoleView[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const byName = [...roles].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const s of selectors) {
    for (const r of byName) {
      if (r.name === selfName || !selectorMatches(s, r.labels)) continue;
      for (const rule of r.rules) if (!out.some((have) => sameRule(have, rule))) out.push(rule);
    }
  }
  return out;
}
