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

/**
 * The pods the audit log shows were made in a namespace, by name: every successful create, and
 * every pod the scheduler bound. A create can take effect although its caller never heard so (a
 * 504 when the API server's request deadline passed after the store took the pod), and its pod
 * is made all the same; every pod on this stack's kwok nodes gets bound, so it shows up there.
 */
export function podsMade(events: AuditEvent[], ns: string): Set<string> {
  const made = new Set<string>();
  for (const e of events) {
    const o = e.objectRef;
    if (o?.resource !== 'pods' || o.namespace !== ns || !o.name || e.verb !== 'create') continue;
    const ok = o.subresource === 'binding' ? e.responseStatus?.code === 201 : !o.subresource && e.responseStatus?.code === 201;
    if (ok) made.add(o.name);
  }
  return made;
}

/**
 * The pods controllers asked to delete in a namespace, by name: every DELETE that took effect or
 * may have (a 5xx), whoever's identity is a controller's. A name counts once, however often it was
 * asked for (upstream's collector asks again for a pod its graph still shows alive).
 */
export function podsDeleted(events: AuditEvent[], ns: string): Set<string> {
  const out = new Set<string>();
  for (const e of events) {
    const o = e.objectRef;
    if (e.verb !== 'delete' || o?.resource !== 'pods' || o.subresource || o.namespace !== ns || !o.name) continue;
    if (!e.user.username.startsWith(CONTROLLER_USER_PREFIX)) continue;
    const code = e.responseStatus?.code ?? 0;
    if (code === 200 || code === 202 || code >= 500) out.add(o.name);
  }
  return out;
}
