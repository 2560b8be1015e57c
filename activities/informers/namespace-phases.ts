import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import type { InformerCache } from './cache';
import type { FieldMask } from './fields';
import type { Store } from './store';

/** What namespaceActive reads of a Namespace. */
export const NAMESPACE_PHASE_FIELDS: FieldMask = { metadata: true, status: { phase: true } };

/** A namespace being deleted is Terminating; one that was just created may not show a phase yet. */
export function namespaceActive(o: KubeObject & { status?: { phase?: string } }): boolean {
  return !o.metadata?.deletionTimestamp && (o.status?.phase ?? 'Active') === 'Active';
}

/**
 * Which namespaces are active, read from the shared namespaces store, for controllers that keep
 * something in every namespace.
 */
export class NamespacePhases {
  private constructor(private readonly store: Store) {}

  /**
   * Registers with the cache; `changed` is called with each namespace added or updated (by a
   * watch event or a list) and whether it is active: a deleted one is owed nothing, so it is not
   * reported. It may be called before this returns (a store another controller already listed).
   */
  static watch(cache: InformerCache, changed: (namespace: string, active: boolean) => void): NamespacePhases {
    const store = cache.watch(RESOURCES.namespaces, NAMESPACE_PHASE_FIELDS, {
      onEvent(ev) {
        if (ev.type !== 'deleted') changed(ev.obj.metadata?.name ?? '', namespaceActive(ev.obj));
      },
    });
    return new NamespacePhases(store);
  }

  isActive(ns: string): boolean {
    const o = this.store.getByName('', ns);
    return !!o && namespaceActive(o);
  }

  *activeNamespaces(): Iterable<string> {
    for (const o of this.store.list()) if (namespaceActive(o)) yield o.metadata?.name ?? '';
  }
}
