/*
 * One DaemonSet sync as upstream's (pkg/controller/daemon: manage and podsShouldBeOnNode,
 * rollingUpdate, updateDaemonSetStatus, constructHistory and cleanupHistory), as pure functions
 * over the node verdicts the watch computed, the daemon pods and the revisions. Upstream walks
 * some of these sets in Go's random map order; here every walk is in node-name order, so a
 * decision is the same on replay and on every replica.
 */
import { REVISION_HASH_LABEL, daemonSetRevisionData, hashRevisionData, nextRevision } from '../common/controller-history';
import { SpewUnsupported, computeTemplateHash } from '../common/spew';
import { parseTime } from '../replicaset/logic';
import { TEMPLATE_GENERATION_LABEL, isPodUpdated, surgeCount, unavailableCount } from './predicates';
import type { DaemonPodView, DaemonRevisionView, DaemonSetStatusView, DaemonSetView, FailedPodBackoff, NodeVerdict } from './types';

export const CONTROLLER = 'daemonset';
/** upstream's cap on creates or deletes in one sync */
export const BURST_REPLICAS = 250;
/** failed daemon pods are deleted with this backoff per node (upstream: 1 s doubling to 15 min) */
export const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

export interface DaemonEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Ready, and for minReadySeconds (podutil.IsPodAvailable). */
export function isAvailable(p: DaemonPodView, minReadySeconds: number, nowMs: number): boolean {
  if (!p.ready) return false;
  if (minReadySeconds === 0) return true;
  const since = parseTime(p.readySince);
  return since !== undefined && since + minReadySeconds * 1000 <= nowMs;
}

/** podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name. */
function oldestFirst(a: DaemonPodView, b: DaemonPodView): number {
  if (a.scheduled !== b.scheduled) return a.scheduled ? -1 : 1;
  const ta = parseTime(a.creationTimestamp) ?? 0;
  const tb = parseTime(b.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

const terminal = (p: DaemonPodView) => p.phase === 'Succeeded' || p.phase === 'Failed';

/**
 * getNodesToDaemonPods: the claimed pods by the node they are for; a pod whose node cannot be told
 * is left out, and so (unless asked for) is a finished pod already being deleted.
 */
export function podsByNode(pods: readonly DaemonPodView[], includeDeletedTerminal = false): Map<string, DaemonPodView[]> {
  const out = new Map<string, DaemonPodView[]>();
  for (const p of pods) {
    if (!includeDeletedTerminal && terminal(p) && p.deleting) continue;
    if (!p.node) continue;
    const list = out.get(p.node) ?? [];
    list.push(p);
    out.set(p.node, list);
  }
  return out;
}

const sortedNodes = (verdicts: ReadonlyMap<string, NodeVerdict>) => [...verdicts.keys()].sort();

export interface ManagePlan {
  nodesNeedingPods: string[];
  podsToDelete: string[];
  events: DaemonEvent[];
  /** the failed-pod backoffs after this sync */
  backoffs: Map<string, FailedPodBackoff>;
  /** a failed pod waits out its backoff: look again then */
  requeueAfterMs?: number;
}

/** the backoff key upstream uses: a new generation of the DaemonSet starts every node afresh */
export const backoffKey = (ds: Pick<DaemonSetView, 'uid' | 'status'>, node: string) => `${ds.uid}/${ds.status.observedGeneration ?? 0}/${node}`;

/** manage and podsShouldBeOnNode: which nodes need a daemon pod, and which pods must go. */
export function manage(ds: DaemonSetView, verdicts: ReadonlyMap<string, NodeVerdict>, pods: readonly DaemonPodView[], hash: string, nowMs: number,
  backoffs: ReadonlyMap<string, FailedPodBackoff>): ManagePlan {
  const plan: ManagePlan = { nodesNeedingPods: [], podsToDelete: [], events: [], backoffs: new Map(backoffs) };
  const byNode = podsByNode(pods);
  const surge = surgeCount(ds.updateStrategy, 1);
  const allowsSurge = !surge.error && surge.value > 0;
  const requeue = (ms: number) => {
    plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
  };

  for (const node of sortedNodes(verdicts)) {
    const { shouldRun, shouldContinueRunning } = verdicts.get(node)!;
    const daemonPods = byNode.get(node);
    if (shouldRun && !daemonPods) {
      plan.nodesNeedingPods.push(node);
      continue;
    }
    if (shouldContinueRunning) {
      const running: DaemonPodView[] = [];
      for (const p of daemonPods ?? []) {
        if (p.deleting) continue;
        if (p.phase === 'Failed') {
          // the kubelet may keep rejecting the pod: kill it with a backoff, not in a hot loop
          const key = backoffKey(ds, node);
          const b = plan.backoffs.get(key);
          const expired = !b || nowMs - b.lastUpdateMs > 2 * FAILED_POD_BACKOFF_MAX_MS;
          if (b && !expired && nowMs - b.lastUpdateMs < b.delayMs) {
            requeue(b.delayMs);
            continue;
          }
          plan.backoffs.set(key, { delayMs: expired ? FAILED_POD_BACKOFF_INITIAL_MS : Math.min(2 * b!.delayMs, FAILED_POD_BACKOFF_MAX_MS), lastUpdateMs: nowMs });
          plan.events.push({ type: 'Warning', reason: 'FailedDaemonPod', message: `Found failed daemon pod ${ds.namespace}/${p.name} on node ${node}, will try to kill it` });
          plan.podsToDelete.push(p.name);
        } else if (p.phase === 'Succeeded') {
          plan.events.push({ type: 'Normal', reason: 'SucceededDaemonPod', message: `Found succeeded daemon pod ${ds.namespace}/${p.name} on node ${node}, will try to delete it` });
          plan.podsToDelete.push(p.name);
        } else {
          running.push(p);
        }
      }
      running.sort(oldestFirst);
      if (!allowsSurge) {
        // one pod per node: all but the oldest go
        for (const p of running.slice(1)) plan.podsToDelete.push(p.name);
        continue;
      }
      if (running.length <= 1) {
        if (running.length === 0 && shouldRun) plan.nodesNeedingPods.push(node);
        continue;
      }
      // surging: an old and a new pod may share the node while the new one is not yet available
      let oldestNew: DaemonPodView | undefined;
      let oldestOld: DaemonPodView | undefined;
      for (const p of running) {
        if (p.hash === hash) {
          if (!oldestNew) {
            oldestNew = p;
            continue;
          }
        } else if (!oldestOld) {
          oldestOld = p;
          continue;
        }
        plan.podsToDelete.push(p.name);
      }
      if (oldestNew && oldestOld && (!oldestOld.ready || isAvailable(oldestNew, ds.minReadySeconds, nowMs))) plan.podsToDelete.push(oldestOld.name);
      continue;
    }
    // the node no longer takes the daemon: every pod on it goes
    for (const p of daemonPods ?? []) if (!p.deleting) plan.podsToDelete.push(p.name);
  }

  // pods for nodes that are gone, never scheduled: no pod GC would ever remove them
  for (const [node, list] of [...byNode].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (verdicts.has(node)) continue;
    for (const p of list) if (!p.scheduled) plan.podsToDelete.push(p.name);
  }
  plan.nodesNeedingPods = plan.nodesNeedingPods.slice(0, BURST_REPLICAS);
  plan.podsToDelete = plan.podsToDelete.slice(0, BURST_REPLICAS);
  return plan;
}

/** IsPodUpdated for a pod view: the current revision's hash, or the deprecated template generation. */
function podUpdated(ds: DaemonSetView, p: DaemonPodView, hash: string): boolean {
  return isPodUpdated({ ...(p.hash ? { [REVISION_HASH_LABEL]: p.hash } : {}), ...(p.templateGeneration ? { [TEMPLATE_GENERATION_LABEL]: p.templateGeneration } : {}) }, hash, ds.templateGeneration);
}

/** findUpdatedPodsOnNode: at most one new and one old live pod, else not ok (the manage step prunes first). */
function updatedPodsOnNode(ds: DaemonSetView, pods: readonly DaemonPodView[], hash: string): { newPod?: DaemonPodView; oldPod?: DaemonPodView; ok: boolean } {
  let newPod: DaemonPodView | undefined;
  let oldPod: DaemonPodView | undefined;
  for (const p of pods) {
    if (p.deleting) continue;
    if (podUpdated(ds, p, hash)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

export interface RollingPlan {
  podsToDelete: string[];
  nodesToCreate: string[];
  error?: string;
}

/** updatedDesiredNodeCounts: maxSurge and maxUnavailable of the nodes that want the daemon; both 0 means 1 unavailable. */
function desiredCounts(ds: DaemonSetView, verdicts: ReadonlyMap<string, NodeVerdict>): { maxSurge: number; maxUnavailable: number; desired: number; error?: string } {
  let desired = 0;
  for (const v of verdicts.values()) if (v.shouldRun) desired++;
  const u = unavailableCount(ds.updateStrategy, desired);
  if (u.error) return { maxSurge: -1, maxUnavailable: -1, desired, error: `invalid value for MaxUnavailable: ${u.error}` };
  const s = surgeCount(ds.updateStrategy, desired);
  if (s.error) return { maxSurge: -1, maxUnavailable: -1, desired, error: `invalid value for MaxSurge: ${s.error}` };
  const maxUnavailable = desired > 0 && u.value === 0 && s.value === 0 ? 1 : u.value;
  return { maxSurge: s.value, maxUnavailable, desired };
}

/** rollingUpdate: old pods to delete (no surge) or nodes to surge onto, within the strategy's limits. */
export function rollingUpdate(ds: DaemonSetView, verdicts: ReadonlyMap<string, NodeVerdict>, pods: readonly DaemonPodView[], hash: string, nowMs: number): RollingPlan {
  const byNode = podsByNode(pods);
  const counts = desiredCounts(ds, verdicts);
  if (counts.error) return { podsToDelete: [], nodesToCreate: [], error: counts.error };
  for (const [node, v] of verdicts) if (v.shouldRun && !byNode.has(node)) byNode.set(node, []);
  const nodes = [...byNode.keys()].sort();
  const available = (p: DaemonPodView) => isAvailable(p, ds.minReadySeconds, nowMs);

  if (counts.maxSurge === 0) {
    let numUnavailable = 0;
    const replacements: string[] = [];
    const candidates: string[] = [];
    for (const node of nodes) {
      const { newPod, oldPod, ok } = updatedPodsOnNode(ds, byNode.get(node)!, hash);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) {
        numUnavailable++;
      } else if (newPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (!available(oldPod!)) {
        replacements.push(oldPod!.name);
        numUnavailable++;
      } else if (numUnavailable < counts.maxUnavailable) {
        candidates.push(oldPod!.name);
      }
    }
    const room = Math.min(Math.max(0, counts.maxUnavailable - numUnavailable), candidates.length);
    return { podsToDelete: [...replacements, ...candidates.slice(0, room)], nodesToCreate: [] };
  }

  const oldPodsToDelete: string[] = [];
  const shouldNotRun: string[] = [];
  const candidateNodes: string[] = [];
  const allowedNodes: string[] = [];
  let numSurge = 0;
  let numAvailable = 0;
  for (const node of nodes) {
    const { newPod, oldPod, ok } = updatedPodsOnNode(ds, byNode.get(node)!, hash);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (oldPod ? available(oldPod) : newPod ? available(newPod) : false) numAvailable++;
    if (!oldPod) continue;
    const shouldRun = verdicts.get(node)?.shouldRun ?? false;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!shouldRun) oldPodsToDelete.push(oldPod.name);
        else allowedNodes.push(node);
      } else if (!shouldRun) {
        shouldNotRun.push(oldPod.name);
      } else if (numSurge < counts.maxSurge) {
        candidateNodes.push(node);
      }
      continue;
    }
    if (!available(newPod)) {
      numSurge++;
      continue;
    }
    oldPodsToDelete.push(oldPod.name);
  }
  // with surge the owner expects full availability: a pod on a node the daemon leaves goes only
  // once one elsewhere is available
  const deletable = Math.min(numAvailable - counts.desired, shouldNotRun.length);
  if (deletable > 0) oldPodsToDelete.push(...shouldNotRun.slice(0, deletable));
  const room = Math.min(Math.max(0, counts.maxSurge - numSurge), candidateNodes.length);
  return { podsToDelete: oldPodsToDelete, nodesToCreate: [...allowedNodes, ...candidateNodes.slice(0, room)] };
}

export interface DaemonStatusCounts {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberMisscheduled: number;
  numberReady: number;
  updatedNumberScheduled: number;
  numberAvailable: number;
  numberUnavailable: number;
}

/** updateDaemonSetStatus's counts: each node that should run it, by its oldest pod. */
export function statusCounts(ds: DaemonSetView, verdicts: ReadonlyMap<string, NodeVerdict>, pods: readonly DaemonPodView[], hash: string, nowMs: number): DaemonStatusCounts {
  const byNode = podsByNode(pods);
  const c: DaemonStatusCounts = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, updatedNumberScheduled: 0, numberAvailable: 0, numberUnavailable: 0 };
  for (const node of sortedNodes(verdicts)) {
    const list = byNode.get(node) ?? [];
    if (!verdicts.get(node)!.shouldRun) {
      if (list.length) c.numberMisscheduled++;
      continue;
    }
    c.desiredNumberScheduled++;
    if (!list.length) continue;
    c.currentNumberScheduled++;
    const pod = [...list].sort(oldestFirst)[0];
    if (pod.ready) {
      c.numberReady++;
      if (isAvailable(pod, ds.minReadySeconds, nowMs)) c.numberAvailable++;
    }
    if (podUpdated(ds, pod, hash)) c.updatedNumberScheduled++;
  }
  c.numberUnavailable = c.desiredNumberScheduled - c.numberAvailable;
  return c;
}

/** storeDaemonSetStatus's test: nothing to write when every count is as stored and the generation observed. */
export function statusUpToDate(s: DaemonSetStatusView, c: DaemonStatusCounts, generation: number): boolean {
  return s.desiredNumberScheduled === c.desiredNumberScheduled && s.currentNumberScheduled === c.currentNumberScheduled &&
    s.numberMisscheduled === c.numberMisscheduled && s.numberReady === c.numberReady && (s.updatedNumberScheduled ?? 0) === c.updatedNumberScheduled &&
    (s.numberAvailable ?? 0) === c.numberAvailable && (s.numberUnavailable ?? 0) === c.numberUnavailable && (s.observedGeneration ?? 0) >= generation;
}

/** The hash a DaemonSet's new revision is named by: upstream's ComputeHash of its template. */
export function revisionHash(ds: Pick<DaemonSetView, 'template' | 'status'>): string {
  try {
    return computeTemplateHash(ds.template, ds.status.collisionCount);
  } catch (e) {
    if (!(e instanceof SpewUnsupported)) throw e;
    // a template whose dump cannot be reproduced: a hash of the revision data instead
    return hashRevisionData(daemonSetRevisionData(ds.template), ds.status.collisionCount);
  }
}

export interface HistoryPlan {
  /** the data the current revision holds */
  data: string;
  /** revisions without the hash label: labelled with their own name, as upstream does */
  unlabelled: string[];
  /** the current revision, when one exists */
  current?: DaemonRevisionView;
  /** a revision to create for the current template */
  create?: { name: string; hash: string; revision: number };
  /** the current revision's number must rise to this */
  bumpTo?: number;
  /** revisions with the current template beside the one kept: deleted, after the pods are relabelled */
  duplicates: string[];
  old: DaemonRevisionView[];
}

/** constructHistory: the current revision (found, deduplicated, renumbered or to create) and the old ones. */
export function planHistory(ds: DaemonSetView, revisions: readonly DaemonRevisionView[]): HistoryPlan {
  const data = daemonSetRevisionData(ds.template);
  const unlabelled = revisions.filter((r) => !r.hash).map((r) => r.name);
  const labelled = revisions.map((r) => (r.hash ? r : { ...r, hash: r.name }));
  const current = labelled.filter((r) => r.data === data);
  const old = labelled.filter((r) => r.data !== data);
  const revision = nextRevision(old);
  const plan: HistoryPlan = { data, unlabelled, duplicates: [], old };
  if (current.length === 0) {
    const hash = revisionHash(ds);
    plan.create = { name: `${ds.name}-${hash}`, hash, revision };
    return plan;
  }
  let keep = current[0];
  for (const r of current) if (r.revision >= keep.revision) keep = r;
  plan.current = keep;
  plan.duplicates = current.filter((r) => r.name !== keep.name).map((r) => r.name);
  if (keep.revision < revision) plan.bumpTo = revision;
  return plan;
}

/** cleanupHistory: the oldest old revisions beyond revisionHistoryLimit that no pod still runs. */
export function revisionsToDelete(old: readonly DaemonRevisionView[], limit: number, pods: readonly DaemonPodView[]): string[] {
  let toKill = old.length - limit;
  if (toKill <= 0) return [];
  const live = new Set(pods.map((p) => p.hash).filter((h): h is string => !!h));
  const out: string[] = [];
  for (const r of [...old].sort((a, b) => a.revision - b.revision)) {
    if (toKill <= 0) break;
    if (r.hash && live.has(r.hash)) continue;
    out.push(r.name);
    toKill--;
  }
  return out;
}
