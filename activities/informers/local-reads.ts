import type { KubeObject } from '../kube/projections';
import { apiVersionOf, type ResourceType } from '../kube/resources';
import type { InformerCache } from './cache';
import type { FieldMask } from './fields';

/**
 * What a write needs of an object it puts back whole: an update (PUT) replaces every field, so
 * its base must be the object as the API server holds it, managedFields aside (an update without
 * them keeps the server's, as upstream's informer-fed controllers rely on).
 */
export const WHOLE_OBJECT: FieldMask = { apiVersion: true, kind: true, metadata: true, spec: true, status: true };

/**
 * This replica's informer cache, for activities, while this replica runs the informer activity.
 * Upstream's controllers write from their informers' objects; ours run on any replica, and only
 * one replica holds the watch, so an activity asks here first and reads the API when the cache is
 * elsewhere, not yet synced, or keeps too little of the object.
 */
export class LocalReads {
  private cache?: InformerCache;

  /** `onGuardedRead` hears whether each `at` was served from the cache (for kcm_local_reads_total) */
  constructor(private readonly onGuardedRead: (hit: boolean) => void = () => undefined) {}

  attach(cache: InformerCache): void {
    this.cache = cache;
  }

  /** Called when that cache's activity ends: a stopped cache is no longer fed and must not be read. */
  detach(cache: InformerCache): void {
    if (this.cache === cache) this.cache = undefined;
  }

  /**
   * A copy of the named object, if this replica's cache is synced on its resource and keeps at
   * least `needed` of it; undefined when it is not here or the cache cannot tell.
   */
  get(resource: ResourceType, namespace: string, name: string, needed: FieldMask): KubeObject | undefined {
    const o = this.cache?.read(resource, namespace, name, needed);
    // a list's items carry no type fields; a write of the object names its type as a read's would
    return o ? { ...o, apiVersion: o.apiVersion ?? apiVersionOf(resource), kind: o.kind ?? resource.kind } : undefined;
  }

  /** Copies of the objects `keep` selects, if this replica's cache is synced on the resource and keeps `needed`. */
  list(resource: ResourceType, needed: FieldMask, keep?: (o: KubeObject) => boolean): KubeObject[] | undefined {
    const all = this.cache?.readAll(resource, needed, keep);
    return all?.map((o) => ({ ...o, apiVersion: o.apiVersion ?? apiVersionOf(resource), kind: o.kind ?? resource.kind }));
  }

  /**
   * The object exactly as it was at `resourceVersion` (and with this UID), for a write guarded by
   * that version: the API would answer the same GET, and a newer object makes the write a 409
   * either way. Undefined when the cache does not hold that very version.
   */
  at(resource: ResourceType, namespace: string, name: string, guard: { uid: string; resourceVersion: string }): KubeObject | undefined {
    const o = this.get(resource, namespace, name, WHOLE_OBJECT);
    const hit = o?.metadata?.uid === guard.uid && o?.metadata?.resourceVersion === guard.resourceVersion;
    this.onGuardedRead(hit);
    return hit ? o : undefined;
  }
}
