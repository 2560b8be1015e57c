/*
 * Taints and tolerations by the core/v1 rules (Toleration.ToleratesTaint), shared by the
 * controllers that decide with them: taint eviction, and the DaemonSet's node predicates.
 */

export interface TaintView {
  key: string;
  value?: string;
  effect: string;
}

export interface TolerationView {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/**
 * Whether a toleration covers a taint, by the core/v1 rules: an empty effect or key matches any,
 * Exists ignores the value, Equal (or no operator) needs the same value. The numeric Gt/Lt
 * operators belong to an alpha feature gate, off by default, under which they match nothing.
 */
export function tolerates(t: TolerationView, taint: TaintView): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * v1helper.FindMatchingUntoleratedTaint: the first taint `filter` keeps that no toleration
 * covers, or undefined when every such taint is tolerated.
 */
export function untoleratedTaint(taints: readonly TaintView[] | undefined, tolerations: readonly TolerationView[] | undefined, filter: (t: TaintView) => boolean): TaintView | undefined {
  return (taints ?? []).filter(filter).find((taint) => !(tolerations ?? []).some((t) => tolerates(t, taint)));
}
