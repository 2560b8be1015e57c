/** The fields every API condition type shares; Deployment conditions add lastUpdateTime. */
export interface ConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
}

function parseInstant(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** Two RFC 3339 strings naming the same instant (the API may re-render a time we wrote). */
export function sameInstant(a: string | undefined, b: string | undefined): boolean {
  if ((a ?? '') === (b ?? '')) return true;
  const ta = parseInstant(a);
  return ta !== undefined && ta === parseInstant(b);
}

/** Equal condition lists, in order: what decides whether a status write would change anything. */
export function conditionsEqual(a: readonly ConditionLike[] | undefined, b: readonly ConditionLike[] | undefined): boolean {
  const ca = a ?? [];
  const cb = b ?? [];
  return ca.length === cb.length && ca.every((x, i) => {
    const y = cb[i];
    return x.type === y.type && x.status === y.status && (x.reason ?? '') === (y.reason ?? '') &&
      (x.message ?? '') === (y.message ?? '') && sameInstant(x.lastTransitionTime, y.lastTransitionTime) &&
      sameInstant(x.lastUpdateTime, y.lastUpdateTime);
  });
}
