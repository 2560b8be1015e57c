/*
 * What a shadow deployment's ledger takes in and gives out: the writes a --shadow replica proposed
 * (ours) and the writes the cluster's own kube-controller-manager made (theirs, as the watch saw
 * them), and how each pair compared.
 */

export type ShadowSide = 'ours' | 'theirs';

/** How a write is matched: updates and patches are one kind, as the watch cannot tell them apart. */
export type ShadowWriteKind = 'create' | 'write' | 'delete' | 'deletecollection' | 'event';

/**
 * agree: the same write within the window; accepted: the cluster's manager wrote first, and ours,
 * having reconciled the object since, had nothing to change; late: the same write further apart;
 * differ: a write to the same place with other content; only-ours, only-theirs: no counterpart.
 */
export const SHADOW_OUTCOMES = ['agree', 'accepted', 'late', 'differ', 'only-ours', 'only-theirs'] as const;
export type ShadowOutcome = (typeof SHADOW_OUTCOMES)[number];

/** One write, by either side, as the ledger matches it. */
export interface ShadowEntry {
  side: ShadowSide;
  /** when the write was made (ours) or seen (theirs), ms since the epoch */
  at: number;
  /** ours: the controller that proposed it; theirs: absent (the ledger learns it from ours' writes, see controllerOf) */
  controller?: string;
  kind: ShadowWriteKind;
  /** the resource's plural as the API path names it: pods, replicasets, events */
  resource: string;
  subresource?: string;
  namespace?: string;
  /**
   * What the write is matched on within its resource and namespace: the object's name; for a
   * create of an object a controller owns under a generated name, `owner:<uid>` (ours' and
   * upstream's pods get different names); for an Event, `<kind>/<name>:<reason>` of the object
   * it is about; `*` for a delete of a collection.
   */
  target: string;
  /** the object's name, when it has one yet */
  name?: string;
  /** the compared fields, normalized (see normalizeContent); absent for deletes */
  content?: Record<string, unknown>;
  /** theirs seen through a metadata-only watch: only `metadata` of it can be compared */
  metadataOnly?: boolean;
  /** the written object's kind, when its body says */
  objectKind?: string;
  /** the controlling owner's kind, which (with the write's shape) names the controller of theirs */
  ownerKind?: string;
  /** the controlling owner's name: an owned object's writes are decided by its owner's workflow */
  ownerName?: string;
  /** the object's UID and its controlling owner's: some controllers' workflows are named by UID (the garbage collector's) */
  uid?: string;
  ownerUid?: string;
  /** theirs: the controller the write names by the finalizer it took off (the collector's foregroundDeletion, the job controller's tracking finalizer) */
  decidedBy?: string;
  /** theirs: owners whose references the write took off (an orphaning): their workflows decided it */
  formerOwnerUids?: string[];
  /** an Event: the name of the object it is about, whose workflow decided it */
  about?: string;
  /** an Event's reporting component */
  component?: string;
  /** ours: built from the request (a dry run refused as stale), not from the API server's answer */
  fromRequest?: boolean;
  /** ours: the reason the activity gave, and the workflow that decided it */
  reason?: string;
  workflowId?: string;
  /**
   * theirs: a change the watch cannot attribute to the cluster's manager (a deletion: nothing on
   * the object says who deleted it). It can match a write of ours; alone, it is not counted.
   */
  unattributed?: boolean;
  /**
   * ours: a Warning Event sent only because a dry run of the same controller on the same object
   * was refused as stale just before (the cluster's manager had written first): a failure the
   * shadow caused, counted apart and not compared.
   */
  afterRefusal?: boolean;
}

/** A reconcile of ours: which workflow, of which controller, about an object of which kind. */
export interface ShadowReconcile {
  workflowId: string;
  controller: string;
  /** the workflow's KcmKind search attribute: the kind of the object it is named after */
  kind?: string;
  startedAt: number;
}

/** A batch of entries from one replica; its ID lets the ledger drop a batch delivered twice. */
export interface ShadowBatch {
  id: string;
  entries: ShadowEntry[];
  /** reconciles of ours that ended, with when each started (ms since the epoch) */
  reconciles?: ShadowReconcile[];
}

export interface ShadowLedgerSettings {
  /** a matched pair further apart than this is `late`, not `agree` */
  windowMs: number;
  /** an entry still unmatched this long after it was made is settled: `differ`, or `only-*` */
  horizonMs: number;
}

/** One field that differs: absent on a side is `undefined` there (JSON leaves it out). */
export interface FieldDifference {
  path: string;
  ours?: unknown;
  theirs?: unknown;
}

/** A comparison other than `agree`, kept to show in the report. */
export interface ShadowFinding extends Pick<ShadowEntry, 'kind' | 'resource' | 'subresource' | 'namespace' | 'target' | 'name'> {
  outcome: Exclude<ShadowOutcome, 'agree' | 'accepted'>;
  controller: string;
  /** the earlier side's time */
  at: number;
  ours?: { at: number; reason?: string; workflowId?: string; name?: string };
  theirs?: { at: number; name?: string };
  /** differ: the fields that differ (at most MAX_DIFFERENCES of them) */
  differences?: FieldDifference[];
}

/** counts[controller][outcome] */
export type OutcomeCounts = Record<string, Partial<Record<ShadowOutcome, number>>>;

export interface ShadowReportRow {
  controller: string;
  counts: Record<ShadowOutcome, number>;
  compared: number;
  /** (agree + accepted) / compared, or undefined when nothing was compared */
  agreement?: number;
}

export interface ShadowReport {
  /** the period the counts cover (its start rounded down to the ledger's buckets) */
  from: string;
  to: string;
  rows: ShadowReportRow[];
  /** writes not yet settled (still inside the horizon) */
  pending: { ours: number; theirs: number };
  /** since the ledger started: writes of theirs by a controller this shadow does not run (or that has proposed nothing yet), not compared */
  unattributed: number;
  /** since the ledger started: Warning Events of ours that only followed a dry run refused as stale, not compared */
  afterRefusal: number;
  /** since the ledger started: proposals of ours repeating their controller's previous one to the same object (it never landed), not compared */
  repeats: number;
  /** findings in the period, newest first, grouped by shape (outcome, controller, write, differing fields) */
  findings: Array<{ count: number; example: ShadowFinding }>;
  /** true when older findings in the period were dropped (the ledger keeps the newest MAX_FINDINGS) */
  findingsTruncated: boolean;
  settings: ShadowLedgerSettings;
}
