import type { GcEvent, GcWorkflowInput } from '../../workflows/gc/workflow';
import { gcWorkflowId } from '../../workflows/gc/workflow';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type ObjectRef, type OwnerReference } from '../../workflows/gc/types';
import { collectionPath, type ResourceInfo } from '../kube/discovery';
import type { KubeObject } from '../kube/projections';
import { METADATA, type FieldMask } from '../informers/fields';
import type { RouteFamily } from '../informers/family';
import { SetIndex } from '../informers/set-index';
import type { StoreEvent, StoreListener } from '../informers/store';
import type { RouteContext } from '../../workers/descriptor';
import { garbageCollectorWorkflow } from '../../workflows/gc/workflow';

/** One object as the collector's graph holds it. */
export interface GcNode {
  ref: ObjectRef;
  owners: OwnerReference[];
  finalizers: string[];
  deleting: boolean;
}

/**
 * What gcNode reads: metadata only, which the shared cache keeps of every resource anyway, so the
 * collector adds nothing to a store another controller fills and watches the rest as metadata.
 */
export const GC_NODE_FIELDS: FieldMask = METADATA;

/** The collector's view of one object of a discovered resource (apiVersion and kind come from discovery, not the object). */
export function gcNode(res: ResourceInfo, o: KubeObject): GcNode {
  const m = o.metadata ?? {};
  return {
    ref: { apiVersion: res.apiVersion, kind: res.kind, ...(res.namespaced && m.namespace ? { namespace: m.namespace } : {}), name: m.name ?? '', uid: m.uid ?? '' },
    owners: m.ownerReferences ?? [],
    finalizers: m.finalizers ?? [],
    deleting: !!m.deletionTimestamp,
  };
}

/**
 * The garbage collector's ownership graph, built from every resource discovery offers
 * (rediscovered periodically, so CRDs created later are watched too) through the shared cache:
 * a resource another controller already watches gives the collector that store's metadata, so
 * each resource is listed and watched once. The rules that send objects to their collector
 * workflow follow upstream's graph builder: a dependent whose owner is not in the graph (once
 * every resource has been listed) or was deleted; an owner being deleted in the foreground or
 * with orphaning, and again whenever one of its dependents changes; every dependent of an owner
 * entering foreground deletion.
 */
export function gcRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('garbagecollector')) return undefined;
  // The graph spans every watched resource: an owner of any kind, found by UID, and its dependents
  // of any kind. No one store can answer that, so the collector keeps this index of its own.
  const nodes = new Map<string, GcNode>();
  const dependentsOf = new SetIndex<string, string>();
  /** the resources the collector registered, by collection path: what "every resource listed" means */
  const watched = new Map<string, ResourceInfo>();
  /** once every watched resource has been listed, absent owners are absent, not merely not yet seen */
  let synced = false;

  const refsOf = (uid: string): ObjectRef[] => [...dependentsOf.get(uid)].map((u) => nodes.get(u)?.ref).filter((r): r is ObjectRef => !!r);

  const queue = (n: GcNode) => {
    const args: GcWorkflowInput = { ref: n.ref, tuning: input.tuning };
    const elsewhere = n.owners.map((o) => nodes.get(o.uid)?.ref).filter((r): r is ObjectRef => !!r && !sameScope(n, r));
    const event: GcEvent = { dependents: refsOf(n.ref.uid), ...(elsewhere.length ? { ownersElsewhere: elsewhere } : {}) };
    signaller.queue({ controller: 'garbagecollector', workflow: garbageCollectorWorkflow, kind: n.ref.kind,
      namespace: n.ref.namespace ?? '', name: n.ref.name, uid: n.ref.uid, args, workflowId: gcWorkflowId(n.ref) },
      event, (_a, b) => b);
  };

  const isOwnerDeleting = (n: GcNode) => n.deleting && (n.finalizers.includes(FOREGROUND_FINALIZER) || n.finalizers.includes(ORPHAN_FINALIZER));
  /** a namespaced owner must live in its dependent's namespace; anything else is absent for that dependent */
  const sameScope = (n: GcNode, owner: ObjectRef) => !owner.namespace || owner.namespace === n.ref.namespace;
  const hasAbsentOwner = (n: GcNode) => n.owners.some((o) => {
    const owner = nodes.get(o.uid);
    return !owner || !sameScope(n, owner.ref);
  });

  const link = (n: GcNode, add: boolean) => {
    for (const o of n.owners) {
      if (add) dependentsOf.add(o.uid, n.ref.uid);
      else dependentsOf.delete(o.uid, n.ref.uid);
    }
  };

  const evaluate = (n: GcNode, before?: GcNode) => {
    if (synced && hasAbsentOwner(n)) queue(n);
    if (isOwnerDeleting(n)) queue(n);
    const enteredForeground = n.deleting && n.finalizers.includes(FOREGROUND_FINALIZER) && !(before?.deleting && before.finalizers.includes(FOREGROUND_FINALIZER));
    if (enteredForeground) for (const d of dependentsOf.get(n.ref.uid)) { const dn = nodes.get(d); if (dn) queue(dn); }
    // a dependent that appears after its owner entered the foreground (a restart lists the owner
    // first) is sent too, as upstream's graph builder queues a new node with a deleting owner
    const joinsForeground = !before && n.owners.some((o) => {
      const on = nodes.get(o.uid);
      return !!on && on.deleting && on.finalizers.includes(FOREGROUND_FINALIZER);
    });
    if (joinsForeground) queue(n);
    // an owner waiting on its dependents looks again whenever one changes
    for (const o of [...n.owners, ...(before?.owners ?? [])]) { const on = nodes.get(o.uid); if (on && isOwnerDeleting(on)) queue(on); }
  };

  const upsert = (n: GcNode) => {
    const before = nodes.get(n.ref.uid);
    if (before) link(before, false);
    nodes.set(n.ref.uid, n);
    link(n, true);
    evaluate(n, before);
  };

  const remove = (uid: string) => {
    const n = nodes.get(uid);
    if (!n) return;
    link(n, false);
    nodes.delete(uid);
    if (isOwnerDeleting(n)) queue(n); // its workflow sees it gone and ends
    for (const d of dependentsOf.get(uid)) { const dn = nodes.get(d); if (dn) queue(dn); }
    for (const o of n.owners) { const on = nodes.get(o.uid); if (on && isOwnerDeleting(on)) queue(on); }
  };

  /**
   * Every registered resource's store has been listed: its own reflector's first list, or, for a
   * store another controller filled first, the replay it gives a late subscriber. The stores say
   * so themselves; only the one-way switch is kept here.
   */
  const checkSynced = () => {
    if (synced || !watched.size) return;
    for (const path of watched.keys()) if (!cache.store(path)?.synced) return;
    synced = true;
    // Upstream's collector looks at every dependent with an absent owner whenever it starts; so
    // does each new holder of the watch, even one resuming it. A resumed list is muted, and the
    // owner's deletion may have come before the collector subscribed to the owner's store (its
    // discovery runs after the resumed stores' watches start), so neither the list nor an event
    // would tell the dependent: only this look at the graph does.
    signaller.unmuted(() => {
      for (const n of nodes.values()) if (hasAbsentOwner(n)) queue(n);
    });
  };

  const listenerFor = (res: ResourceInfo): StoreListener => ({
    onEvent(ev: StoreEvent) {
      // a relist's `updated` of an unchanged object re-evaluates it too: an owner may have gone during the gap
      if (ev.type === 'deleted') remove(ev.old.metadata?.uid ?? '');
      else upsert(gcNode(res, ev.obj));
    },
    onListed: checkSynced,
  });

  return {
    sizes: () => ({ gcNodes: nodes.size, gcResources: watched.size }),
    discover(resources) {
      const found = resources.map((r) => ({ path: collectionPath(r), r })).filter(({ path }) => !watched.has(path));
      // all of a round is known before any registers: a store that is already listed replays into
      // the graph at once, and must not count as "everything listed" while its peers are not yet in
      for (const { path, r } of found) watched.set(path, r);
      for (const { path, r } of found) cache.watch(path, GC_NODE_FIELDS, listenerFor(r));
      checkSynced();
    },
  };
}
