/**
 * Matching an Indexed Job's succeeded indexes against spec.successPolicy, as upstream's job
 * controller (v1.35, JobSuccessPolicy on by default) does. Pure and workflow-safe.
 */
import type { SuccessPolicy } from './api';
import { parseIndexes, totalIndexes, type Interval } from './indexes';

export interface SuccessPolicyMatch {
  matched: boolean;
  /** "Matched rules at index <i>" for the first matching rule; "" when none matched */
  message: string;
}

/**
 * The first rule that is satisfied decides. A rule with succeededIndexes is met when all of those
 * indexes succeeded, or when at least succeededCount of them did; a rule with only succeededCount is
 * met by that many succeeded indexes overall. A rule whose succeededIndexes parse to nothing (below
 * `completions`) is skipped. No succeeded index at all never matches.
 */
export function matchSuccessPolicy(
  policy: SuccessPolicy | undefined,
  completions: number,
  succeededIndexes: readonly Interval[],
): SuccessPolicyMatch {
  if (!policy || succeededIndexes.length === 0) return { matched: false, message: '' };
  for (let index = 0; index < policy.rules.length; index++) {
    const rule = policy.rules[index];
    let met = false;
    if (rule.succeededIndexes !== undefined) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.length === 0) continue;
      met = succeededIndexesRuleMet(required, succeededIndexes, rule.succeededCount);
    } else if (rule.succeededCount !== undefined) {
      met = totalIndexes(succeededIndexes) >= rule.succeededCount;
    }
    if (met) return { matched: true, message: `Matched rules at index ${index}` };
  }
  return { matched: false, message: '' };
}

/** Counts the overlap of two sorted interval lists in one pass. */
export function intersectionSize(a: readonly Interval[], b: readonly Interval[]): number {
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const overlap = Math.min(a[i].last, b[j].last) - Math.max(a[i].first, b[j].first) + 1;
    if (overlap > 0) n += overlap;
    if (b[j].last < a[i].last) j++;
    else if (b[j].last > a[i].last) i++;
    else {
      i++;
      j++;
    }
  }
  return n;
}

function succeededIndexesRuleMet(required: readonly Interval[], succeeded: readonly Interval[], count: number | undefined): boolean {
  const hit = intersectionSize(required, succeeded);
  return hit === totalIndexes(required) || (count !== undefined && hit >= count);
}
