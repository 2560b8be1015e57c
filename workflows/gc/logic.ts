/**
 * Pure decisions of the garbage collector, modelled on kube-controller-manager v1.35's garbage collector
 * (attemptToDeleteItem, processDeletingDependentsItem, attemptToOrphan). Runs inside Temporal workflow code:
 * no I/O, no clocks, no randomness, no Node built-ins.
 *
 * Upstream keeps an in-memory graph of every object and works three queues off it. Here the workflow reads
 * what one decision needs (the object, its owners by UID-checked GET, the objects that name it as owner)
 * and asks these functions what to write. Each function answers for one object; running them again after
 * the writes land, until none asks for anything, reproduces upstream's outcome.
 */
import {
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  type DependentContext,
  type DependentPlan,
  type GcAction,
  type InvalidOwnerReference,
  type ObjectMetaView,
  type ObjectRef,
  type OwnerClassification,
  type OwnerLookup,
  type OwnerReference,
  type WarningEventAction,
} from './types';

// ---------------------------------------------------------------------------------------------
// small helpers

export function refOf(o: ObjectMetaView): ObjectRef {
  const r: ObjectRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid };
  if (o.namespace !== undefined && o.namespace !== '') r.namespace = o.namespace;
  return r;
}

function isNamespacedObject(o: { namespace?: string }): boolean {
  return o.namespace !== undefined && o.namespace !== '';
}

export function hasFinalizer(o: ObjectMetaView, finalizer: string): boolean {
  return o.finalizers.includes(finalizer);
}

export function isBeingDeleted(o: ObjectMetaView): boolean {
  return o.deletionTimestamp !== undefined && o.deletionTimestamp !== '';
}

/** Upstream's "deletingDependents": deleted in foreground, waiting for blocking dependents to go. */
export function isDeletingDependents(o: ObjectMetaView): boolean {
  return isBeingDeleted(o) && hasFinalizer(o, FOREGROUND_FINALIZER);
}

/** Upstream's "waiting for dependents orphaned": deleted with the orphan finalizer still on it. */
export function isOrphaningDependents(o: ObjectMetaView): boolean {
  return isBeingDeleted(o) && hasFinalizer(o, ORPHAN_FINALIZER);
}

/** Whether `dependent` names `ownerUid` among its owners. */
export function referencesOwner(dependent: ObjectMetaView, ownerUid: string): boolean {
  return dependent.ownerReferences.some((r) => r.uid === ownerUid);
}

/** Whether `dependent` blocks the foreground deletion of `ownerUid` (blockOwnerDeletion true on a reference to it). */
export function blocksOwner(dependent: ObjectMetaView, ownerUid: string): boolean {
  return dependent.ownerReferences.some((r) => r.uid === ownerUid && r.blockOwnerDeletion === true);
}

function describe(o: { apiVersion: string; kind: string; namespace?: string; name: string; uid: string }): string {
  const where = isNamespacedObject(o) ? `${o.namespace}/${o.name}` : o.name;
  return `${o.kind} ${where} (uid ${o.uid})`;
}

function describeRefs(refs: OwnerReference[]): string {
  return refs.map((r) => `${r.kind} ${r.name} (uid ${r.uid})`).join(', ');
}

function lookupFor(lookups: OwnerLookup[], uid: string): OwnerLookup | undefined {
  return lookups.find((l) => l.ref.uid === uid);
}

// ---------------------------------------------------------------------------------------------
// 1. validity of owner references across scopes

export interface OwnerReferenceValidation {
  /** OwnerRefInvalidNamespace warnings to record on the dependent */
  events: WarningEventAction[];
  invalid: InvalidOwnerReference[];
  /**
   * true when some reference can never be resolved (a cluster-scoped dependent naming a namespaced kind):
   * upstream gives up on the dependent (no delete, no patch, no retry) until its references change.
   */
  unresolvableForever: boolean;
}

/**
 * Upstream's scope rules for owner references:
 * - an owner of a cluster-scoped kind may be named from anywhere (namespaced or cluster-scoped dependent);
 * - an owner of a namespaced kind resolves in the dependent's namespace only. If the UID actually lives in
 *   another namespace, the reference is dangling there (the dependent is collected like any orphan once no
 *   solid owner remains) and upstream records an OwnerRefInvalidNamespace warning on the dependent;
 * - a cluster-scoped dependent cannot name an owner of a namespaced kind: upstream never deletes or patches
 *   such a dependent (it stops processing it), and warns once the owner has been seen in some namespace.
 */
export function validateOwnerReferences(dependent: ObjectMetaView, lookups: OwnerLookup[]): OwnerReferenceValidation {
  const events: WarningEventAction[] = [];
  const invalid: InvalidOwnerReference[] = [];
  let unresolvableForever = false;
  const depNs = isNamespacedObject(dependent) ? (dependent.namespace as string) : '';

  for (const ref of dependent.ownerReferences) {
    const l = lookupFor(lookups, ref.uid);
    if (!l) continue;
    const seen = l.observedElsewhere;
    const seenInOtherNamespace =
      l.state !== 'exists' && seen !== undefined && seen.uid === ref.uid && isNamespacedObject(seen) && seen.namespace !== depNs;

    if (depNs === '' && l.namespaced === true) {
      invalid.push({ ref, code: 'NamespacedOwnerOfClusterScopedDependent' });
      unresolvableForever = true;
    } else if (depNs !== '' && seenInOtherNamespace) {
      invalid.push({ ref, code: 'OwnerInOtherNamespace' });
    }
    if (seenInOtherNamespace) {
      events.push({
        type: 'warningEvent',
        target: refOf(dependent),
        reason: 'OwnerRefInvalidNamespace',
        message: `ownerRef [${ref.apiVersion}/${ref.kind}, namespace: ${depNs}, name: ${ref.name}, uid: ${ref.uid}] does not exist in namespace "${depNs}"`,
      });
    }
  }
  return { events, invalid, unresolvableForever };
}

// ---------------------------------------------------------------------------------------------
// 2. classification

/**
 * Sorts lookups as upstream's classifyReferences: absent owners are dangling; an existing owner being deleted
 * with the foregroundDeletion finalizer is waiting for its dependents' deletion; any other existing owner is
 * solid. Lookups whose kind discovery does not know go to `unresolved`.
 */
export function classifyOwners(lookups: OwnerLookup[]): OwnerClassification {
  const out: OwnerClassification = { solid: [], dangling: [], waitingForDependentsDeletion: [], unresolved: [] };
  for (const l of lookups) {
    if (l.state === 'unresolvable-kind') out.unresolved.push(l.ref);
    else if (l.state === 'absent') out.dangling.push(l.ref);
    else if (l.owner && isDeletingDependents(l.owner)) out.waitingForDependentsDeletion.push(l.ref);
    else out.solid.push(l.ref);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 3. one dependent (attemptToDeleteItem)

/**
 * The full attemptToDeleteItem decision for one object, from its latest metadata, a lookup per owner reference,
 * and the objects that name it as their owner (`ownDependents`, upstream's graph edges; only consulted when an
 * owner is waiting for dependents' deletion, but pass it always).
 *
 * Warning events from validateOwnerReferences come first; then at most one write (or a cycle-breaking patch
 * followed by a Foreground delete).
 */
export function planDependent(
  dependent: ObjectMetaView,
  lookups: OwnerLookup[],
  ownDependents: ObjectMetaView[],
): DependentPlan {
  const me = describe(dependent);
  if (dependent.ownerReferences.length === 0) {
    return { actions: [], retry: false, summary: `${me} has no owner references` };
  }
  const { events } = validateOwnerReferences(dependent, lookups);
  const actions: GcAction[] = [...events];

  if (isBeingDeleted(dependent) && !hasFinalizer(dependent, FOREGROUND_FINALIZER)) {
    return { actions, retry: false, summary: `${me} is already being deleted; nothing to do until it is gone` };
  }
  if (isDeletingDependents(dependent)) {
    return {
      actions,
      retry: false,
      summary: `${me} is being deleted in foreground; its own dependents decide its fate (decideForegroundOwner)`,
    };
  }

  // resolve every reference in order; the first one that cannot be resolved stops the decision, as upstream
  const ordered: OwnerLookup[] = [];
  const depNamespaced = isNamespacedObject(dependent);
  for (const ref of dependent.ownerReferences) {
    const l = lookupFor(lookups, ref.uid);
    if (!l) {
      return { actions, retry: true, summary: `${me}: no lookup for owner ${describeRefs([ref])}; try again` };
    }
    if (l.state === 'unresolvable-kind') {
      return {
        actions,
        retry: true,
        summary: `${me}: owner kind ${ref.apiVersion}/${ref.kind} is not known to discovery; try again later`,
      };
    }
    if (!depNamespaced && l.namespaced === true) {
      return {
        actions,
        retry: false,
        summary: `${me} is cluster-scoped but names an owner of the namespaced kind ${ref.kind}; such a reference is invalid, the object is left alone`,
      };
    }
    // a namespaced owner that exists but not in the dependent's namespace cannot be found where the reference points
    if (l.state === 'exists' && l.namespaced === true && l.owner && (l.owner.namespace ?? '') !== (dependent.namespace ?? '')) {
      ordered.push({ ...l, ref, state: 'absent', owner: undefined });
    } else {
      ordered.push({ ...l, ref });
    }
  }

  const classification = classifyOwners(ordered);
  const { solid, dangling, waitingForDependentsDeletion: waiting } = classification;

  if (solid.length > 0) {
    if (dangling.length === 0 && waiting.length === 0) {
      return { actions, retry: false, classification, summary: `${me} has an existing owner (${describeRefs(solid)}); keep it` };
    }
    const stale = [...dangling, ...waiting];
    const parts: string[] = [];
    if (dangling.length) parts.push(`owners that no longer exist (${describeRefs(dangling)})`);
    if (waiting.length) parts.push(`owners being deleted in foreground (${describeRefs(waiting)}), which would otherwise wait on it forever`);
    actions.push({
      type: 'removeOwnerReferences',
      target: refOf(dependent),
      ownerUids: stale.map((r) => r.uid),
      reason: `${me} still has an existing owner (${describeRefs(solid)}); drop its references to ${parts.join(' and ')}`,
    });
    return { actions, retry: false, classification, summary: `${me}: keep, drop stale owner references` };
  }

  if (waiting.length > 0 && ownDependents.length > 0) {
    const deletingDep = ownDependents.find((d) => isDeletingDependents(d));
    if (deletingDep) {
      const blocking = dependent.ownerReferences.filter((r) => r.blockOwnerDeletion === true);
      if (blocking.length > 0) {
        actions.push({
          type: 'unblockOwnerReferences',
          target: refOf(dependent),
          ownerUids: blocking.map((r) => r.uid),
          reason: `${me} is about to be deleted in foreground for its owner(s) ${describeRefs(waiting)}, and its own dependent ${describe(deletingDep)} is also deleting its dependents: stop blocking its owners so an ownership cycle cannot wait on itself`,
        });
      }
    }
    actions.push({
      type: 'deleteObject',
      target: refOf(dependent),
      resourceVersion: dependent.resourceVersion,
      propagation: 'Foreground',
      reason: `${me} has no existing owner other than ${describeRefs(waiting)}, being deleted in foreground, and it has dependents of its own: delete it in foreground too`,
    });
    return { actions, retry: false, classification, summary: `${me}: delete in foreground` };
  }

  let propagation: 'Background' | 'Foreground' | 'Orphan' = 'Background';
  let why = 'default background propagation';
  if (hasFinalizer(dependent, ORPHAN_FINALIZER)) {
    propagation = 'Orphan';
    why = 'it already carries the orphan finalizer';
  } else if (hasFinalizer(dependent, FOREGROUND_FINALIZER)) {
    propagation = 'Foreground';
    why = 'it already carries the foregroundDeletion finalizer';
  }
  const ownersWords: string[] = [];
  if (dangling.length) ownersWords.push(`owners that no longer exist (${describeRefs(dangling)})`);
  if (waiting.length) ownersWords.push(`owners being deleted in foreground (${describeRefs(waiting)})`);
  actions.push({
    type: 'deleteObject',
    target: refOf(dependent),
    resourceVersion: dependent.resourceVersion,
    propagation,
    reason: `${me} has no existing owner, only ${ownersWords.join(' and ')}: garbage-collect it (${propagation}: ${why})`,
  });
  return { actions, retry: false, classification, summary: `${me}: delete (${propagation})` };
}

/** The writes of planDependent; see there. */
export function decideDependent(
  dependent: ObjectMetaView,
  lookups: OwnerLookup[],
  ownDependents: ObjectMetaView[],
): GcAction[] {
  return planDependent(dependent, lookups, ownDependents).actions;
}

// ---------------------------------------------------------------------------------------------
// 4. an owner being deleted in foreground (processDeletingDependentsItem)

/**
 * For an owner being deleted with the foregroundDeletion finalizer. `dependents` are the objects that name it
 * as an owner (any that do not are ignored). Blocking dependents are those whose reference to the owner has
 * blockOwnerDeletion true; they block until they are gone, even while being deleted themselves.
 * - none left: remove the finalizer (the apiserver then deletes the owner);
 * - otherwise each blocking dependent not itself deleting its dependents is (re)evaluated as a dependent:
 *   with its lookups in `context` (keyed by dependent UID) its writes are returned here; without them an
 *   `evaluateDependent` asks the workflow to run decideDependent for it. Dependents already being deleted in
 *   background are skipped (upstream's evaluation of them is a no-op).
 * A blocking dependent that is itself deleting its dependents is left alone: that is how an ownership cycle
 * terminates, together with the unblocking patch planDependent issues.
 */
export function decideForegroundOwner(
  owner: ObjectMetaView,
  dependents: ObjectMetaView[],
  context?: Record<string, DependentContext>,
): GcAction[] {
  if (!isDeletingDependents(owner)) return [];
  const me = describe(owner);
  const blocking = dependents.filter((d) => blocksOwner(d, owner.uid));
  if (blocking.length === 0) {
    return [
      {
        type: 'removeFinalizer',
        target: refOf(owner),
        finalizer: FOREGROUND_FINALIZER,
        reason: `${me} is being deleted in foreground and no dependent blocks it any more: remove the foregroundDeletion finalizer`,
      },
    ];
  }
  const actions: GcAction[] = [];
  const seen = new Set<string>();
  for (const dep of blocking) {
    if (seen.has(dep.uid)) continue;
    seen.add(dep.uid);
    if (isDeletingDependents(dep)) continue;
    if (isBeingDeleted(dep)) continue;
    const ctx = context?.[dep.uid];
    if (ctx) {
      actions.push(...decideDependent(dep, ctx.lookups, ctx.ownDependents));
    } else {
      actions.push({
        type: 'evaluateDependent',
        target: refOf(dep),
        reason: `${describe(dep)} blocks the foreground deletion of ${me}: decide whether it goes`,
      });
    }
  }
  return actions;
}

// ---------------------------------------------------------------------------------------------
// 5. an owner being deleted with the orphan finalizer (attemptToOrphan)

/**
 * For an owner being deleted with the orphan finalizer: remove its UID from every dependent that names it,
 * then remove the finalizer. The workflow runs them in order and removes the finalizer only once every
 * dependent is patched (a dependent that is gone counts as patched).
 */
export function decideOrphanOwner(owner: ObjectMetaView, dependents: ObjectMetaView[]): GcAction[] {
  if (!isOrphaningDependents(owner)) return [];
  const me = describe(owner);
  const mine: ObjectRef[] = [];
  const seen = new Set<string>();
  for (const d of dependents) {
    if (seen.has(d.uid) || !referencesOwner(d, owner.uid)) continue;
    seen.add(d.uid);
    mine.push(refOf(d));
  }
  const actions: GcAction[] = [];
  if (mine.length > 0) {
    actions.push({
      type: 'orphanDependents',
      owner: refOf(owner),
      dependents: mine,
      reason: `${me} is being deleted with the orphan finalizer: remove it from the owner references of its ${mine.length} dependent(s)`,
    });
  }
  actions.push({
    type: 'removeFinalizer',
    target: refOf(owner),
    finalizer: ORPHAN_FINALIZER,
    reason:
      mine.length > 0
        ? `${me}: its dependents no longer reference it; remove the orphan finalizer`
        : `${me} has no dependents to orphan; remove the orphan finalizer`,
  });
  return actions;
}

/**
 * The reason a list of actions carries as one activity's input, for `why`: the one action's own,
 * or the first's with a count of the rest (each action in the list keeps its own reason).
 */
export function batchReason(actions: GcAction[]): string {
  if (actions.length === 0) return 'nothing to do';
  const first = actions[0].reason;
  return actions.length === 1 ? first : `${first} (and ${actions.length - 1} more action${actions.length === 2 ? '' : 's'})`;
}
