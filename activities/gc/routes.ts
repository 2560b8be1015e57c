import type { GcEvent, GcWorkflowInput } from '../../workflows/gc/workflow';
import { gcWorkflowId } from '../../workflows/gc/workflow';
import type { ObjectRef, OwnerReference } from '../../workflows/gc/types';
import { ResourceInfo, collectionPath, discoverResources } from './discovery';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import { SetIndex } from '../informers/set-index';
import type { Signaller } from '../informers/signaller';
import { garbageCollectorWorkflow } from '../../workflows/gc/workflow';

interface Node {
  ref: ObjectRef;
  owners: OwnerReference[];
  finalizers: string[];
  deleting: boolean;
}

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

/**
 * The garbage collector's ownership graph, built from metadata-only watches of every resource
 * discovery offers (rediscovered periodically, so CRDs created later are watched too), and the
 * rules that send objects to their collector workflow, as upstream's graph builder queues them:
 * a dependent whose owner is not in the graph (once every resource has been listed) or was
 * deleted; an owner being deleted in the foreground or with orphaning, and again whenever one of
 * its dependents changes; every dependent of an owner entering foreground deletion.
 */
export function gcRoutes(input: InformerInput, signaller: Signaller, rest: KubeRest): RouteFamily | undefined {
  if (!input.controllers.includes('garbagecollector')) return undefined;
  const nodes = new Map<string, Node>();
  const dependentsOf = new SetIndex<string, string>();
  const watched = new Map<string, ResourceInfo>(); // path -> resource
  const listed = new Set<string>();
  let synced = false;

  const refsOf = (uid: string): ObjectRef[] => [...dependentsOf.get(uid)].map((u) => nodes.get(u)?.ref).filter((r): r is ObjectRef => !!r);

  const queue = (n: Node) => {
    const args: GcWorkflowInput = { ref: n.ref, tuning: input.tuning };
    const elsewhere = n.owners.map((o) => nodes.get(o.uid)?.ref).filter((r): r is ObjectRef => !!r && !sameScope(n, r));
    const event: GcEvent = { dependents: refsOf(n.ref.uid), ...(elsewhere.length ? { ownersElsewhere: elsewhere } : {}) };
    signaller.queue({ controller: 'garbagecollector', workflow: garbageCollectorWorkflow, kind: n.ref.kind,
      namespace: n.ref.namespace ?? '', name: n.ref.name, uid: n.ref.uid, args, workflowId: gcWorkflowId(n.ref) },
      event, (_a, b) => b);
  };

  const isOwnerDeleting = (n: Node) => n.deleting && (n.finalizers.includes(FOREGROUND) || n.finalizers.includes(ORPHAN));
  /** a namespaced owner must live in its dependent's namespace; anything else is absent for that dependent */
  const sameScope = (n: Node, owner: ObjectRef) => !owner.namespace || owner.namespace === n.ref.namespace;
  const hasAbsentOwner = (n: Node) => n.owners.some((o) => {
    const owner = nodes.get(o.uid);
    return !owner || !sameScope(n, owner.ref);
  });

  const link = (n: Node, add: boolean) => {
    for (const o of n.owners) {
      if (add) dependentsOf.add(o.uid, n.ref.uid);
      else dependentsOf.delete(o.uid, n.ref.uid);
    }
  };

  const evaluate = (n: Node, before?: Node) => {
    if (synced && hasAbsentOwner(n)) queue(n);
    if (isOwnerDeleting(n)) queue(n);
    const enteredForeground = n.deleting && n.finalizers.includes(FOREGROUND) && !(before?.deleting && before.finalizers.includes(FOREGROUND));
    if (enteredForeground) for (const d of dependentsOf.get(n.ref.uid)) { const dn = nodes.get(d); if (dn) queue(dn); }
    // an owner waiting on its dependents looks again whenever one changes
    for (const o of [...n.owners, ...(before?.owners ?? [])]) { const on = nodes.get(o.uid); if (on && isOwnerDeleting(on)) queue(on); }
  };

  const nodeOf = (res: ResourceInfo, o: KubeObject & { metadata?: { finalizers?: string[] } }): Node => {
    const m = o.metadata ?? {};
    return {
      ref: { apiVersion: res.apiVersion, kind: res.kind, ...(res.namespaced && m.namespace ? { namespace: m.namespace } : {}), name: m.name ?? '', uid: m.uid ?? '' },
      owners: m.ownerReferences ?? [],
      finalizers: m.finalizers ?? [],
      deleting: !!m.deletionTimestamp,
    };
  };

  const upsert = (n: Node) => {
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

  const handlerFor = (path: string, res: ResourceInfo): Handler => ({
    relisted(objects) {
      const seen = new Set<string>();
      for (const o of objects) {
        const n = nodeOf(res, o);
        seen.add(n.ref.uid);
        upsert(n);
      }
      for (const [uid, n] of nodes) if (n.ref.apiVersion === res.apiVersion && n.ref.kind === res.kind && !seen.has(uid)) remove(uid);
      listed.add(path);
      if (!synced && [...watched.keys()].every((p) => listed.has(p))) {
        synced = true;
        for (const n of nodes.values()) if (hasAbsentOwner(n)) queue(n);
      }
    },
    event(type, o) {
      const n = nodeOf(res, o);
      if (type === 'DELETED') remove(n.ref.uid);
      else upsert(n);
    },
  });

  return {
    handlers: new Map(),
    sizes: () => ({ gcNodes: nodes.size, gcResources: watched.size }),
    async discover() {
      const found = await discoverResources(rest);
      const added: Array<{ path: string; handler: Handler; metadataOnly: boolean }> = [];
      for (const r of found) {
        const path = collectionPath({ ...r, namespaced: false });
        if (watched.has(path)) continue;
        watched.set(path, r);
        added.push({ path, handler: handlerFor(path, r), metadataOnly: true });
      }
      return added;
    },
  };
}
