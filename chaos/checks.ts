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

/** The garbage collector's identity under --use-service-account-credentials. */
const GC_USER = `${CONTROLLER_USER_PREFIX}generic-garbage-collector`;

type Body = Record<string, unknown>;
const asBody = (v: unknown): Body | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Body : undefined);
const metaOf = (v: unknown) => asBody(asBody(v)?.metadata);
const nonEmpty = (v: unknown) => typeof v === 'string' && v !== '';

/**
 * Controller writes that went out without the precondition they need, from the audit log's
 * Request-level bodies (the local stack keeps controllers' updates, patches and deletes so):
 * - an update (a PUT of the whole object, any subresource) without metadata.resourceVersion would
 *   overwrite whatever another writer stored since the controller read it;
 * - a patch that changes ownerReferences (adopting, releasing, unblocking, dropping a dangling
 *   owner) without metadata.uid or resourceVersion could change the ownership of a later object
 *   that took the same name;
 * - a delete by the garbage collector without preconditions.uid could delete such a later object.
 * These are the preconditions upstream's controllers send; other patches and deletes (a pod's
 * status, a ReplicaSet's surplus pod) are conditional on nothing upstream either.
 */
export function preconditionViolations(events: AuditEvent[]): string[] {
  // one line per rule, resource and writer, with its count and first instance: a bug repeats per object
  const found = new Map<string, { n: number; first: string }>();
  const add = (rule: string, e: AuditEvent, what: string) => {
    const key = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.user.username} ${rule}`;
    const f = found.get(key);
    if (f) f.n++;
    else found.set(key, { n: 1, first: `${what} ${rule}` });
  };
  for (const e of events) {
    // a delete sent with no body has no requestObject even at Request level: no preconditions
    if (!e.user.username.startsWith(CONTROLLER_USER_PREFIX) || e.level !== 'Request') continue;
    // Refused before its body was read (not yet authorized while RBAC's cache fills after a
    // restart, throttled, shutting down): the audit event has no requestObject to judge, and
    // nothing was written.
    const code = e.responseStatus?.code ?? 0;
    if (e.requestObject === undefined && (code < 200 || code >= 300)) continue;
    const o = e.objectRef;
    const what = `${e.verb} of ${o?.resource ?? '?'}${o?.subresource ? `/${o.subresource}` : ''} ${o?.namespace ? `${o.namespace}/` : ''}${o?.name ?? '?'} by ${e.user.username.slice(CONTROLLER_USER_PREFIX.length)}`;
    const meta = metaOf(e.requestObject);
    if (e.verb === 'update' && !nonEmpty(meta?.resourceVersion)) add('without metadata.resourceVersion', e, what);
    if (e.verb === 'patch' && meta && 'ownerReferences' in meta && !nonEmpty(meta.uid) && !nonEmpty(meta.resourceVersion)) {
      add('changes ownerReferences without metadata.uid or resourceVersion', e, what);
    }
    if (e.verb === 'delete' && e.user.username === GC_USER && !nonEmpty(asBody(asBody(e.requestObject)?.preconditions)?.uid)) {
      add('without preconditions.uid', e, what);
    }
  }
  return [...found.values()].map((f) => (f.n > 1 ? `${f.first} (and ${f.n - 1} more like it)` : f.first));
}

/** the comment our requests carry inside an activity attempt (activities/kube/fence.ts) */
const ATTEMPT_COMMENT = /\(attempt ([0-9a-f]{16}) (\d+) ([0-9a-f]{6}) (\S+)\)$/;
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Writes by an execution of an activity after another took it over: for each activity (run and
 * activity ID, named in the User-Agent of every request an attempt sends), the executions that
 * wrote for it (a replica's lease of it: a local activity whose workflow task moved runs again
 * under the same attempt number, on another replica or back on this one) in order of their first
 * write; a write by one after a later one's first write came from an execution Temporal had
 * already given away. Every write counts, whatever the API server
 * answered: a precondition or a deterministic name may turn a stale write away (a create of a pod
 * the new owner already made meets AlreadyExists), but it was decided on a stale view and should
 * never have left. The takeover itself (one replica's writes, then another's) is fine, and a stale
 * write before the next owner's first is not seen here.
 */
export function staleAttemptWrites(events: AuditEvent[]): string[] {
  type Write = { at: string; replica: string; execution: string; what: string };
  const byActivity = new Map<string, Write[]>();
  for (const e of events) {
    const m = ATTEMPT_COMMENT.exec(e.userAgent ?? '');
    if (!m || !WRITES.has(e.verb) || !e.requestReceivedTimestamp) continue;
    const o = e.objectRef;
    const what = `${e.verb} of ${o?.resource ?? '?'}${o?.subresource ? `/${o.subresource}` : ''} ${o?.namespace ? `${o.namespace}/` : ''}${o?.name ?? '?'}`;
    const list = byActivity.get(m[1]) ?? [];
    list.push({ at: e.requestReceivedTimestamp, replica: m[4], execution: `${m[4]} ${m[3]}`, what });
    byActivity.set(m[1], list);
  }
  const out: string[] = [];
  for (const [key, writes] of byActivity) {
    writes.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const owners: Write[] = [];
    for (const w of writes) {
      const rank = owners.findIndex((o) => o.execution === w.execution);
      if (rank < 0) owners.push(w);
      else if (rank < owners.length - 1) {
        out.push(`activity ${key}: ${w.what} by ${w.replica} at ${w.at}, after ${owners[owners.length - 1].replica} took the activity over`);
      }
    }
  }
  return out;
}

/** Writes by controllers (their kube-system identities) the API server received between two moments (ms since the epoch). */
export function controllerWritesBetween(events: AuditEvent[], fromMs: number, toMs: number): number {
  return events.filter((e) => {
    if (!WRITES.has(e.verb) || !e.user.username.startsWith(CONTROLLER_USER_PREFIX) || !e.requestReceivedTimestamp) return false;
    const at = Date.parse(e.requestReceivedTimestamp);
    return at >= fromMs && at <= toMs;
  }).length;
}
