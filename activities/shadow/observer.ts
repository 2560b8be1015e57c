import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/projections';
import type { ShadowEntry } from '../../workflows/shadow/types';
import { entryOf, type WriteShape } from './content';

/*
 * What the cluster's own kube-controller-manager wrote, as the watch sees it.
 *
 * The API server files every field a write sets under its field manager, named after the client's
 * user agent up to its first slash: `kube-controller-manager` for every controller of KCM. A change
 * is that manager's when its managedFields entry (per subresource) changed with it. Entries carry
 * times in whole seconds, so a second write by the same manager in the same second, setting the same
 * fields, leaves them as they were; such a change of status is the manager's whose status entry is
 * the only newest.
 * A deletion carries no manager: it is seen (a deletionTimestamp set, or the object gone) and can
 * meet a delete of ours, but is not counted alone.
 */

/** The field manager the API server names KCM's writes after. */
export const KCM_FIELD_MANAGER = 'kube-controller-manager';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: string;
  fieldsV1?: unknown;
}

type Obj = KubeObject & Record<string, unknown>;

const managedFieldsOf = (o: KubeObject) => ((o.metadata as { managedFields?: ManagedFieldsEntry[] } | undefined)?.managedFields ?? []);
const entryKey = (e: ManagedFieldsEntry) => `${e.manager ?? ''}\u0000${e.operation ?? ''}\u0000${e.subresource ?? ''}`;

/** Each managedFields entry's time and fields, as a short signature per manager, operation and subresource. */
function signatures(o: KubeObject): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of managedFieldsOf(o)) out.set(entryKey(e), createHash('sha1').update(`${e.time ?? ''}\u0000${JSON.stringify(e.fieldsV1 ?? null)}`).digest('base64'));
  return out;
}

const statusSignature = (o: KubeObject) => createHash('sha1').update(JSON.stringify(o.status ?? null)).digest('base64');

/**
 * The subresources ('' for the object itself) the manager wrote in the change from `before` to
 * `o`. When no entry moved, only a status that changed is attributed, to the manager if its status
 * entry is the only newest: a change with no entry of its own (a scheduler's binding sets
 * spec.nodeName and moves none) must not be taken for a rewrite by whoever wrote last.
 */
export function writtenBy(manager: string, before: Seen | undefined, o: KubeObject): string[] {
  const entries = managedFieldsOf(o);
  const now = signatures(o);
  const changed = entries.filter((e) => now.get(entryKey(e)) !== before?.signatures.get(entryKey(e)));
  if (changed.length) return [...new Set(changed.filter((e) => e.manager === manager && e.operation !== 'Apply').map((e) => e.subresource ?? ''))];
  if (!before || before.status === statusSignature(o)) return [];
  const newest = entries.reduce((t, e) => ((e.time ?? '') > t ? e.time ?? '' : t), '');
  const atNewest = entries.filter((e) => (e.time ?? '') === newest);
  const only = atNewest.length === 1 ? atNewest[0] : undefined;
  return only && only.manager === manager && only.operation !== 'Apply' && only.subresource === 'status' ? ['status'] : [];
}

/** What is kept of an object between its events. */
export interface Seen {
  signatures: Map<string, string>;
  status: string;
  deleting: boolean;
  ownerUids: string[];
  finalizers: string[];
  /** an Event: its count, which a repeat of its recorder patches up */
  count?: number;
}

const ownerUidsOf = (o: KubeObject) => (o.metadata?.ownerReferences ?? []).map((r) => r.uid);
const seenOf = (o: Obj): Seen => ({
  signatures: signatures(o), status: statusSignature(o), deleting: !!o.metadata?.deletionTimestamp, ownerUids: ownerUidsOf(o), finalizers: o.metadata?.finalizers ?? [],
  ...(typeof o.count === 'number' ? { count: o.count } : {}),
});

/** Did any managedFields entry, of whatever manager, change from `before` to `o`? */
function entryMoved(before: Seen, o: KubeObject): boolean {
  const now = signatures(o);
  return now.size !== before.signatures.size || [...now].some(([k, v]) => before.signatures.get(k) !== v);
}

/**
 * The controller of kube-controller-manager that takes each of these finalizers off: a write of the
 * manager's that removed one is that controller's, whatever else writes objects of that shape (the
 * collector's release of a Deployment it deleted in the foreground looks, by shape, like the
 * deployment controller's own writes).
 */
const FINALIZER_CONTROLLERS: Record<string, string> = {
  foregroundDeletion: 'garbagecollector',
  orphan: 'garbagecollector',
  'batch.kubernetes.io/job-tracking': 'job',
  'kubernetes.io/pvc-protection': 'pvc-protection',
  'kubernetes.io/pv-protection': 'pv-protection',
};

/**
 * Did the manager count up an Event it made? A recorder's repeats patch the count (and
 * lastTimestamp and message) of its own Event, often within the second its managedFields time
 * already says, so the entry need not move; nobody else writes another's Event.
 */
function countedUp(manager: string, before: Seen | undefined, o: Obj): boolean {
  return before?.count !== undefined && typeof o.count === 'number' && o.count > before.count && managedFieldsOf(o).some((e) => e.manager === manager);
}

/**
 * Turns one resource's raw list and watch events into the cluster manager's writes. It keeps, per
 * object, its managedFields signatures and whether its deletion was seen: a few hundred bytes.
 */
export class ManagerWrites {
  private readonly seen = new Map<string, Seen>();

  constructor(
    /** the resource's plural as paths name it */
    private readonly resource: string,
    private readonly emit: (e: ShadowEntry) => void,
    private readonly manager = KCM_FIELD_MANAGER,
    private readonly now = () => Date.now(),
  ) {}

  /** A (re)list: what it shows is the starting point; changes made while no watch ran are not attributed. */
  listed(objects: readonly KubeObject[]): void {
    this.seen.clear();
    for (const o of objects) this.seen.set(o.metadata?.uid ?? '', seenOf(o as Obj));
  }

  event(type: string, o: Obj): void {
    const uid = o.metadata?.uid ?? '';
    const before = this.seen.get(uid);
    const at = this.now();
    const shape = { resource: this.resource, ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata?.name };
    const isEvent = this.resource === 'events';
    if (type === 'DELETED') {
      this.seen.delete(uid);
      if (isEvent) return;
      if (!before?.deleting) {
        this.emit(entryOf('theirs', at, { ...shape, kind: 'delete' }, o, { unattributed: true }));
        return;
      }
      // A terminating object goes when the write taking its last finalizers off lands, and the
      // watch sees only the deletion, carrying the state before that write (the API server deletes
      // instead of storing it). When every finalizer it still had is one controller's, that
      // controller's write is what let it go: its state is this one without them.
      const by = [...new Set(before.finalizers.map((f) => FINALIZER_CONTROLLERS[f]))];
      if (before.finalizers.length && by.length === 1 && by[0] !== undefined) {
        const released = { ...o, metadata: { ...o.metadata, finalizers: undefined } } as Obj;
        this.emit(entryOf('theirs', at, { ...shape, kind: 'write' }, released, { decidedBy: by[0] }));
      }
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    this.seen.set(uid, seenOf(o));
    if (!isEvent && o.metadata?.deletionTimestamp && !before?.deleting) {
      // a graceful delete sets the deletionTimestamp and moves no managedFields entry: it is a
      // delete, not a write by whoever wrote last
      this.emit(entryOf('theirs', at, { ...shape, kind: 'delete' }, o, { unattributed: true }));
      if (type === 'MODIFIED') return;
    }
    if (isEvent) {
      if (writtenBy(this.manager, type === 'ADDED' ? undefined : before, o).length || countedUp(this.manager, before, o)) this.emit(entryOf('theirs', at, { ...shape, kind: 'event' }, o));
      return;
    }
    this.writes(at, shape, type, before, o);
  }

  /** The manager's writes in the change from `before` to `o`, one per subresource it wrote. */
  private writes(at: number, shape: Omit<WriteShape, 'kind' | 'subresource'>, type: string, before: Seen | undefined, o: Obj): void {
    const now = new Set(ownerUidsOf(o));
    const former = (before?.ownerUids ?? []).filter((u) => !now.has(u));
    const kept = new Set(o.metadata?.finalizers ?? []);
    const releasedBy = (before?.finalizers ?? []).filter((f) => !kept.has(f)).map((f) => FINALIZER_CONTROLLERS[f]).find((c) => c !== undefined);
    let written = writtenBy(this.manager, type === 'ADDED' ? undefined : before, o);
    // The API server adds foregroundDeletion and orphan itself, on the DELETE, and no managedFields
    // entry owns them; so the collector's patch taking one off moves no entry. A change that moved
    // none and took off a finalizer of the manager's controllers is that controller's.
    if (!written.length && releasedBy && before && !entryMoved(before, o)) written = [''];
    for (const subresource of written) {
      const kind = type === 'ADDED' && subresource === '' ? 'create' : 'write';
      this.emit(entryOf('theirs', at, { ...shape, kind, ...(subresource ? { subresource } : {}) }, o, {
        ...(former.length ? { formerOwnerUids: former } : {}),
        ...(releasedBy && subresource === '' ? { decidedBy: releasedBy } : {}),
      }));
    }
  }
}
