/**
 * The parts of a Deployment sync that every strategy shares, modelled on upstream's
 * pkg/controller/deployment/sync.go: syncing the new ReplicaSet's revision (creating it when asked),
 * scaling on a resize (proportionally mid-rollout), cleanup of old ReplicaSets past revisionHistoryLimit,
 * and the plain status computation. Each step records its writes in the sync's Round. Runs inside
 * Temporal workflow code: no I/O, no clocks, no randomness, no Node built-ins.
 */
import { formatTime } from '../replicaset/logic';
import type { LabelSelector, OwnerRef, PodTemplate } from '../common/meta';
import { EndOfSync, type RS, type Round } from './round';
import type { DeploymentPlan, DeploymentStatus, DeploymentView, ReplicaSetView } from './types';
import {
  CONDITION_AVAILABLE,
  CONDITION_PROGRESSING,
  DESIRED_REPLICAS_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  REASON_FOUND_NEW_RS,
  REASON_MIN_AVAILABLE,
  REASON_MIN_UNAVAILABLE,
  REASON_NEW_RS_CREATED,
  REASON_PAUSED,
  REASON_RESUMED,
  REASON_TIMED_OUT,
  REVISION_ANNOTATION,
  cloneStatus,
  compareByCreation,
  compareByRevision,
  deploymentStatusEqual,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getCondition,
  getReplicaSetProportion,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isActive,
  isSaturated,
  addInt64,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newCondition,
  newRSNewReplicas,
  newRevisionAnnotations,
  parseNonNegativeInt32,
  podTemplateHash,
  replicasAnnotationsNeedUpdate,
  setCondition,
  setDeploymentRevision,
  sortedBy,
  sum,
  templatesEqualIgnoringHash,
  terminatingReplicasOf,
  withReplicasAnnotations,
} from './util';

/** upstream's sync(): used when paused and on a scaling event. */
export function sync(r: Round): void {
  const { newRS, oldRSs } = getAllAndSyncRevision(r, false);
  scale(r, newRS, oldRSs);
  if (r.d.paused) cleanupDeployment(r, oldRSs);
  syncDeploymentStatus(r, [...oldRSs, newRS], newRS, r.d.paused ? 'paused' : 'scaled');
}

/** checkPausedConditions: Progressing Unknown DeploymentPaused / DeploymentResumed when pausing / resuming. */
export function checkPausedConditions(r: Round): void {
  const d = r.d;
  if (!hasProgressDeadline(d)) return;
  const cond = getCondition(d.status, CONDITION_PROGRESSING);
  if (cond && cond.reason === REASON_TIMED_OUT) return;
  const pausedCond = cond !== undefined && cond.reason === REASON_PAUSED;
  if (d.paused && !pausedCond) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'Unknown', REASON_PAUSED, 'Deployment is paused', r.now));
    r.writeDeployment('Deployment paused');
  } else if (!d.paused && pausedCond) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'Unknown', REASON_RESUMED, 'Deployment is resumed', r.now));
    r.writeDeployment('Deployment resumed');
  }
}

/** getAllReplicaSetsAndSyncRevision: the new RS (revision synced, or created) and all old ones, oldest first. */
export function getAllAndSyncRevision(r: Round, create: boolean): { newRS: RS | undefined; oldRSs: RS[] } {
  const oldRSs = findOldReplicaSets(r.d, r.rsList);
  const newRS = getNewReplicaSet(r, oldRSs, create);
  return { newRS, oldRSs };
}

function getNewReplicaSet(r: Round, oldRSs: RS[], create: boolean): RS | undefined {
  const d = r.d;
  const existing = findNewReplicaSet(d, r.rsList);
  const newRevision = String(addInt64(maxRevision(oldRSs), 1n));
  if (existing) {
    const ann = newRevisionAnnotations(d, existing.annotations ?? {}, newRevision, true);
    const minReadyChange = existing.minReadySeconds !== d.minReadySeconds;
    if (ann.changed || minReadyChange) {
      const what: string[] = [];
      if (ann.changed) {
        const oldRev = existing.annotations?.[REVISION_ANNOTATION];
        const newRev = ann.annotations[REVISION_ANNOTATION];
        what.push(oldRev !== newRev ? `revision ${oldRev ?? '-'}->${newRev ?? '-'}` : 'copy Deployment annotations');
      }
      if (minReadyChange) what.push(`minReadySeconds ${existing.minReadySeconds}->${d.minReadySeconds}`);
      return r.writeRS(existing, { annotations: ann.annotations, minReadySeconds: d.minReadySeconds }, `sync new ReplicaSet ${existing.name}: ${what.join(', ')}`);
    }
    let needsUpdate = setDeploymentRevision(d, ann.annotations[REVISION_ANNOTATION] ?? '');
    if (hasProgressDeadline(d) && !getCondition(d.status, CONDITION_PROGRESSING)) {
      setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'True', REASON_FOUND_NEW_RS, `Found new replica set "${existing.name}"`, r.now));
      needsUpdate = true;
    }
    if (needsUpdate) r.writeDeployment(`record revision ${d.annotations[REVISION_ANNOTATION]} of new ReplicaSet ${existing.name}`);
    return existing;
  }
  if (!create) return undefined;

  const hash = podTemplateHash(d.template, d.status.collisionCount, r.upstreamTemplateHash);
  const name = replicaSetName(d.name, hash);
  if (r.rsList.some((rs) => rs.name === name)) {
    // AlreadyExists with a different template: a hash collision. Bump collisionCount so the next hash differs.
    const before = d.status.collisionCount ?? 0;
    d.status.collisionCount = before + 1;
    r.collisionCount = d.status.collisionCount;
    r.writeDeployment(`hash collision on ReplicaSet ${name}: collisionCount ${before}->${d.status.collisionCount}`);
    throw new EndOfSync('hash collision');
  }
  const meta = d.template.metadata ?? {};
  const labels = { ...(meta.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const template: PodTemplate = { ...d.template, metadata: { ...meta, labels } };
  const selector: LabelSelector = {
    ...d.selector,
    matchLabels: { ...(d.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
  };
  if (d.selector.matchExpressions) selector.matchExpressions = d.selector.matchExpressions.map((e) => ({ ...e, values: e.values ? [...e.values] : e.values }));
  const ownerReferences: OwnerRef[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment', name: d.name, uid: d.uid, controller: true, blockOwnerDeletion: true },
  ];
  const draft: RS = {
    namespace: d.namespace,
    name,
    uid: '',
    resourceVersion: '',
    creationTimestamp: formatTime(r.now),
    generation: 1,
    labels,
    annotations: {},
    ownerReferences,
    replicas: 0,
    minReadySeconds: d.minReadySeconds,
    template,
    selector,
    status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, fullyLabeledReplicas: 0, observedGeneration: 0 },
    version: 0,
    created: { hash, template, selector, ownerReferences },
  };
  const count = newRSNewReplicas(d, [...oldRSs, draft], draft);
  if (count.error) throw new EndOfSync(count.error);
  const created: RS = { ...draft, replicas: count.replicas, annotations: newRevisionAnnotations(d, {}, newRevision, false).annotations };
  r.recordCreate(created, `create new ReplicaSet ${name} (revision ${newRevision}) with ${count.replicas} replica(s)`);

  let needsUpdate = setDeploymentRevision(d, newRevision);
  if (hasProgressDeadline(d)) {
    setCondition(d.status, newCondition(CONDITION_PROGRESSING, 'True', REASON_NEW_RS_CREATED, `Created new replica set "${name}"`, r.now));
    needsUpdate = true;
  }
  if (needsUpdate) r.writeDeployment(`record revision ${newRevision} for new ReplicaSet ${name}`);
  return created;
}

/**
 * What to do when creating the new ReplicaSet met AlreadyExists on an RS the plan did not know about
 * (`existing`, read back from the API): if this Deployment controls it and its template matches, it is the
 * new RS (plan again once it is observed); otherwise it is a hash collision and status.collisionCount goes
 * up by one so the next plan computes another name.
 */
export function resolveCreateConflict(d: DeploymentView, existing: ReplicaSetView): DeploymentPlan {
  const ref = (existing.ownerReferences ?? []).find((o) => o.controller === true);
  if (ref && ref.uid === d.uid && templatesEqualIgnoringHash(d.template, existing.template)) return { actions: [] };
  const before = d.status.collisionCount ?? 0;
  const status = cloneStatus(d.status);
  status.collisionCount = before + 1;
  return {
    actions: [
      {
        type: 'updateDeploymentStatus',
        status,
        reason: `hash collision on ReplicaSet ${existing.name}: collisionCount ${before}->${status.collisionCount}`,
      },
    ],
    collisionCount: status.collisionCount,
  };
}

/** upstream's scale(): resize on a replicas change outside a rollout step. */
function scale(r: Round, newRS: RS | undefined, oldRSs: RS[]): void {
  const d = r.d;
  const single = findActiveOrLatest(newRS, oldRSs);
  if (single) {
    if (single.replicas === d.replicas) return;
    scaleRSIfNeeded(r, single, d.replicas, `Deployment replicas is ${d.replicas}`);
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of oldRSs.filter(isActive)) scaleRSIfNeeded(r, old, 0, 'new ReplicaSet is saturated');
    return;
  }
  if (d.strategy.type === 'RollingUpdate') {
    for (const { rs, size } of proportionalSizes(d, newRS, oldRSs)) {
      scaleRS(r, rs as RS, size, `proportional scaling to ${d.replicas} replicas (+ maxSurge ${maxSurge(d)})`);
    }
  }
}

function bySizeNewer(a: ReplicaSetView, b: ReplicaSetView): number {
  if (a.replicas !== b.replicas) return b.replicas - a.replicas;
  return compareByCreation(b, a);
}

function bySizeOlder(a: ReplicaSetView, b: ReplicaSetView): number {
  if (a.replicas !== b.replicas) return b.replicas - a.replicas;
  return compareByCreation(a, b);
}

/**
 * Proportional scaling of a rolling Deployment resized mid-rollout (upstream's scale(), RollingUpdate part):
 * the difference between replicas + maxSurge (0 when replicas is 0) and the active RSs' total is spread by
 * each RS's fraction, larger RSs first (ties: newer first when growing, older first when shrinking), and
 * what rounding leaves over goes to the first RS (never below 0). Returns every active RS with its new size,
 * in the order to write them (unchanged sizes included: their replica annotations may still need a write).
 */
export function proportionalSizes(
  d: DeploymentView,
  newRS: ReplicaSetView | undefined,
  oldRSs: readonly ReplicaSetView[],
): Array<{ rs: ReplicaSetView; size: number }> {
  const oldNewestFirst = sortedBy(oldRSs, (a, b) => compareByCreation(b, a));
  let all = [...oldNewestFirst, newRS].filter(isActive);
  const allowed = d.replicas > 0 ? d.replicas + maxSurge(d) : 0;
  const toAdd = allowed - sum(all, (rs) => rs.replicas);
  if (toAdd > 0) all = sortedBy(all, bySizeNewer);
  else if (toAdd < 0) all = sortedBy(all, bySizeOlder);
  let added = 0;
  const sizes = all.map((rs) => {
    if (toAdd === 0) return rs.replicas;
    const p = getReplicaSetProportion(rs, d, toAdd, added);
    added += p;
    return rs.replicas + p;
  });
  if (toAdd !== 0 && sizes.length > 0) sizes[0] = Math.max(0, sizes[0] + toAdd - added);
  return all.map((rs, i) => ({ rs, size: sizes[i] }));
}

function replicasAnnotationsFor(d: DeploymentView): [number, number] {
  return [d.replicas, d.replicas + maxSurge(d)];
}

/** scaleReplicaSet: writes when the size or the replica annotations differ. */
export function scaleRS(r: Round, rs: RS, to: number, why: string): { scaled: boolean; rs: RS } {
  const [desired, max] = replicasAnnotationsFor(r.d);
  const sizeChange = rs.replicas !== to;
  if (!sizeChange && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
  const annotations = withReplicasAnnotations(rs.annotations ?? {}, desired, max).annotations;
  const what = sizeChange
    ? `scale ${to > rs.replicas ? 'up' : 'down'} ${rs.name} ${rs.replicas}->${to} (${why})`
    : `set replica annotations of ${rs.name} to desired ${desired}, max ${max} (${why})`;
  const next = r.writeRS(rs, { replicas: to, annotations }, what);
  return { scaled: sizeChange, rs: next };
}

/** scaleReplicaSetAndRecordEvent: nothing at all when the size is already right. */
export function scaleRSIfNeeded(r: Round, rs: RS, to: number, why: string): { scaled: boolean; rs: RS } {
  if (rs.replicas === to) return { scaled: false, rs };
  return scaleRS(r, rs, to, why);
}

export function cleanupDeployment(r: Round, oldRSs: readonly RS[]): void {
  // An RS written earlier in this sync is left for a later round (upstream would judge it by its stale copy).
  const candidates = replicaSetsToCleanUp(r.d, oldRSs).filter((rs) => !r.rsWrites.has(rs.name));
  for (const rs of candidates) {
    r.deleteRS(rs, `delete old ReplicaSet ${rs.name} (revision ${rs.annotations?.[REVISION_ANNOTATION] ?? '-'}): more than revisionHistoryLimit ${r.d.revisionHistoryLimit} old ReplicaSets`);
  }
}

/**
 * Old ReplicaSets to delete per revisionHistoryLimit (upstream's cleanupDeployment): of the old RSs not
 * being deleted, the (count - limit) lowest revisions are candidates, and of those only RSs with spec and
 * status replicas 0 whose status is up to date go. None when there is no limit.
 */
export function replicaSetsToCleanUp<T extends ReplicaSetView>(d: DeploymentView, oldRSs: readonly T[]): T[] {
  if (!hasRevisionHistoryLimit(d)) return [];
  const cleanable = oldRSs.filter((rs) => !rs.deletionTimestamp);
  const diff = cleanable.length - (d.revisionHistoryLimit as number);
  if (diff <= 0) return [];
  return sortedBy(cleanable, compareByRevision)
    .slice(0, diff)
    .filter((rs) => rs.status.replicas === 0 && rs.replicas === 0 && !(rs.generation > rs.status.observedGeneration) && !rs.deletionTimestamp);
}

/** syncDeploymentStatus: plain calculateStatus, written when it differs from the in-memory status. */
export function syncDeploymentStatus(r: Round, allRSs: readonly (RS | undefined)[], newRS: RS | undefined, why: string): void {
  const s = calculateDeploymentStatus(r.d, allRSs, newRS, r.now);
  if (deploymentStatusEqual(r.d.status, s)) return;
  r.d.status = s;
  r.writeDeployment(`status (${why})`);
}

/**
 * Upstream's calculateStatus: counters summed over the ReplicaSets (unavailable = spec replicas summed
 * minus available, at least 0), observedGeneration = generation, collisionCount kept, the existing
 * conditions kept, and Available set from availableReplicas >= replicas - maxUnavailable.
 */
export function calculateDeploymentStatus(
  d: DeploymentView,
  allRSs: readonly (ReplicaSetView | undefined)[],
  newRS: ReplicaSetView | undefined,
  now: number,
): DeploymentStatus {
  const available = sum(allRSs, (rs) => rs.status.availableReplicas);
  const total = sum(allRSs, (rs) => rs.replicas);
  const status: DeploymentStatus = {
    observedGeneration: d.generation,
    replicas: sum(allRSs, (rs) => rs.status.replicas),
    updatedReplicas: newRS ? newRS.status.replicas : 0,
    readyReplicas: sum(allRSs, (rs) => rs.status.readyReplicas),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: (d.status.conditions ?? []).map((c) => ({ ...c })),
  };
  const terminating = terminatingReplicasOf(allRSs);
  if (terminating !== undefined) status.terminatingReplicas = terminating;
  if (d.status.collisionCount !== undefined && d.status.collisionCount !== null) status.collisionCount = d.status.collisionCount;
  if (available >= d.replicas - maxUnavailable(d)) {
    setCondition(status, newCondition(CONDITION_AVAILABLE, 'True', REASON_MIN_AVAILABLE, 'Deployment has minimum availability.', now));
  } else {
    setCondition(status, newCondition(CONDITION_AVAILABLE, 'False', REASON_MIN_UNAVAILABLE, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** An active ReplicaSet's desired-replicas annotation disagrees with spec.replicas (someone scaled the Deployment). */
export function isScalingEvent(d: DeploymentView, rss: readonly ReplicaSetView[]): boolean {
  for (const rs of rss) {
    if (!isActive(rs)) continue;
    const desired = parseNonNegativeInt32(rs.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
    if (desired === undefined) continue;
    if (desired !== d.replicas) return true;
  }
  return false;
}

/** Longest object name (DNS-1123 subdomain). */
const MAX_RS_NAME_LENGTH = 253;

/** `<deployment>-<hash>`, the deployment name cut so the whole stays within 253 characters. */
export function replicaSetName(deploymentName: string, hash: string): string {
  const maxBase = MAX_RS_NAME_LENGTH - 1 - hash.length;
  const base = deploymentName.length > maxBase && maxBase > 0 ? deploymentName.slice(0, maxBase) : deploymentName;
  return `${base}-${hash}`;
}
