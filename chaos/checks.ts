import type { AuditEvent } from '../bench/lib/audit';

/**
 * Every place two end states differ, as `path: upstream <a>, ours <b>`: the field-by-field
 * comparison of what a user would see, with arrays compared by position (outcomes sort them).
 */
export function diffOutcomes(upstream: unknown, ours: unknown, at = ''): string[] {
  const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(upstream) && Array.isArray(ours)) {
    const out: string[] = [];
    if (upstream.length !== ours.length) out.push(`${at || '.'} length: upstream ${upstream.length}, ours ${ours.length}`);
    for (let i = 0; i < Math.min(upstream.length, ours.length); i++) out.push(...diffOutcomes(upstream[i], ours[i], `${at}[${i}]`));
    return out;
  }
  if (isObj(upstream) && isObj(ours)) {
    const keys = [...new Set([...Object.keys(upstream), ...Object.keys(ours)])].sort();
    return keys.flatMap((k) => diffOutcomes(upstream[k], ours[k], at ? `${at}.${k}` : k));
  }
  return JSON.stringify(upstream) === JSON.stringify(ours) ? [] : [`${at || '.'}: upstream ${show(upstream)}, ours ${show(ours)}`];
}

/**
 * The identities controllers write as with `--use-service-account-credentials` (both managers run
 * so in the chaos runs): kwok's final pod deletes and the harness's own writes are someone else's.
 */
export const CONTROLLER_USER_PREFIX = 'system:serviceaccount:kube-system:';

/** Successful writes by controllers of one verb to one resource's objects (not subresources) in a namespace. */
export function successfulWrites(events: AuditEvent[], o: { ns: string; resource: string; verb: 'create' | 'delete' | 'update' | 'patch' }): AuditEvent[] {
  const ok = o.verb === 'create' ? 201 : 200;
  return events.filter((e) => e.verb === o.verb && e.objectRef?.resource === o.resource && !e.objectRef.subresource
    && e.objectRef.namespace === o.ns && e.user.username.startsWith(CONTROLLER_USER_PREFIX)
    && (e.responseStatus?.code === ok || (o.verb === 'delete' && e.responseStatus?.code === 202)));
}

/** A violation when `got` is not exactly `want`: the exactness checks of every scenario. */
export function exactly(what: string, want: number, got: number): string[] {
  return want === got ? [] : [`${what}: want exactly ${want}, got ${got}`];
}

/** Names that occur more than once, with their counts. */
export function duplicates(names: string[]): Array<[string, number]> {
  const seen = new Map<string, number>();
  for (const n of names) seen.set(n, (seen.get(n) ?? 0) + 1);
  return [...seen].filter(([, c]) => c > 1);
}
