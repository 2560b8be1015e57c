import { Context } from '@temporalio/activity';
import { ApiError, type KubeRest, type RequestOptions } from './rest';
import { parseResourcePath } from './resources';
import { runningActivity } from './running-activity';
import type { KubeObject } from './projections';
import { entryOf, type WriteShape } from '../shadow/content';
import type { ShadowEntry } from '../../workflows/shadow/types';

/*
 * --shadow: a replica that decides as it always does and writes nothing.
 *
 * Every write a controller's client makes goes to the API server as a server-side dry run
 * (`dryRun=All`): the server authorizes, admits, validates and defaults it as it would the write,
 * answers as it would (a generated name, a conflict on a stale resourceVersion, the same refusal of
 * a bad pod template) and stores nothing. The activity then goes on with a real answer, and the
 * write is recorded as a proposal: what, on which object, for which reason, from which workflow.
 * Reads are untouched. Only controllers' clients are shadowed; the manager's own calls (its
 * ServiceAccount tokens) are not writes to the cluster's objects.
 */

export type ProposalVerb = 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** One write a shadow replica would have made. */
export interface Proposal {
  controller: string;
  verb: ProposalVerb;
  /** the resource's plural, e.g. pods, replicasets, events */
  resource: string;
  subresource?: string;
  namespace?: string;
  /** for a create, the name the dry run gave the object */
  name?: string;
  /** the reason the activity's input gives */
  reason?: string;
  activity?: string;
  workflowId?: string;
  /** the API server's refusal of the dry run, when it refused it (the write would have failed the same way) */
  refused?: { status: number; reason: string };
}

const VERBS: Record<string, ProposalVerb | undefined> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** What a request path writes, or undefined for a read. */
export function writeOf(method: string, path: string): Omit<Proposal, 'controller'> | undefined {
  const verb = VERBS[method.toUpperCase()];
  if (!verb) return undefined;
  const p = parseResourcePath(path);
  if (!p) return undefined;
  return {
    verb: verb === 'delete' && p.name === undefined ? 'deletecollection' : verb,
    resource: p.resource,
    ...(p.subresource !== undefined ? { subresource: p.subresource } : {}),
    ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
  };
}

function bodyOf(ro: RequestOptions | undefined): unknown {
  if (ro?.body !== undefined) return ro.body;
  try {
    return ro?.rawBody !== undefined ? JSON.parse(ro.rawBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The same request as a server-side dry run. */
export function dryRunPath(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}dryRun=All`;
}

/** The reason an activity's input gives (every write activity names one), if it gives one. */
function reasonOf(input: unknown): string | undefined {
  const r = (input as { reason?: unknown } | undefined)?.reason;
  return typeof r === 'string' ? r : undefined;
}

function activityOf(): { activity?: string; workflowId?: string } {
  try {
    const info = Context.current().info;
    return { activity: info.activityType, ...(info.workflowExecution ? { workflowId: info.workflowExecution.workflowId } : {}) };
  } catch {
    return {}; // not inside an activity (an event sent after its activity ended)
  }
}

/**
 * The proposal as the shadow ledger matches it, built from the dry run's answer (the object as
 * the write would have left it). An eviction is a delete of its pod; a write to an Event, an event.
 */
export function proposalEntry(p: Proposal, answer: unknown, at: number): ShadowEntry {
  const o = answer && typeof answer === 'object' && (answer as KubeObject).metadata ? (answer as KubeObject & Record<string, unknown>) : undefined;
  const where = { resource: p.resource, ...(p.namespace ? { namespace: p.namespace } : {}), ...(p.name ? { name: p.name } : {}) };
  const shape: WriteShape =
    p.resource === 'events' ? { ...where, kind: 'event' }
    : p.subresource === 'eviction' ? { ...where, kind: 'delete' }
    : p.verb === 'delete' || p.verb === 'deletecollection' ? { ...where, kind: p.verb }
    : { ...where, kind: p.verb === 'create' && !p.subresource ? 'create' : 'write', ...(p.subresource ? { subresource: p.subresource } : {}) };
  return entryOf('ours', at, shape, shape.kind === 'deletecollection' ? undefined : o, {
    controller: p.controller,
    ...(p.reason ? { reason: p.reason } : {}),
    ...(p.workflowId ? { workflowId: p.workflowId } : {}),
  });
}

/**
 * How long after a dry run refused as stale a Warning Event on the same object counts as its
 * consequence: controllers record the failed write's Event at once (FailedToUpdateEndpoint).
 */
export const REFUSAL_EVENT_MS = 10_000;
const REFUSALS_KEPT = 1000;

/**
 * `rest` for `controller` with every write sent as a dry run and handed to `record`, with the
 * ledger's entry for it when the dry run was accepted.
 */
export function shadowed(rest: KubeRest, controller: string, record: (p: Proposal, entry?: ShadowEntry) => void): KubeRest {
  const shadow = Object.create(rest) as KubeRest;
  // namespace/name of the objects whose writes were refused as stale lately, and when: a Warning
  // Event ours then sends about that object reports a failure the shadow itself caused (the
  // cluster's manager had written first), not a decision to compare
  const refusedAt = new Map<string, number>();
  const afterRefusal = (entry: ShadowEntry, answer: unknown, now: number): ShadowEntry => {
    const ev = answer as { type?: string; involvedObject?: { namespace?: string; name?: string } } | undefined;
    const at = refusedAt.get(`${ev?.involvedObject?.namespace ?? ''}/${ev?.involvedObject?.name ?? ''}`);
    return ev?.type === 'Warning' && at !== undefined && now - at <= REFUSAL_EVENT_MS ? { ...entry, afterRefusal: true } : entry;
  };
  shadow.request = async <T>(method: string, path: string, ro?: RequestOptions) => {
    const write = writeOf(method, path);
    if (!write) return rest.request<T>(method, path, ro);
    const reason = reasonOf(runningActivity.getStore()?.input);
    const context: Proposal = { controller, ...write, ...(reason ? { reason } : {}), ...activityOf() };
    try {
      const res = await rest.request<T>(method, dryRunPath(path), ro);
      const created = write.verb === 'create' && !write.name ? (res.body as { metadata?: { name?: string } } | undefined)?.metadata?.name : undefined;
      const p: Proposal = { ...context, ...(created ? { name: created } : {}) };
      const now = Date.now();
      const entry = proposalEntry(p, res.body, now);
      record(p, write.resource === 'events' ? afterRefusal(entry, res.body, now) : entry);
      return res;
    } catch (e) {
      if (e instanceof ApiError && e.status >= 400 && e.status < 500) {
        const p: Proposal = { ...context, refused: { status: e.status, reason: e.reason } };
        if (e.status === 409 && write.name) {
          refusedAt.delete(`${write.namespace ?? ''}/${write.name}`);
          refusedAt.set(`${write.namespace ?? ''}/${write.name}`, Date.now());
          if (refusedAt.size > REFUSALS_KEPT) refusedAt.delete(refusedAt.keys().next().value!);
        }
        // Refused as stale (409: the object moved on, or already exists): in shadow mode that is
        // the cluster's manager having written first, from the same state ours decided on. Ours
        // would have made this write; the ledger compares what it asked for (the request's body).
        // A delete refused as NotFound is the same race: the object ours would delete is gone
        // already, and the deletion the watch saw is what ours' delete is compared with.
        const stale = e.status === 409 && write.verb !== 'patch' ? { ...proposalEntry(p, bodyOf(ro), Date.now()), fromRequest: true }
          : e.status === 404 && (write.verb === 'delete' || write.subresource === 'eviction') ? { ...proposalEntry(p, undefined, Date.now()), fromRequest: true }
          : undefined;
        record(p, stale);
      }
      throw e;
    }
  };
  return shadow;
}
