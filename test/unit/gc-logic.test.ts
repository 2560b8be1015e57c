import {
  batchReason,
  blocksOwner,
  classifyOwners,
  decideDependent,
  decideForegroundOwner,
  decideOrphanOwner,
  isBeingDeleted,
  isDeletingDependents,
  isOrphaningDependents,
  planDependent,
  refOf,
  validateOwnerReferences,
} from '../../workflows/gc/logic';
import {
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  type DependentContext,
  type GcAction,
  type ObjectMetaView,
  type OwnerLookup,
  type OwnerReference,
  type WarningEventAction,
} from '../../workflows/gc/types';

// ---------------------------------------------------------------------------------------------
// fixtures

const DELETED_AT = '2026-01-01T00:00:00Z';

function obj(
  kind: string,
  name: string,
  uid: string,
  opts: Partial<Pick<ObjectMetaView, 'namespace' | 'deletionTimestamp' | 'finalizers' | 'ownerReferences' | 'apiVersion'>> = {},
): ObjectMetaView {
  const o: ObjectMetaView = {
    apiVersion: opts.apiVersion ?? (kind === 'ReplicaSet' || kind === 'Deployment' ? 'apps/v1' : 'v1'),
    kind,
    name,
    uid,
    resourceVersion: '1',
    finalizers: opts.finalizers ?? [],
    ownerReferences: opts.ownerReferences ?? [],
  };
  if (opts.namespace !== undefined) o.namespace = opts.namespace;
  if (opts.deletionTimestamp !== undefined) o.deletionTimestamp = opts.deletionTimestamp;
  return o;
}

function ownerRef(owner: ObjectMetaView, block = false, controller = false): OwnerReference {
  const r: OwnerReference = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid };
  if (block) r.blockOwnerDeletion = true;
  if (controller) r.controller = true;
  return r;
}

function rawRef(kind: string, name: string, uid: string, block = false): OwnerReference {
  const r: OwnerReference = { apiVersion: kind === 'ReplicaSet' || kind === 'Deployment' ? 'apps/v1' : 'v1', kind, name, uid };
  if (block) r.blockOwnerDeletion = true;
  return r;
}

function exists(owner: ObjectMetaView, ref?: OwnerReference, namespaced = owner.namespace !== undefined): OwnerLookup {
  return { ref: ref ?? ownerRef(owner), state: 'exists', namespaced, owner };
}

function absent(ref: OwnerReference, namespaced = true): OwnerLookup {
  return { ref, state: 'absent', namespaced };
}

function types(actions: GcAction[]): string[] {
  return actions.map((a) => a.type);
}

// ---------------------------------------------------------------------------------------------
// an in-memory apiserver + a GC that runs the decisions until nothing is left to do

const NAMESPACED_KINDS: Record<string, boolean> = {
  Deployment: true,
  ReplicaSet: true,
  Pod: true,
  ConfigMap: true,
  Secret: true,
  Node: false,
  Namespace: false,
  ClusterRole: false,
  PersistentVolume: false,
};

class World {
  objects = new Map<string, ObjectMetaView>();
  deletedOrder: string[] = [];
  events: WarningEventAction[] = [];
  writes: GcAction[] = [];
  private rv = 1;

  constructor(objs: ObjectMetaView[]) {
    for (const o of objs) this.objects.set(o.uid, structuredClone(o));
  }

  get(uid: string): ObjectMetaView | undefined {
    return this.objects.get(uid);
  }

  has(uid: string): boolean {
    return this.objects.has(uid);
  }

  private bump(o: ObjectMetaView): void {
    this.rv += 1;
    o.resourceVersion = String(this.rv);
  }

  private removeIfDone(o: ObjectMetaView): void {
    if (isBeingDeleted(o) && o.finalizers.length === 0) {
      this.objects.delete(o.uid);
      this.deletedOrder.push(o.name);
    }
  }

  /** DELETE as the apiserver does it: Foreground/Orphan add their finalizer, anything left without finalizers goes. */
  delete(uid: string, propagation: 'Background' | 'Foreground' | 'Orphan'): void {
    const o = this.objects.get(uid);
    if (!o || isBeingDeleted(o)) return;
    o.deletionTimestamp = DELETED_AT;
    if (propagation === 'Foreground' && !o.finalizers.includes(FOREGROUND_FINALIZER)) o.finalizers.push(FOREGROUND_FINALIZER);
    if (propagation === 'Orphan' && !o.finalizers.includes(ORPHAN_FINALIZER)) o.finalizers.push(ORPHAN_FINALIZER);
    this.bump(o);
    this.removeIfDone(o);
  }

  removeCustomFinalizer(uid: string, f: string): void {
    const o = this.objects.get(uid);
    if (!o) return;
    o.finalizers = o.finalizers.filter((x) => x !== f);
    this.bump(o);
    this.removeIfDone(o);
  }

  find(kind: string, namespace: string | undefined, name: string): ObjectMetaView | undefined {
    for (const o of this.objects.values()) {
      if (o.kind === kind && o.name === name && (o.namespace ?? '') === (namespace ?? '')) return o;
    }
    return undefined;
  }

  /** What the workflow would read for each owner reference of `dep`. */
  lookups(dep: ObjectMetaView): OwnerLookup[] {
    return dep.ownerReferences.map((ref) => {
      const namespaced = NAMESPACED_KINDS[ref.kind];
      if (namespaced === undefined) return { ref, state: 'unresolvable-kind' as const };
      const byUid = this.objects.get(ref.uid);
      const resolvedNs = namespaced ? dep.namespace : undefined;
      const l: OwnerLookup = { ref, state: 'absent', namespaced };
      if (!(namespaced && dep.namespace === undefined)) {
        const found = this.find(ref.kind, resolvedNs, ref.name);
        if (found && found.uid === ref.uid) {
          l.state = 'exists';
          l.owner = structuredClone(found);
        }
      }
      if (l.state !== 'exists' && byUid) l.observedElsewhere = refOf(byUid);
      return l;
    });
  }

  dependentsOf(uid: string): ObjectMetaView[] {
    return [...this.objects.values()].filter((o) => o.ownerReferences.some((r) => r.uid === uid)).map((o) => structuredClone(o));
  }

  apply(a: GcAction): boolean {
    switch (a.type) {
      case 'warningEvent':
        this.events.push(a);
        return false;
      case 'evaluateDependent':
        return false;
      case 'deleteObject': {
        const o = this.objects.get(a.target.uid);
        if (!o) return true;
        if (a.resourceVersion !== undefined && a.resourceVersion !== o.resourceVersion) return true; // conflict: re-decide
        this.writes.push(a);
        this.delete(a.target.uid, a.propagation);
        return true;
      }
      case 'removeOwnerReferences': {
        const o = this.objects.get(a.target.uid);
        this.writes.push(a);
        if (o) {
          o.ownerReferences = o.ownerReferences.filter((r) => !a.ownerUids.includes(r.uid));
          this.bump(o);
        }
        return true;
      }
      case 'unblockOwnerReferences': {
        const o = this.objects.get(a.target.uid);
        this.writes.push(a);
        if (o) {
          o.ownerReferences = o.ownerReferences.map((r) => (a.ownerUids.includes(r.uid) ? { ...r, blockOwnerDeletion: false } : r));
          this.bump(o);
        }
        return true;
      }
      case 'removeFinalizer': {
        const o = this.objects.get(a.target.uid);
        this.writes.push(a);
        if (o) {
          o.finalizers = o.finalizers.filter((f) => f !== a.finalizer);
          this.bump(o);
          this.removeIfDone(o);
        }
        return true;
      }
      case 'orphanDependents': {
        this.writes.push(a);
        for (const d of a.dependents) {
          const o = this.objects.get(d.uid);
          if (!o) continue;
          o.ownerReferences = o.ownerReferences.filter((r) => r.uid !== a.owner.uid);
          this.bump(o);
        }
        return true;
      }
    }
  }

  /** One GC pass: every object, in name order, decided on the current state and its writes applied at once. */
  round(): number {
    let writes = 0;
    const names = [...this.objects.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((o) => o.uid);
    for (const uid of names) {
      const cur = this.objects.get(uid);
      if (!cur) continue;
      const o = structuredClone(cur);
      let actions: GcAction[];
      if (isOrphaningDependents(o)) {
        actions = decideOrphanOwner(o, this.dependentsOf(o.uid));
      } else if (isDeletingDependents(o)) {
        const deps = this.dependentsOf(o.uid);
        const ctx: Record<string, DependentContext> = {};
        for (const d of deps) ctx[d.uid] = { lookups: this.lookups(d), ownDependents: this.dependentsOf(d.uid) };
        actions = decideForegroundOwner(o, deps, ctx);
      } else {
        actions = decideDependent(o, this.lookups(o), this.dependentsOf(o.uid));
      }
      for (const a of actions) if (this.apply(a)) writes += 1;
    }
    return writes;
  }

  /** Runs rounds until one writes nothing; returns how many rounds wrote something. Throws past `limit`. */
  settle(limit = 20): number {
    for (let i = 0; i < limit; i++) {
      if (this.round() === 0) return i;
    }
    throw new Error(`GC did not settle within ${limit} rounds; left: ${[...this.objects.values()].map((o) => o.name).join(',')}`);
  }
}

// ---------------------------------------------------------------------------------------------
// validateOwnerReferences

describe('validateOwnerReferences', () => {
  const rs = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns1' });

  it('accepts a namespaced owner in the dependent namespace', () => {
    const pod = obj('Pod', 'p', 'p-uid', { namespace: 'ns1', ownerReferences: [ownerRef(rs)] });
    const v = validateOwnerReferences(pod, [exists(rs)]);
    expect(v).toEqual({ events: [], invalid: [], unresolvableForever: false });
  });

  it('accepts a cluster-scoped owner of a namespaced dependent', () => {
    const node = obj('Node', 'n1', 'node-uid');
    const pod = obj('Pod', 'p', 'p-uid', { namespace: 'ns1', ownerReferences: [ownerRef(node)] });
    expect(validateOwnerReferences(pod, [exists(node, undefined, false)]).invalid).toEqual([]);
    expect(validateOwnerReferences(pod, [absent(ownerRef(node), false)]).invalid).toEqual([]);
  });

  it('warns about a namespaced owner whose UID lives in another namespace, and marks it dangling (not fatal)', () => {
    const owner = obj('Pod', 'podname2', 'poduid2', { namespace: 'ns2' });
    const pod = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1', ownerReferences: [ownerRef(owner)] });
    const v = validateOwnerReferences(pod, [{ ...absent(ownerRef(owner)), observedElsewhere: refOf(owner) }]);
    expect(v.unresolvableForever).toBe(false);
    expect(v.invalid).toEqual([{ ref: ownerRef(owner), code: 'OwnerInOtherNamespace' }]);
    expect(v.events).toEqual([
      {
        type: 'warningEvent',
        target: refOf(pod),
        reason: 'OwnerRefInvalidNamespace',
        message: 'ownerRef [v1/Pod, namespace: ns1, name: podname2, uid: poduid2] does not exist in namespace "ns1"',
      },
    ]);
  });

  it('rejects a namespaced owner kind of a cluster-scoped dependent; warns once the owner has been seen', () => {
    const owner = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1' });
    const node = obj('Node', 'nodename', 'nodeuid1', { ownerReferences: [ownerRef(owner)] });
    const unseen = validateOwnerReferences(node, [absent(ownerRef(owner), true)]);
    expect(unseen.unresolvableForever).toBe(true);
    expect(unseen.invalid[0].code).toBe('NamespacedOwnerOfClusterScopedDependent');
    expect(unseen.events).toEqual([]);
    const seen = validateOwnerReferences(node, [{ ...absent(ownerRef(owner), true), observedElsewhere: refOf(owner) }]);
    expect(seen.events.map((e) => e.message)).toEqual([
      'ownerRef [v1/Pod, namespace: , name: podname1, uid: poduid1] does not exist in namespace ""',
    ]);
    expect(seen.events[0].target).toEqual({ apiVersion: 'v1', kind: 'Node', name: 'nodename', uid: 'nodeuid1' });
  });
});

// ---------------------------------------------------------------------------------------------
// classifyOwners

describe('classifyOwners', () => {
  it('sorts owners into solid, dangling, waiting and unresolved', () => {
    const live = obj('ReplicaSet', 'live', 'u1', { namespace: 'ns' });
    const fg = obj('ReplicaSet', 'fg', 'u2', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: [FOREGROUND_FINALIZER] });
    const bg = obj('ReplicaSet', 'bg', 'u3', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: ['x/hold'] });
    const orphaning = obj('ReplicaSet', 'orph', 'u4', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: [ORPHAN_FINALIZER] });
    const fgNoTs = obj('ReplicaSet', 'fgnots', 'u5', { namespace: 'ns', finalizers: [FOREGROUND_FINALIZER] });
    const gone = rawRef('ReplicaSet', 'gone', 'u6');
    const weird: OwnerLookup = { ref: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u7' }, state: 'unresolvable-kind' };
    const c = classifyOwners([exists(live), exists(fg), exists(bg), exists(orphaning), exists(fgNoTs), absent(gone), weird]);
    expect(c.solid.map((r) => r.name)).toEqual(['live', 'bg', 'orph', 'fgnots']);
    expect(c.waitingForDependentsDeletion.map((r) => r.name)).toEqual(['fg']);
    expect(c.dangling.map((r) => r.name)).toEqual(['gone']);
    expect(c.unresolved.map((r) => r.name)).toEqual(['w']);
  });
});

// ---------------------------------------------------------------------------------------------
// decideDependent (attemptToDeleteItem)

describe('decideDependent', () => {
  const rs = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns' });
  const rs2 = obj('ReplicaSet', 'rs2', 'rs2-uid', { namespace: 'ns' });
  const waitingOwner = obj('ReplicaSet', 'dying', 'dying-uid', {
    namespace: 'ns',
    deletionTimestamp: DELETED_AT,
    finalizers: [FOREGROUND_FINALIZER],
  });
  const ghost = rawRef('ReplicaSet', 'ghost', 'ghost-uid');

  it('does nothing without owner references', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns' });
    expect(decideDependent(pod, [], [])).toEqual([]);
  });

  it('does nothing for an object already being deleted (without the foregroundDeletion finalizer)', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', deletionTimestamp: DELETED_AT, ownerReferences: [ghost] });
    expect(decideDependent(pod, [absent(ghost)], [])).toEqual([]);
    const orphaning = { ...pod, finalizers: [ORPHAN_FINALIZER] };
    expect(decideDependent(orphaning, [absent(ghost)], [])).toEqual([]);
  });

  it('leaves an object deleting its own dependents to decideForegroundOwner', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: [FOREGROUND_FINALIZER], ownerReferences: [ghost] });
    const plan = planDependent(pod, [absent(ghost)], []);
    expect(plan.actions).toEqual([]);
    expect(plan.summary).toMatch(/foreground/);
  });

  it('keeps an object with only solid owners', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(rs), ownerRef(rs2)] });
    const plan = planDependent(pod, [exists(rs), exists(rs2)], []);
    expect(plan.actions).toEqual([]);
    expect(plan.retry).toBe(false);
    expect(plan.classification?.solid).toHaveLength(2);
  });

  it('with a solid owner, drops references to dangling and waiting owners (dangling first)', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(waitingOwner, true), ownerRef(rs), ghost] });
    const actions = decideDependent(pod, [exists(waitingOwner, ownerRef(waitingOwner, true)), exists(rs), absent(ghost)], []);
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ type: 'removeOwnerReferences', target: refOf(pod), ownerUids: ['ghost-uid', 'dying-uid'] });
    expect((actions[0] as { reason: string }).reason).toMatch(/no longer exist.*foreground/);
  });

  it('deletes in background when every owner is dangling, with UID target and resourceVersion precondition', () => {
    const pod = obj('Pod', 'p', 'p-uid', { namespace: 'ns', ownerReferences: [ghost] });
    pod.resourceVersion = '42';
    expect(decideDependent(pod, [absent(ghost)], [])).toEqual([
      expect.objectContaining({
        type: 'deleteObject',
        target: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', uid: 'p-uid' },
        resourceVersion: '42',
        propagation: 'Background',
      }),
    ]);
  });

  it('honours an orphan or foregroundDeletion finalizer already on the dangling object', () => {
    const withOrphan = obj('Pod', 'p', 'p', { namespace: 'ns', finalizers: [ORPHAN_FINALIZER], ownerReferences: [ghost] });
    expect(decideDependent(withOrphan, [absent(ghost)], [])[0]).toMatchObject({ type: 'deleteObject', propagation: 'Orphan' });
    const withFg = obj('Pod', 'p', 'p', { namespace: 'ns', finalizers: [FOREGROUND_FINALIZER], ownerReferences: [ghost] });
    expect(decideDependent(withFg, [absent(ghost)], [])[0]).toMatchObject({ type: 'deleteObject', propagation: 'Foreground' });
  });

  it('treats a reused name (UID mismatch, reported absent) as dangling', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [rawRef('ReplicaSet', 'rs', 'old-uid')] });
    expect(decideDependent(pod, [absent(rawRef('ReplicaSet', 'rs', 'old-uid'))], [])[0]).toMatchObject({ propagation: 'Background' });
  });

  it('with only a waiting owner and no dependents of its own: default (background) deletion', () => {
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(waitingOwner, true)] });
    const a = decideDependent(pod, [exists(waitingOwner, ownerRef(waitingOwner, true))], []);
    expect(a).toEqual([expect.objectContaining({ type: 'deleteObject', propagation: 'Background' })]);
  });

  it('with a waiting owner and dependents of its own: foreground deletion', () => {
    const mid = obj('ReplicaSet', 'mid', 'mid', { namespace: 'ns', ownerReferences: [ownerRef(waitingOwner, true)] });
    const child = obj('Pod', 'c', 'c', { namespace: 'ns', ownerReferences: [ownerRef(mid, true)] });
    const a = decideDependent(mid, [exists(waitingOwner, ownerRef(waitingOwner, true))], [child]);
    expect(types(a)).toEqual(['deleteObject']);
    expect(a[0]).toMatchObject({ propagation: 'Foreground' });
  });

  it('breaks a possible cycle: own dependent also deleting dependents -> unblock own references, then foreground delete', () => {
    const mid = obj('ReplicaSet', 'mid', 'mid', { namespace: 'ns', ownerReferences: [ownerRef(waitingOwner, true), ownerRef(rs2)] });
    const a = decideDependent(mid, [exists(waitingOwner, ownerRef(waitingOwner, true)), absent(ownerRef(rs2))], [waitingOwner]);
    expect(types(a)).toEqual(['unblockOwnerReferences', 'deleteObject']);
    expect(a[0]).toMatchObject({ ownerUids: ['dying-uid'] });
    expect(a[1]).toMatchObject({ propagation: 'Foreground' });
  });

  it('retries (no write) when an owner kind is unknown to discovery or a lookup is missing', () => {
    const widget: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'w' };
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ghost, widget] });
    const plan = planDependent(pod, [absent(ghost), { ref: widget, state: 'unresolvable-kind' }], []);
    expect(plan).toMatchObject({ actions: [], retry: true });
    const missing = planDependent(pod, [absent(ghost)], []);
    expect(missing).toMatchObject({ actions: [], retry: true });
  });

  it('cross-namespace owner: warns and, with no solid owner, collects the dependent', () => {
    const owner = obj('Pod', 'podname2', 'poduid2', { namespace: 'ns2' });
    const pod = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1', ownerReferences: [ownerRef(owner)] });
    const a = decideDependent(pod, [{ ...absent(ownerRef(owner)), observedElsewhere: refOf(owner) }], []);
    expect(types(a)).toEqual(['warningEvent', 'deleteObject']);
    expect(a[1]).toMatchObject({ target: { uid: 'poduid1' }, propagation: 'Background' });
  });

  it('cross-namespace owner reported as existing is still dangling in the dependent namespace', () => {
    const owner = obj('Pod', 'podname2', 'poduid2', { namespace: 'ns2' });
    const pod = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1', ownerReferences: [ownerRef(owner)] });
    const plan = planDependent(pod, [exists(owner)], []);
    expect(plan.classification?.dangling.map((r) => r.uid)).toEqual(['poduid2']);
  });

  it('cluster-scoped dependent naming a namespaced owner: no write, no retry, warning when the owner was seen', () => {
    const owner = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1' });
    const node = obj('Node', 'nodename', 'nodeuid1', { ownerReferences: [ownerRef(owner), ghost] });
    const plan = planDependent(node, [{ ...absent(ownerRef(owner), true), observedElsewhere: refOf(owner) }, absent(ghost, true)], []);
    expect(types(plan.actions)).toEqual(['warningEvent']);
    expect(plan.retry).toBe(false);
  });

  it('cluster-scoped owner of a namespaced dependent is a valid owner', () => {
    const node = obj('Node', 'n1', 'node-uid');
    const pod = obj('Pod', 'p', 'p', { namespace: 'ns1', ownerReferences: [ownerRef(node)] });
    expect(decideDependent(pod, [exists(node, undefined, false)], [])).toEqual([]);
    expect(decideDependent(pod, [absent(ownerRef(node), false)], [])[0]).toMatchObject({ type: 'deleteObject' });
  });
});

// ---------------------------------------------------------------------------------------------
// decideForegroundOwner (processDeletingDependentsItem)

describe('decideForegroundOwner', () => {
  const owner = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: [FOREGROUND_FINALIZER] });

  it('does nothing unless the owner is being deleted with the foregroundDeletion finalizer', () => {
    const live = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns', finalizers: [FOREGROUND_FINALIZER] });
    const dep = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(live, true)] });
    expect(decideForegroundOwner(live, [dep])).toEqual([]);
  });

  it('removes the finalizer when no dependent blocks (non-blocking references do not count)', () => {
    const loose = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(owner, false)] });
    const other = obj('Pod', 'q', 'q', { namespace: 'ns', ownerReferences: [rawRef('ReplicaSet', 'x', 'x', true)] });
    expect(decideForegroundOwner(owner, [loose, other])).toEqual([
      expect.objectContaining({ type: 'removeFinalizer', target: refOf(owner), finalizer: FOREGROUND_FINALIZER }),
    ]);
    expect(decideForegroundOwner(owner, [])).toHaveLength(1);
  });

  it('waits for blocking dependents that are already being deleted, without re-deleting them', () => {
    const dying = obj('Pod', 'p', 'p', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: ['x/hold'], ownerReferences: [ownerRef(owner, true)] });
    const fgDying = obj('ReplicaSet', 'r', 'r', {
      namespace: 'ns',
      deletionTimestamp: DELETED_AT,
      finalizers: [FOREGROUND_FINALIZER],
      ownerReferences: [ownerRef(owner, true)],
    });
    expect(decideForegroundOwner(owner, [dying, fgDying])).toEqual([]);
  });

  it('asks for a blocking dependent to be evaluated when its lookups are not given', () => {
    const dep = obj('Pod', 'p', 'p-uid', { namespace: 'ns', ownerReferences: [ownerRef(owner, true)] });
    expect(decideForegroundOwner(owner, [dep])).toEqual([expect.objectContaining({ type: 'evaluateDependent', target: refOf(dep) })]);
  });

  it('decides a blocking dependent in place when its lookups are given', () => {
    const dep = obj('Pod', 'p', 'p-uid', { namespace: 'ns', ownerReferences: [ownerRef(owner, true)] });
    const solid = obj('ReplicaSet', 'keeper', 'keeper', { namespace: 'ns' });
    const shared = obj('Pod', 's', 's-uid', { namespace: 'ns', ownerReferences: [ownerRef(owner, true), ownerRef(solid)] });
    const a = decideForegroundOwner(owner, [dep, shared], {
      'p-uid': { lookups: [exists(owner, ownerRef(owner, true))], ownDependents: [] },
      's-uid': { lookups: [exists(owner, ownerRef(owner, true)), exists(solid)], ownDependents: [] },
    });
    expect(a).toEqual([
      expect.objectContaining({ type: 'deleteObject', target: refOf(dep), propagation: 'Background' }),
      expect.objectContaining({ type: 'removeOwnerReferences', target: refOf(shared), ownerUids: ['rs-uid'] }),
    ]);
  });

  it('blocksOwner reads blockOwnerDeletion on the reference to that owner only', () => {
    const dep = obj('Pod', 'p', 'p', { namespace: 'ns', ownerReferences: [ownerRef(owner, false), rawRef('ReplicaSet', 'x', 'x', true)] });
    expect(blocksOwner(dep, 'rs-uid')).toBe(false);
    expect(blocksOwner(dep, 'x')).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// decideOrphanOwner (attemptToOrphan)

describe('decideOrphanOwner', () => {
  const owner = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: [ORPHAN_FINALIZER] });

  it('does nothing unless the owner is being deleted with the orphan finalizer', () => {
    const live = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns', finalizers: [ORPHAN_FINALIZER] });
    expect(decideOrphanOwner(live, [])).toEqual([]);
  });

  it('orphans every dependent naming it (blocking or not, being deleted or not), then removes the finalizer', () => {
    const a = obj('Pod', 'a', 'a', { namespace: 'ns', ownerReferences: [ownerRef(owner, true, true)] });
    const b = obj('Pod', 'b', 'b', { namespace: 'ns', deletionTimestamp: DELETED_AT, finalizers: ['x/hold'], ownerReferences: [ownerRef(owner)] });
    const stranger = obj('Pod', 'c', 'c', { namespace: 'ns', ownerReferences: [rawRef('ReplicaSet', 'o', 'o')] });
    const actions = decideOrphanOwner(owner, [a, b, stranger, a]);
    expect(types(actions)).toEqual(['orphanDependents', 'removeFinalizer']);
    expect(actions[0]).toMatchObject({ owner: refOf(owner), dependents: [refOf(a), refOf(b)] });
    expect(actions[1]).toMatchObject({ finalizer: ORPHAN_FINALIZER });
  });

  it('with no dependents, only removes the finalizer', () => {
    expect(types(decideOrphanOwner(owner, []))).toEqual(['removeFinalizer']);
  });
});

// ---------------------------------------------------------------------------------------------
// simulations

describe('simulation', () => {
  function chain(block: boolean): ObjectMetaView[] {
    const d = obj('Deployment', 'd', 'd-uid', { namespace: 'ns' });
    const r = obj('ReplicaSet', 'r', 'r-uid', { namespace: 'ns', ownerReferences: [ownerRef(d, block, true)] });
    const p1 = obj('Pod', 'p1', 'p1-uid', { namespace: 'ns', ownerReferences: [ownerRef(r, block, true)] });
    const p2 = obj('Pod', 'p2', 'p2-uid', { namespace: 'ns', ownerReferences: [ownerRef(r, block, true)] });
    return [d, r, p1, p2];
  }

  it('a healthy world needs no writes', () => {
    const w = new World(chain(true));
    expect(w.settle()).toBe(0);
    expect(w.writes).toEqual([]);
  });

  it('background: the owner goes at once, then its dependents, level by level', () => {
    const w = new World(chain(true));
    w.delete('d-uid', 'Background');
    expect(w.deletedOrder).toEqual(['d']);
    w.settle();
    expect(w.objects.size).toBe(0);
    expect(w.deletedOrder).toEqual(['d', 'r', 'p1', 'p2']);
    expect(w.writes.every((a) => a.type === 'deleteObject' && a.propagation === 'Background')).toBe(true);
  });

  it('foreground: dependents first, owner last', () => {
    const w = new World(chain(true));
    w.delete('d-uid', 'Foreground');
    expect(w.has('d-uid')).toBe(true);
    const rounds = w.settle();
    expect(w.objects.size).toBe(0);
    expect(w.deletedOrder.indexOf('p1')).toBeLessThan(w.deletedOrder.indexOf('r'));
    expect(w.deletedOrder.indexOf('p2')).toBeLessThan(w.deletedOrder.indexOf('r'));
    expect(w.deletedOrder[w.deletedOrder.length - 1]).toBe('d');
    expect(rounds).toBeLessThanOrEqual(3);
    // the middle ReplicaSet was itself deleted in foreground, because it had dependents
    expect(w.writes).toContainEqual(expect.objectContaining({ type: 'deleteObject', target: expect.objectContaining({ name: 'r' }), propagation: 'Foreground' }));
  });

  it('foreground honours blockOwnerDeletion: only blocking dependents hold the owner back', () => {
    const o = obj('ReplicaSet', 'o', 'o-uid', { namespace: 'ns' });
    const blocker = obj('Pod', 'blocker', 'b-uid', { namespace: 'ns', finalizers: ['x/hold'], ownerReferences: [ownerRef(o, true)] });
    const loose = obj('Pod', 'loose', 'l-uid', { namespace: 'ns', finalizers: ['x/hold'], ownerReferences: [ownerRef(o, false)] });
    const w = new World([o, blocker, loose]);
    w.delete('o-uid', 'Foreground');
    w.settle();
    // both dependents were asked to go, both are held by their own finalizer; the owner waits for the blocker only
    expect(w.get('b-uid')?.deletionTimestamp).toBeDefined();
    expect(w.get('l-uid')?.deletionTimestamp).toBeDefined();
    expect(w.has('o-uid')).toBe(true);
    expect(w.get('o-uid')?.finalizers).toEqual([FOREGROUND_FINALIZER]);
    w.removeCustomFinalizer('b-uid', 'x/hold');
    w.settle();
    expect(w.has('o-uid')).toBe(false);
    expect(w.has('l-uid')).toBe(true); // the non-blocking dependent did not hold the owner
    w.removeCustomFinalizer('l-uid', 'x/hold');
    expect(w.objects.size).toBe(0);
    expect(w.deletedOrder).toEqual(['blocker', 'o', 'loose']);
  });

  it('foreground: a dependent with another live owner is released, not deleted', () => {
    const o = obj('ReplicaSet', 'o', 'o-uid', { namespace: 'ns' });
    const keeper = obj('ReplicaSet', 'keeper', 'k-uid', { namespace: 'ns' });
    const shared = obj('Pod', 'shared', 's-uid', { namespace: 'ns', ownerReferences: [ownerRef(o, true), ownerRef(keeper, true)] });
    const w = new World([o, keeper, shared]);
    w.delete('o-uid', 'Foreground');
    w.settle();
    expect(w.has('o-uid')).toBe(false);
    expect(w.get('s-uid')?.ownerReferences.map((r) => r.uid)).toEqual(['k-uid']);
  });

  it('orphan: references removed first, then the finalizer, and the dependents survive', () => {
    const w = new World(chain(true));
    w.delete('r-uid', 'Orphan');
    expect(w.get('r-uid')?.finalizers).toEqual([ORPHAN_FINALIZER]);
    w.settle();
    expect(w.has('r-uid')).toBe(false);
    expect(w.get('p1-uid')?.ownerReferences).toEqual([]);
    expect(w.get('p2-uid')?.ownerReferences).toEqual([]);
    expect(w.has('d-uid')).toBe(true);
    expect(types(w.writes)).toEqual(['orphanDependents', 'removeFinalizer']);
  });

  it('dangling reference to a UID that never existed: the dependent is collected', () => {
    const pod = obj('Pod', 'p', 'p-uid', { namespace: 'ns', ownerReferences: [rawRef('ReplicaSet', 'never', 'never-uid', true)] });
    const w = new World([pod]);
    w.settle();
    expect(w.objects.size).toBe(0);
    expect(w.events).toEqual([]);
  });

  it('dangling plus live owner: only the reference goes', () => {
    const rs = obj('ReplicaSet', 'rs', 'rs-uid', { namespace: 'ns' });
    const pod = obj('Pod', 'p', 'p-uid', { namespace: 'ns', ownerReferences: [rawRef('ReplicaSet', 'never', 'never-uid'), ownerRef(rs)] });
    const w = new World([rs, pod]);
    w.settle();
    expect(w.get('p-uid')?.ownerReferences.map((r) => r.uid)).toEqual(['rs-uid']);
  });

  it('cross-namespace owner: warning on the dependent, the owner elsewhere untouched, the dependent collected as dangling', () => {
    const owner = obj('Pod', 'podname2', 'poduid2', { namespace: 'ns2' });
    const bad = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1', ownerReferences: [ownerRef(owner)] });
    const w = new World([owner, bad]);
    w.settle();
    expect(w.events.map((e) => [e.target.uid, e.reason])).toEqual([['poduid1', 'OwnerRefInvalidNamespace']]);
    expect(w.has('poduid2')).toBe(true);
    expect(w.get('poduid2')?.deletionTimestamp).toBeUndefined();
    expect(w.has('poduid1')).toBe(false);
  });

  it('cluster-scoped owner of a namespaced dependent: kept while the owner lives, collected after', () => {
    const pv = obj('PersistentVolume', 'pv', 'pv-uid');
    const cm = obj('ConfigMap', 'cm', 'cm-uid', { namespace: 'ns', ownerReferences: [ownerRef(pv)] });
    const w = new World([pv, cm]);
    expect(w.settle()).toBe(0);
    w.delete('pv-uid', 'Background');
    w.settle();
    expect(w.objects.size).toBe(0);
    expect(w.events).toEqual([]);
  });

  it('namespaced owner of a cluster-scoped dependent: invalid, warned about, never deleted (not even after the owner goes)', () => {
    const owner = obj('Pod', 'podname1', 'poduid1', { namespace: 'ns1' });
    const node = obj('Node', 'nodename', 'nodeuid1', { ownerReferences: [ownerRef(owner)] });
    const w = new World([owner, node]);
    expect(w.settle()).toBe(0);
    expect(w.events.map((e) => e.message)).toEqual([
      'ownerRef [v1/Pod, namespace: , name: podname1, uid: poduid1] does not exist in namespace ""',
    ]);
    w.delete('poduid1', 'Background');
    expect(w.settle()).toBe(0);
    expect(w.has('nodeuid1')).toBe(true);
    expect(w.get('nodeuid1')?.ownerReferences).toHaveLength(1);
  });

  it('unknown owner kind: nothing happens', () => {
    const cm = obj('ConfigMap', 'cm', 'cm-uid', { namespace: 'ns', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'w' }] });
    const w = new World([cm]);
    expect(w.settle()).toBe(0);
    expect(w.has('cm-uid')).toBe(true);
  });

  describe('ownership cycles', () => {
    function cycle(n: number, block: boolean): ObjectMetaView[] {
      const names = Array.from({ length: n }, (_, i) => `c${i}`);
      // c[i] is owned by c[i-1] (c0 owned by the last one)
      return names.map((name, i) => {
        const ownerName = names[(i + n - 1) % n];
        return obj('ConfigMap', name, `${name}-uid`, { namespace: 'ns', ownerReferences: [rawRef('ConfigMap', ownerName, `${ownerName}-uid`, block)] });
      });
    }

    it('a live cycle is left alone', () => {
      const w = new World(cycle(2, true));
      expect(w.settle()).toBe(0);
      expect(w.objects.size).toBe(2);
    });

    it.each([2, 3, 4])('foreground deletion of one member of a %i-cycle with blockOwnerDeletion terminates and removes all', (n) => {
      const w = new World(cycle(n, true));
      w.delete('c0-uid', 'Foreground');
      const rounds = w.settle(4 * n);
      expect(rounds).toBeLessThanOrEqual(2 * n);
      expect(w.objects.size).toBe(0);
      // the cycle was broken by an unblocking patch, not by giving up on the foreground guarantee
      expect(w.writes.some((a) => a.type === 'unblockOwnerReferences')).toBe(true);
    });

    it('foreground on a 2-cycle, checked step by step', () => {
      const w = new World(cycle(2, true));
      w.delete('c0-uid', 'Foreground');
      // c0 waits for c1 (c1 blocks it); c1's only owner is waiting and c1 has a dependent (c0) that is deleting dependents
      const c0 = w.get('c0-uid') as ObjectMetaView;
      const c1 = w.get('c1-uid') as ObjectMetaView;
      const a = decideDependent(c1, w.lookups(c1), w.dependentsOf(c1.uid));
      expect(types(a)).toEqual(['unblockOwnerReferences', 'deleteObject']);
      for (const x of a) w.apply(x);
      // now nothing blocks c0; c1 is blocked by c0 until c0 is gone
      expect(decideForegroundOwner(w.get('c1-uid') as ObjectMetaView, w.dependentsOf('c1-uid'))).toEqual([]);
      expect(types(decideForegroundOwner(c0, w.dependentsOf('c0-uid')))).toEqual(['removeFinalizer']);
      w.settle();
      expect(w.deletedOrder).toEqual(['c0', 'c1']);
    });

    it('background deletion of a cycle member collects the rest', () => {
      const w = new World(cycle(3, true));
      w.delete('c1-uid', 'Background');
      w.settle();
      expect(w.objects.size).toBe(0);
    });

    it('orphan deletion of a cycle member leaves the rest standing', () => {
      const w = new World(cycle(3, true));
      w.delete('c1-uid', 'Orphan');
      w.settle();
      expect([...w.objects.keys()].sort()).toEqual(['c0-uid', 'c2-uid']);
      expect(w.get('c2-uid')?.ownerReferences).toEqual([]);
    });
  });
});

describe('batchReason: one activity for a reconcile\'s actions', () => {
  const ref = { apiVersion: 'v1', kind: 'Pod', namespace: 'n', name: 'p', uid: 'u' };
  const evaluate = (name: string) => ({ type: 'evaluateDependent' as const, target: { ...ref, name }, reason: `Pod n/${name} blocks the foreground deletion` });
  test('one action keeps its reason; more name the first and count the rest', () => {
    expect(batchReason([evaluate('a')])).toBe('Pod n/a blocks the foreground deletion');
    expect(batchReason([evaluate('a'), evaluate('b')])).toBe('Pod n/a blocks the foreground deletion (and 1 more action)');
    expect(batchReason(['a', 'b', 'c'].map(evaluate))).toBe('Pod n/a blocks the foreground deletion (and 2 more actions)');
  });
});
