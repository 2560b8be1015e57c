import { MAX_DIFFERENCES, diffContent } from './compare';
import { withoutShadowPrefix } from '../runtime/workflow-ids';
import {
  SHADOW_OUTCOMES,
  type OutcomeCounts,
  type ShadowBatch,
  type ShadowEntry,
  type ShadowFinding,
  type ShadowLedgerSettings,
  type ShadowOutcome,
  type ShadowReport,
  type ShadowReportRow,
} from './types';

/*
 * The ledger's decisions, pure: which of ours and theirs are the same write, and how they compare.
 *
 * Two entries can pair when they are of opposite sides and have one key (kind, resource,
 * subresource, namespace, target). A pair with equal content is matched as soon as its second
 * entry arrives: `agree` if they are at most the window apart, else `late`. An entry with no equal
 * counterpart waits: the other side may yet make that write (a controller often writes a status
 * several times on its way to the one the other side writes once). Once it is older than the
 * horizon it settles: paired with the nearest unmatched entry of the other side for the same key,
 * if one is within the window of it, it is `differ`, with the fields that differ. A write of theirs left alone is `accepted` if the
 * workflow of ours that decides that object reconciled after the write (it saw the result and had
 * nothing to change: in shadow mode the cluster's manager is usually first, and ours then finds
 * its work done), else `only-theirs`; one of ours left alone is `only-ours`.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** minute buckets are merged into hour buckets once this old */
const MINUTE_BUCKETS_KEPT_MS = 2 * HOUR_MS;
/** counts older than this are dropped */
const BUCKETS_KEPT_MS = 8 * 24 * HOUR_MS;
/** the findings kept, newest: enough to show every shape of difference a week of a cluster has */
export const MAX_FINDINGS = 500;
/** batch IDs remembered to drop a batch delivered twice */
const BATCH_IDS_KEPT = 256;
/** the garbage collector's name among ours' controllers: it orphans, taking owner references off */
const COLLECTOR = 'garbagecollector';

/** the controller of a write of theirs no write of ours has shown the shape of */
export const UNKNOWN_CONTROLLER = 'unknown';

export interface OutcomeBucket {
  start: number;
  widthMs: number;
  counts: OutcomeCounts;
}

export interface LedgerState {
  settings: ShadowLedgerSettings;
  since: number;
  /** entries not yet matched or settled, in arrival order */
  pending: ShadowEntry[];
  buckets: OutcomeBucket[];
  /** newest last */
  findings: ShadowFinding[];
  /** which controller of ours makes writes of each shape (see shapeOf): how theirs are attributed */
  learned: Record<string, string>;
  batchIds: string[];
  /** the latest start of a reconcile of ours, by workflow ID without the shadow prefix; pruned past the horizon */
  reconciled: Record<string, number>;
  /**
   * Writes of theirs no controller of ours could be named for (one this shadow does not run, or
   * one that has proposed nothing yet): not compared, only counted.
   */
  unattributed: number;
  /** Warning Events of ours that only followed a dry run refused as stale (ShadowEntry.afterRefusal); absent in a state from before it was counted */
  afterRefusal?: number;
  /**
   * Proposals of ours that repeat their controller's previous one to the same object (see
   * isRepeat), and that previous one by controller and write key: its content and time. Absent in
   * a state from before they were kept.
   */
  repeats?: number;
  lastProposals?: Record<string, { at: number; content: string }>;
  /** shapes more than one controller of ours writes (a pod's owner reference taken off: the replicaset controller's release, the collector's orphaning), with each of them; absent in an older state */
  sharedShapes?: Record<string, string[]>;
}

/** What settling or matching decided, for the metrics. */
export interface Settled {
  controller: string;
  outcome: ShadowOutcome;
}

export function emptyLedger(settings: ShadowLedgerSettings, now: number): LedgerState {
  return { settings, since: now, pending: [], buckets: [], findings: [], learned: {}, batchIds: [], reconciled: {}, unattributed: 0, afterRefusal: 0, repeats: 0, lastProposals: {} };
}

const keyOf = (e: ShadowEntry) => [e.kind, e.resource, e.subresource ?? '', e.namespace ?? '', e.target].join('\u0000');

/**
 * A write's shape, which names the controller that makes it: an Event by its reporting component;
 * another write by its kind, resource, subresource and its object's controlling owner's kind
 * (a ReplicaSet's pods are the replicaset controller's, a CronJob's Jobs the cronjob controller's).
 */
function shapeOf(e: ShadowEntry): string {
  if (e.kind === 'event') return `event/${e.component ?? ''}`;
  const kind = e.kind === 'deletecollection' ? 'delete' : e.kind;
  return [kind, e.resource, e.subresource ?? '', e.ownerKind ?? ''].join('/');
}

/**
 * The controller of a write: ours name theirs; theirs, the controller ours' writes of that shape
 * came from, else the controller whose workflows decide objects of the owner's kind (a write to an
 * owned object is its owner's controller's decision: a Deployment's ReplicaSets are scaled by the
 * deployment controller), else of the object's own kind.
 */
function controllerOf(state: LedgerState, e: ShadowEntry): string {
  return e.controller ?? e.decidedBy ?? state.learned[shapeOf(e)]
    ?? (e.ownerKind ? state.learned[`decides/${e.ownerKind}`] : undefined)
    ?? (e.objectKind ? state.learned[`decides/${e.objectKind}`] : undefined)
    ?? (e.kind === 'event' && e.component ? e.component : UNKNOWN_CONTROLLER);
}

/**
 * The controller a write of theirs left alone is settled for: of a shape several controllers of
 * ours write, the one whose workflow of the object (or its owner, or the owner whose reference
 * went) reconciled after it, as that is the one that looked and agreed; else the one that wrote
 * the shape last.
 */
function settledFor(state: LedgerState, t: ShadowEntry): string {
  if (t.decidedBy) return t.decidedBy;
  const candidates = [...(state.sharedShapes?.[shapeOf(t)] ?? [])];
  // an owner reference taken off is an owner's release or the collector's orphaning, whether or
  // not ours' collector has proposed one yet
  if (t.formerOwnerUids?.length && state.learned[`workflows/${COLLECTOR}`] !== undefined) candidates.push(COLLECTOR);
  return candidates.find((c) => reconciledSince(state, t, c)) ?? controllerOf(state, t);
}

/** Learns from a write of ours which controller makes writes of its shape, and whose workflows decide objects of its kind. */
function learn(state: LedgerState, e: ShadowEntry): void {
  if (!e.controller) return;
  const shape = shapeOf(e);
  const before = state.learned[shape];
  if (before !== undefined && before !== e.controller) {
    const all = ((state.sharedShapes ??= {})[shape] ??= [before]);
    if (!all.includes(e.controller)) all.push(e.controller);
  }
  state.learned[shape] = e.controller;
  // a workflow named after the object it writes decides objects of that kind
  const subject = e.workflowId?.split('/').pop();
  if (e.objectKind && e.kind !== 'event' && subject && subject === e.name) state.learned[`decides/${e.objectKind}`] = e.controller;
}

/**
 * Did the workflow of ours that decides `t`'s object reconcile after `t` was seen? It is the
 * controller's workflow of the object itself, of its controlling owner, or for an Event of the
 * object the Event is about, named by name or (the garbage collector's) by UID; for an orphaning,
 * also the workflow of the owner whose reference went.
 */
function reconciledSince(state: LedgerState, t: ShadowEntry, controller = controllerOf(state, t)): boolean {
  // a controller's workflow IDs may name it otherwise (the endpoint controller's are endpoints/...)
  const named = state.learned[`workflows/${controller}`] ?? controller;
  const ns = t.namespace ?? '';
  const names = [t.kind === 'event' ? t.about : t.name, t.ownerName, t.uid, t.ownerUid, ...(t.formerOwnerUids ?? [])].filter((n): n is string => !!n);
  return names.some((n) => (state.reconciled[`${named}/${ns}/${n}`] ?? -Infinity) >= t.at);
}

const sameContent = (o: ShadowEntry, t: ShadowEntry) => diffOf(o, t).length === 0;

function diffOf(o: ShadowEntry, t: ShadowEntry) {
  return diffContent(o.content, t.content, { ...(t.metadataOnly || o.metadataOnly ? { only: ['metadata'] } : {}), ...(o.fromRequest ? { oursFromRequest: true } : {}) });
}

/**
 * Could the two be one controller's answers? Two controllers write the same object at the same
 * moment (the job controller releases a pod's finalizer as the collector orphans it): set side by
 * side, their different fields would be a difference of neither. A write of theirs not yet
 * attributable may be anyone's.
 */
function sameDecider(state: LedgerState, a: ShadowEntry, b: ShadowEntry): boolean {
  const [o, t] = a.side === 'ours' ? [a, b] : [b, a];
  const theirs = controllerOf(state, t);
  return theirs === UNKNOWN_CONTROLLER || o.controller === undefined || o.controller === theirs;
}

/** Is `t` (theirs) one of the deletes of the collection `o` (ours) deleted? */
function pairable(o: ShadowEntry, t: ShadowEntry): boolean {
  return o.kind === 'deletecollection' && t.kind === 'delete' && o.resource === t.resource && (o.namespace ?? '') === (t.namespace ?? '');
}

function count(state: LedgerState, at: number, controller: string, outcome: ShadowOutcome, n = 1): void {
  const start = at - (at % MINUTE_MS);
  let b = state.buckets.find((x) => x.start <= at && at < x.start + x.widthMs);
  if (!b) {
    b = { start, widthMs: MINUTE_MS, counts: {} };
    state.buckets.push(b);
    state.buckets.sort((x, y) => x.start - y.start);
  }
  const c = (b.counts[controller] ??= {});
  c[outcome] = (c[outcome] ?? 0) + n;
}

function record(state: LedgerState, out: Settled[], controller: string, outcome: ShadowOutcome, o: ShadowEntry | undefined, t: ShadowEntry | undefined, differences?: ReturnType<typeof diffOf>): void {
  const first = o && t ? (o.at <= t.at ? o : t) : (o ?? t)!;
  count(state, first.at, controller, outcome);
  out.push({ controller, outcome });
  if (outcome === 'agree' || outcome === 'accepted') return;
  const f: ShadowFinding = {
    outcome,
    controller,
    at: first.at,
    kind: first.kind,
    resource: first.resource,
    ...(first.subresource ? { subresource: first.subresource } : {}),
    ...(first.namespace ? { namespace: first.namespace } : {}),
    target: first.target,
    ...((t?.name ?? o?.name) ? { name: t?.name ?? o?.name } : {}),
    ...(o ? { ours: { at: o.at, ...(o.reason ? { reason: o.reason } : {}), ...(o.workflowId ? { workflowId: o.workflowId } : {}), ...(o.name ? { name: o.name } : {}) } } : {}),
    ...(t ? { theirs: { at: t.at, ...(t.name ? { name: t.name } : {}) } } : {}),
    ...(differences?.length ? { differences: differences.slice(0, MAX_DIFFERENCES) } : {}),
  };
  state.findings.push(f);
  if (state.findings.length > MAX_FINDINGS) state.findings.splice(0, state.findings.length - MAX_FINDINGS);
}

function matched(state: LedgerState, out: Settled[], o: ShadowEntry, t: ShadowEntry): void {
  const late = Math.abs(o.at - t.at) > state.settings.windowMs;
  record(state, out, o.controller ?? controllerOf(state, t), late ? 'late' : 'agree', o, t);
}

/** A pending entry; a collection's delete is `met` once a delete in it was seen (then it only absorbs the rest). */
type Pending = ShadowEntry & { met?: true };

/**
 * The pending entries by key, for one ingest or settle: a lookup is one key's few entries, not
 * every pending one (a busy cluster keeps thousands pending through a horizon). Removals are
 * applied to the state's list once, at the end.
 */
class PendingByKey {
  private readonly byKey = new Map<string, Pending[]>();
  private readonly removed = new Set<Pending>();
  /** deletes of a collection of ours: few, and met by a delete under any key */
  private readonly collections: Pending[] = [];

  constructor(private readonly state: LedgerState) {
    for (const p of state.pending as Pending[]) this.index(p);
  }

  private index(p: Pending): void {
    this.listOf(keyOf(p)).push(p);
    if (p.kind === 'deletecollection') this.collections.push(p);
  }

  private listOf(key: string): Pending[] {
    let l = this.byKey.get(key);
    if (!l) this.byKey.set(key, (l = []));
    return l;
  }

  /** the entries of `key` still pending */
  of(key: string): Pending[] {
    return (this.byKey.get(key) ?? []).filter((p) => !this.removed.has(p));
  }

  /** the pending delete of a collection of ours that `t`, a delete seen, belongs to */
  collectionOf(t: ShadowEntry): Pending | undefined {
    return this.collections.find((c) => !this.removed.has(c) && pairable(c, t));
  }

  /** every entry still pending (for an ours' delete of a collection, rare: the deletes already seen in it) */
  all(): Pending[] {
    return (this.state.pending as Pending[]).filter((p) => !this.removed.has(p));
  }

  has(p: Pending): boolean {
    return !this.removed.has(p);
  }

  add(p: Pending): void {
    this.state.pending.push(p);
    this.index(p);
  }

  remove(p: Pending): void {
    this.removed.add(p);
  }

  done(): void {
    if (this.removed.size) this.state.pending = this.state.pending.filter((p) => !this.removed.has(p));
  }
}

/**
 * Is this proposal of ours the same write its controller proposed to the same object last, within
 * the horizon? A shadow's write never lands, so a controller that re-reads finds its work undone
 * and decides it again until the cluster's manager has done it: the first is the decision, the
 * rest are the shadow repeating itself, which a live run would never send. Only writes to a named
 * object and deletes count: two creates or two Events of the same content are two decisions (a
 * ReplicaSet's pods, "Created pod" with the name masked).
 */
function isRepeat(state: LedgerState, e: ShadowEntry): boolean {
  if (e.kind !== 'write' && e.kind !== 'delete') return false;
  const key = `${e.controller ?? ''}\u0000${keyOf(e)}`;
  const content = JSON.stringify(e.content ?? null);
  const last = (state.lastProposals ??= {})[key];
  state.lastProposals[key] = { at: e.at, content };
  return !!last && last.content === content && e.at - last.at <= state.settings.horizonMs;
}

/**
 * Takes in one batch: learns ours' shapes, then matches each entry with an equal-content entry of
 * the other side already pending, or leaves it pending. Returns what was decided.
 */
export function ingest(state: LedgerState, batchId: string, entries: readonly ShadowEntry[], reconciles: ShadowBatch['reconciles'] = []): Settled[] {
  const out: Settled[] = [];
  if (state.batchIds.includes(batchId)) return out;
  for (const r of reconciles) {
    const w = withoutShadowPrefix(r.workflowId);
    state.reconciled[w] = Math.max(state.reconciled[w] ?? -Infinity, r.startedAt);
    // which controller's workflows these are, and the kind they decide: how a write of theirs is
    // attributed to a controller of ours that has agreed silently so far, proposing nothing
    state.learned[`workflows/${r.controller}`] = w.split('/')[0];
    if (r.kind) state.learned[`decides/${r.kind}`] ??= r.controller;
  }
  state.batchIds.push(batchId);
  if (state.batchIds.length > BATCH_IDS_KEPT) state.batchIds.splice(0, state.batchIds.length - BATCH_IDS_KEPT);
  const pending = new PendingByKey(state);
  for (const e of [...entries].sort((a, b) => a.at - b.at) as Pending[]) {
    if (e.side === 'ours' && e.afterRefusal) {
      state.afterRefusal = (state.afterRefusal ?? 0) + 1;
      continue;
    }
    if (e.side === 'ours' && isRepeat(state, e)) {
      state.repeats = (state.repeats ?? 0) + 1;
      continue;
    }
    if (e.side === 'ours') learn(state, e);
    // a delete of a collection is one write of ours and any number of deletes seen
    if (e.side === 'theirs' && e.kind === 'delete') {
      const c = pending.collectionOf(e);
      if (c) {
        if (!c.met) {
          c.met = true;
          matched(state, out, c, e);
        }
        continue;
      }
    }
    if (e.side === 'ours' && e.kind === 'deletecollection') {
      const seen = pending.all().filter((p) => p.side === 'theirs' && pairable(e, p));
      for (const d of seen) pending.remove(d);
      if (seen.length) {
        e.met = true;
        matched(state, out, e, seen[0]);
      }
      pending.add(e);
      continue;
    }
    const p = pending.of(keyOf(e)).find((x) => x.side !== e.side && (e.side === 'ours' ? sameContent(e, x) : sameContent(x, e)));
    if (!p) {
      pending.add(e);
      continue;
    }
    pending.remove(p);
    if (e.side === 'ours') matched(state, out, e, p);
    else matched(state, out, p, e);
  }
  pending.done();
  return out;
}

/**
 * Settles every pending entry older than the horizon at `now`, oldest first: with the nearest
 * unmatched entry of the other side for the same key within the window, `differ`; else
 * `only-ours`, or for a write of theirs `accepted` or `only-theirs` (a change the watch cannot
 * attribute is dropped, and a write by a controller this shadow does not run only counted).
 */
export function settle(state: LedgerState, now: number): Settled[] {
  const out: Settled[] = [];
  const pending = new PendingByKey(state);
  const due = (state.pending as Pending[]).filter((e) => now - e.at >= state.settings.horizonMs).sort((a, b) => a.at - b.at);
  for (const e of due) {
    if (!pending.has(e)) continue; // settled already, as the other side of a differ
    pending.remove(e);
    if (e.met) continue;
    // a write of the other side to the same place at about the same time (within the window) is
    // the other's answer to the same change; further apart, the two answered different ones
    const others = pending.of(keyOf(e)).filter((p) => p.side !== e.side && !p.unattributed && !p.met && Math.abs(p.at - e.at) <= state.settings.windowMs
      && sameDecider(state, e, p));
    const other = others.sort((a, b) => Math.abs(a.at - e.at) - Math.abs(b.at - e.at))[0];
    if (other) {
      pending.remove(other);
      const [o, t] = e.side === 'ours' ? [e, other] : [other, e];
      record(state, out, o.controller ?? controllerOf(state, t), 'differ', o, t, diffOf(o, t));
    } else if (e.side === 'ours') {
      record(state, out, e.controller ?? UNKNOWN_CONTROLLER, 'only-ours', e, undefined);
    } else if (!e.unattributed) {
      const controller = settledFor(state, e);
      if (state.learned[`workflows/${controller}`] === undefined && !Object.values(state.learned).includes(controller)) state.unattributed++;
      else record(state, out, controller, reconciledSince(state, e, controller) ? 'accepted' : 'only-theirs', undefined, e);
    }
  }
  pending.done();
  // a reconcile older than the horizon can no longer accept anything pending
  for (const [w, at] of Object.entries(state.reconciled)) if (now - at > 2 * state.settings.horizonMs) delete state.reconciled[w];
  for (const [k, p] of Object.entries(state.lastProposals ?? {})) if (now - p.at > 2 * state.settings.horizonMs) delete state.lastProposals![k];
  compactBuckets(state, now);
  return out;
}

/** The time at which the oldest pending entry settles, if any is pending. */
export function nextSettlement(state: LedgerState): number | undefined {
  let min: number | undefined;
  for (const e of state.pending) if (min === undefined || e.at < min) min = e.at;
  return min === undefined ? undefined : min + state.settings.horizonMs;
}

function addCounts(into: OutcomeCounts, from: OutcomeCounts): void {
  for (const [controller, c] of Object.entries(from)) {
    const to = (into[controller] ??= {});
    for (const [o, n] of Object.entries(c) as Array<[ShadowOutcome, number]>) to[o] = (to[o] ?? 0) + n;
  }
}

/** Minute buckets older than two hours become hour buckets; buckets older than eight days go. */
export function compactBuckets(state: LedgerState, now: number): void {
  const kept: OutcomeBucket[] = [];
  for (const b of state.buckets) {
    if (b.start + b.widthMs < now - BUCKETS_KEPT_MS) continue;
    if (b.widthMs < HOUR_MS && b.start + b.widthMs < now - MINUTE_BUCKETS_KEPT_MS) {
      const start = b.start - (b.start % HOUR_MS);
      let h = kept.find((x) => x.start === start && x.widthMs === HOUR_MS);
      if (!h) {
        h = { start, widthMs: HOUR_MS, counts: {} };
        kept.push(h);
      }
      addCounts(h.counts, b.counts);
      continue;
    }
    kept.push(b);
  }
  state.buckets = kept.sort((x, y) => x.start - y.start);
}

const emptyCounts = (): Record<ShadowOutcome, number> => Object.fromEntries(SHADOW_OUTCOMES.map((o) => [o, 0])) as Record<ShadowOutcome, number>;

/** The shape findings are grouped by in the report. */
function findingShape(f: ShadowFinding): string {
  return [f.outcome, f.controller, f.kind, f.resource, f.subresource ?? '', (f.differences ?? []).map((d) => d.path).join(',')].join('|');
}

/** Counts and findings from `sinceMs` (every bucket that ends after it) to `now`. */
export function buildReport(state: LedgerState, sinceMs: number | undefined, now: number): ShadowReport {
  const from = Math.max(state.since, sinceMs ?? 0);
  const total: OutcomeCounts = {};
  let first = now;
  for (const b of state.buckets) {
    if (b.start + b.widthMs <= from) continue;
    first = Math.min(first, b.start);
    addCounts(total, b.counts);
  }
  const rows: ShadowReportRow[] = Object.keys(total).sort().map((controller) => {
    const counts = { ...emptyCounts(), ...total[controller] };
    const compared = SHADOW_OUTCOMES.reduce((n, o) => n + counts[o], 0);
    return { controller, counts, compared, ...(compared ? { agreement: (counts.agree + counts.accepted) / compared } : {}) };
  });
  const shapes = new Map<string, { count: number; example: ShadowFinding }>();
  const inPeriod = state.findings.filter((f) => f.at >= from);
  for (const f of [...inPeriod].reverse()) {
    const k = findingShape(f);
    const s = shapes.get(k);
    if (s) s.count++;
    else shapes.set(k, { count: 1, example: f });
  }
  return {
    from: new Date(Math.min(first, from)).toISOString(),
    to: new Date(now).toISOString(),
    rows,
    pending: { ours: state.pending.filter((e) => e.side === 'ours').length, theirs: state.pending.filter((e) => e.side === 'theirs').length },
    unattributed: state.unattributed,
    afterRefusal: state.afterRefusal ?? 0,
    repeats: state.repeats ?? 0,
    findings: [...shapes.values()],
    findingsTruncated: state.findings.length >= MAX_FINDINGS && (state.findings[0]?.at ?? 0) > from,
    settings: state.settings,
  };
}
