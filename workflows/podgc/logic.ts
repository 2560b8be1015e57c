/**
 * The pod garbage collector's decisions, as upstream's gc pass makes them over its pod and node
 * caches: which terminated pods exceed the threshold, which terminating pods sit on out-of-service
 * nodes, which pods are bound to nodes that are gone, which terminating pods were never scheduled;
 * and the quarantine a missing node serves before its pods are touched.
 */

import {
  DISRUPTION_TARGET,
  DisruptionCondition,
  EVICTED_REASON,
  PodGcNodeView,
  PodGcPodView,
  PodGcSelection,
  PodGcTarget,
} from './types';

/** Upstream counts every phase but Pending, Running and Unknown as terminated (an unset phase too). */
export function isPodTerminated(phase: string): boolean {
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

/** Phases the collector leaves as they are; anything else is patched to Failed before the delete. */
export function isTerminalPhase(phase: string): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

export function isEvicted(p: Pick<PodGcPodView, 'phase' | 'reason'>): boolean {
  return p.phase === 'Failed' && p.reason === EVICTED_REASON;
}

const timeOf = (rfc3339: string) => {
  const t = Date.parse(rfc3339);
  return Number.isFinite(t) ? t : 0;
};

/**
 * Upstream's byEvictionAndCreationTimestamp: evicted pods first (they were not the work a controller
 * left to look at), then oldest first, then by name (not namespace) when created in the same second.
 */
export function compareForGc(a: PodGcPodView, b: PodGcPodView): number {
  const ea = isEvicted(a);
  const eb = isEvicted(b);
  if (ea !== eb) return ea ? -1 : 1;
  const ta = timeOf(a.creationTimestamp);
  const tb = timeOf(b.creationTimestamp);
  if (ta !== tb) return ta - tb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function toTarget(p: PodGcPodView): PodGcTarget {
  return {
    namespace: p.namespace,
    name: p.name,
    uid: p.uid,
    phase: p.phase,
    ...(p.nodeName ? { nodeName: p.nodeName } : {}),
    ...(p.deletionTimestamp ? { terminating: true as const } : {}),
    ...(p.generation ? { generation: p.generation } : {}),
    ...(p.disruptionTarget ? { disruptionTarget: p.disruptionTarget } : {}),
  };
}

const byKey = (a: PodGcPodView, b: PodGcPodView) => {
  const ka = `${a.namespace}/${a.name}`;
  const kb = `${b.namespace}/${b.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

export interface SelectionOptions {
  /** --terminated-pod-gc-threshold; zero or less keeps every terminated pod */
  terminatedPodThreshold: number;
  /** nodes whose quarantine is over: their pods are orphans if the node list still lacks them */
  dueNodes: string[];
  /** the most targets to return in all */
  maxTargets: number;
}

/**
 * One gc pass's selection over the full pod and node lists. A pod picked by several rules is
 * returned once, under the first (upstream would try it twice; the second try finds it gone).
 * When more pods qualify than `maxTargets`, pods not yet being deleted are kept first, in the
 * rules' order, and `truncated` asks for another pass straight away; pods already being deleted
 * fill what room is left (deleting them again with grace 0 matters, but is no progress).
 */
export function selectPodsForGc(pods: PodGcPodView[], nodes: PodGcNodeView[], opts: SelectionOptions): PodGcSelection {
  const nodeByName = new Map(nodes.map((n) => [n.name, n]));

  const terminatedAll = pods.filter((p) => isPodTerminated(p.phase));
  const excess = opts.terminatedPodThreshold > 0 ? terminatedAll.length - opts.terminatedPodThreshold : 0;
  const terminated = excess > 0 ? [...terminatedAll].sort(compareForGc).slice(0, excess) : [];

  const terminatingOutOfService = pods
    .filter((p) => {
      if (!p.deletionTimestamp) return false;
      const n = nodeByName.get(p.nodeName);
      return !!n && !n.ready && n.outOfService;
    })
    .sort(compareForGc);

  const missing = new Set<string>();
  for (const p of pods) if (p.nodeName && !nodeByName.has(p.nodeName)) missing.add(p.nodeName);
  const orphanNodes = new Set(opts.dueNodes.filter((n) => missing.has(n)));
  const orphaned = pods.filter((p) => orphanNodes.has(p.nodeName)).sort(byKey);

  const terminatingUnscheduled = pods.filter((p) => p.deletionTimestamp && !p.nodeName).sort(byKey);

  const groups = [terminated, terminatingOutOfService, orphaned, terminatingUnscheduled];
  const seen = new Set<string>();
  const owner = groups.map((g) => g.filter((p) => !seen.has(p.uid) && seen.add(p.uid)));
  const keep = new Set<string>();
  let room = Math.max(0, opts.maxTargets);
  let truncated = false;
  for (const pass of [false, true]) {
    for (const g of owner) {
      for (const p of g) {
        if (!!p.deletionTimestamp !== pass) continue;
        if (room > 0) {
          keep.add(p.uid);
          room--;
        } else if (!pass) {
          truncated = true;
        }
      }
    }
  }
  const pick = (g: PodGcPodView[]) => g.filter((p) => keep.has(p.uid)).map(toTarget);

  return {
    terminated: pick(owner[0]),
    terminatingOutOfService: pick(owner[1]),
    orphaned: pick(owner[2]),
    terminatingUnscheduled: pick(owner[3]),
    missingNodes: [...missing].sort(),
    terminatedCount: terminatedAll.length,
    truncated,
  };
}

// ---------------------------------------------------------------------------------------------
// quarantine of missing nodes

/** node name -> when its quarantine ends (ms since the epoch) */
export type Quarantine = Record<string, number>;

/** Nodes whose quarantine is over at `nowMs`, sorted. */
export function dueNodes(q: Quarantine, nowMs: number): string[] {
  return Object.keys(q).filter((n) => q[n] <= nowMs).sort();
}

/**
 * The quarantine after a pass, as upstream's delaying queue evolves: the nodes that came due were
 * taken out (checked, whatever the outcome); every node pods are bound to that the node list lacks
 * and that is not already waiting starts a fresh quarantine. A waiting node keeps its first deadline
 * even if it reappeared meanwhile; it is simply found present when it comes due.
 */
export function advanceQuarantine(q: Quarantine, nowMs: number, due: string[], missingNodes: string[], quarantineMs: number): Quarantine {
  const next: Quarantine = {};
  const taken = new Set(due);
  for (const [n, at] of Object.entries(q)) if (!taken.has(n)) next[n] = at;
  for (const n of missingNodes) if (next[n] === undefined) next[n] = nowMs + quarantineMs;
  return next;
}

// ---------------------------------------------------------------------------------------------
// marking a pod Failed before it is force-deleted

export interface PodStatusPatch {
  metadata: { uid: string };
  status: {
    phase: 'Failed';
    observedGeneration?: number;
    conditions?: Array<{
      type: string;
      status: 'True';
      reason: string;
      message: string;
      lastTransitionTime: string;
      observedGeneration?: number;
    }>;
  };
}

/**
 * The strategic-merge patch of pods/status upstream sends before force-deleting a pod that has not
 * reached Succeeded or Failed (undefined for those: they are deleted as they are). The phase becomes
 * Failed, status.observedGeneration follows the pod's generation (tracked unconditionally since 1.35),
 * and an orphan also gets a True DisruptionTarget condition, keeping its transition time when it was
 * already True. The UID in metadata makes the patch fail on a pod recreated under the name.
 */
export function failedStatusPatch(t: PodGcTarget, condition: DisruptionCondition | undefined, nowIso: string): PodStatusPatch | undefined {
  if (isTerminalPhase(t.phase)) return undefined;
  const gen = t.generation ?? 0;
  const status: PodStatusPatch['status'] = { phase: 'Failed', ...(gen ? { observedGeneration: gen } : {}) };
  if (condition) {
    const old = t.disruptionTarget;
    const since = old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : nowIso;
    status.conditions = [{
      type: DISRUPTION_TARGET, status: 'True', reason: condition.reason, message: condition.message, lastTransitionTime: since,
      ...(gen ? { observedGeneration: gen } : {}),
    }];
  }
  return { metadata: { uid: t.uid }, status };
}

/** In batches of `size`, for activities that must stay short and heartbeat. */
export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}
