import { ApiError } from '../../../activities/kube/rest';
import type { AuditEvent } from '../../../bench/lib/audit';
import type { ChaosContext } from '../types';

/**
 * One entry of the hostile corpus: objects the API server accepts that a controller may choke on.
 * Each is made in `act` (after anything it needs from `prepare`), is `settled` when it reached the
 * end state upstream reaches (a Warning Event, a condition, or upstream's exact behaviour), and shows
 * a user's `view` of it, to set beside upstream's field by field.
 */
export interface HostileItem {
  slug: string;
  /** what is hostile about it, for the docs */
  what: string;
  /** short names of the controllers it exercises */
  controllers: string[];
  prepare?(ctx: ChaosContext): Promise<void>;
  act(ctx: ChaosContext): Promise<void>;
  settled(ctx: ChaosContext): Promise<boolean>;
  view(ctx: ChaosContext): Promise<unknown>;
  /** what must never happen to it, from its end state and the audit log since the change */
  violations?(ctx: ChaosContext, audit: AuditEvent[]): Promise<string[]>;
  /** removes what it made outside the scenario's namespace, or what only a controller would remove */
  cleanup?(ctx: ChaosContext): Promise<void>;
}

export interface Condition { type: string; status: string; reason?: string; message?: string }
export interface Meta {
  name: string; uid: string; generation?: number; deletionTimestamp?: string; finalizers?: string[];
  labels?: Record<string, string>; annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
}

export async function get<T>(ctx: ChaosContext, path: string): Promise<T | undefined> {
  try {
    return (await ctx.rest.request<T>('GET', path)).body;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

export const list = async <T>(ctx: ChaosContext, path: string): Promise<T[]> => (await ctx.rest.request<{ items: T[] | null }>('GET', path)).body.items ?? [];

export const post = (ctx: ChaosContext, path: string, body: unknown) => ctx.rest.request('POST', path, { body });

/** Ignores a 404: cleanup of what may already be gone. */
export const gone = (e: unknown) => {
  if (!(e instanceof ApiError && e.status === 404)) throw e;
};

/** Conditions as a user compares them: type, status and reason, by type (times and messages vary by run). */
export const conditionsView = (cs: Condition[] | undefined) =>
  (cs ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })).sort((a, b) => a.type.localeCompare(b.type));

export const hasCondition = (cs: Condition[] | undefined, type: string, status = 'True') => (cs ?? []).some((c) => c.type === type && c.status === status);

interface EventObj { type?: string; reason?: string; message?: string; involvedObject?: { name?: string; kind?: string } }

/**
 * A controller's write refused because its ServiceAccount was not yet authorized: what a restarted
 * kube-apiserver answers for a second or so while its RBAC caches fill. Either manager reports it
 * (upstream's job and cronjob controllers record FailedCreate for it too), but only the pass with
 * restarts meets it, so it is no difference from upstream's fault-free pass.
 */
export const notYetAuthorized = (message: string | undefined) => /is forbidden: User "system:serviceaccount:kube-system:[^"]+" cannot /.test(message ?? '');

/**
 * The distinct `type reason` pairs of the events about one object, as `kubectl describe` lists them
 * (how many times each was counted depends on timing, so not the counts).
 */
export async function eventReasons(ctx: ChaosContext, ns: string, kind: string, name: string, only?: 'Warning'): Promise<string[]> {
  const events = await list<EventObj>(ctx, `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name},involvedObject.kind=${kind}`)}`);
  return [...new Set(events.filter((e) => (!only || e.type === only) && !notYetAuthorized(e.message))
    .map((e) => `${e.type ?? '?'} ${e.reason ?? '?'}`))].sort();
}

/** A namespace of the corpus's own beside the scenario's (a quota or a deletion must not touch the rest). */
export async function makeNamespace(ctx: ChaosContext, name: string, spec?: unknown): Promise<void> {
  await post(ctx, '/api/v1/namespaces', { metadata: { name, labels: { 'temporal-kcm.dev/bench': 'chaos-hostile' } }, ...(spec ? { spec } : {}) });
  await post(ctx, `/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } });
}

/** A pod template kwok runs forever (or steers by `labels`, see hack/kwok/stages.yaml). */
export const podTemplate = (labels: Record<string, string>, extra: { annotations?: Record<string, string>; restartPolicy?: string; env?: Array<{ name: string; value: string }> } = {}) => ({
  metadata: { labels, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
  spec: {
    ...(extra.restartPolicy ? { restartPolicy: extra.restartPolicy } : {}),
    terminationGracePeriodSeconds: 0,
    containers: [{ name: 'app', image: 'registry.invalid/hostile:1', ...(extra.env ? { env: extra.env } : {}) }],
  },
});
