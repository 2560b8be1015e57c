import type { LocalReads } from '../informers/local-reads';
import { isStatus } from './failures';
import type { KubeObject } from './projections';
import type { KubeRest } from './rest';
import { resourcePath, type ResourceType } from './resources';
import { withFinalizer } from '../../workflows/common/storage-protection';

/** One protection finalizer to add or remove, decided on the object at `resourceVersion`. */
export interface ProtectionFinalizerWrite {
  /** why, in words: first in the input, so the Web UI shows it at the top */
  reason: string;
  /** '' for a cluster-scoped object */
  namespace: string;
  name: string;
  uid: string;
  /** the version the decision was made at: a newer object is decided again, never written over */
  resourceVersion: string;
  finalizer: string;
  /** add (true) or remove (false) */
  present: boolean;
}

/**
 * - `written`: the update went through;
 * - `unchanged`: the object already has the finalizer as wanted (a retried write that had landed);
 * - `conflict`: the object changed since the decision (or another object took the name): its watch
 *   event, which the routes judge again, says what comes next;
 * - `gone`: the object is deleted.
 */
export type ProtectionFinalizerOutcome = 'written' | 'unchanged' | 'conflict' | 'gone';

/**
 * Adds or removes a protection finalizer with an update carrying the decision's resourceVersion,
 * as upstream's controllers update their informer's copy: their roles grant update, not patch.
 * The base is the informer cache's copy at exactly that version when this replica holds it whole,
 * else a fresh read. Safe to run twice: a write that already landed reads back as `unchanged`.
 */
export async function writeProtectionFinalizer(
  rest: KubeRest,
  local: LocalReads,
  resource: ResourceType,
  req: ProtectionFinalizerWrite,
): Promise<ProtectionFinalizerOutcome> {
  const path = resourcePath(resource, req.namespace || undefined, req.name);
  let current: KubeObject | undefined = local.at(resource, req.namespace, req.name, { uid: req.uid, resourceVersion: req.resourceVersion });
  if (!current) {
    try {
      current = (await rest.request<KubeObject>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return 'gone';
      throw e;
    }
  }
  const m = current.metadata ?? {};
  if (m.uid !== req.uid) return 'conflict';
  const has = (m.finalizers ?? []).includes(req.finalizer);
  if (has === req.present) return 'unchanged';
  if (m.resourceVersion !== req.resourceVersion) return 'conflict';
  const body = { ...current, metadata: { ...m, finalizers: withFinalizer(m.finalizers, req.finalizer, req.present) } };
  try {
    await rest.request('PUT', path, { body });
  } catch (e) {
    if (isStatus(e, 404)) return 'gone';
    if (isStatus(e, 409)) return 'conflict';
    throw e;
  }
  return 'written';
}
