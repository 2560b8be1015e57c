/*
 * One StatefulSet sync as upstream's stateful_set_control.go decides it: the current and update
 * revisions, then the pods in ordinal order (OrderedReady stops at the first pod that is not
 * Running, Ready and available; Parallel goes on), the condemned pods in reverse order, the
 * rolling update from the highest ordinal down to the partition, the status and the history
 * beyond revisionHistoryLimit. Pure functions over one observation: every write they ask for is
 * named, and the workflow makes them in this order.
 */
import { hashRevisionData, nextRevision, revisionName, revisionTemplate, sortRevisions, statefulSetRevisionData } from '../common/controller-history';
import {
  allowsBurst,
  claimManifests,
  claimsOf,
  endOrdinal,
  hasStaleOwnerRef,
  identityMatches,
  inOrdinalRange,
  isAvailable,
  isClaimOwnerUpToDate,
  isCreated,
  isFailed,
  isPending,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  isUnavailable,
  ordinalOf,
  podRevision,
  startOrdinal,
  statefulPodManifest,
  storageMatches,
  type ClaimManifest,
  type StatefulPodManifest,
} from './utils';
import type { StatefulClaimView, StatefulPodView, StatefulRevisionView, StatefulSetStatusView, StatefulSetView } from './types';
import { parseTime } from '../replicaset/logic';

/** What the history step must write before the pods are looked at, if anything. */
export type RevisionStep =
  | { kind: 'use'; update: StatefulRevisionView }
  | { kind: 'renumber'; name: string; revision: number }
  | { kind: 'create'; data: string; revision: number; collisionCount: number; hash: string; name: string };

/** getStatefulSetRevisions: the update revision found, renumbered or to create. */
export function planUpdateRevision(set: StatefulSetView, revisions: readonly StatefulRevisionView[]): RevisionStep {
  const sorted = sortRevisions(revisions);
  const data = statefulSetRevisionData(set.template);
  const collisionCount = set.status.collisionCount ?? 0;
  const next = nextRevision(sorted.length ? [sorted[sorted.length - 1]] : []);
  const equal = sorted.filter((r) => r.data === data);
  const latest = sorted[sorted.length - 1];
  if (equal.length && latest.name === equal[equal.length - 1].name) return { kind: 'use', update: latest };
  if (equal.length) return { kind: 'renumber', name: equal[equal.length - 1].name, revision: next };
  if (latest && sameTemplateOnceEncoded(latest, data)) return { kind: 'use', update: latest };
  const hash = hashRevisionData(data, collisionCount);
  return { kind: 'create', data, revision: next, collisionCount, hash, name: revisionName(set.name, hash) };
}

/**
 * setMatchesLatestExistingRevision (StatefulSetSemanticRevisionComparison, on by default): the
 * newest revision's template, encoded as this version encodes it, is the set's. A revision made by
 * a manager before 1.34 holds `"creationTimestamp":null` in the template's metadata, which the
 * encoding now leaves out; without this, an upgrade would make a new revision and roll every pod.
 */
export function sameTemplateOnceEncoded(latest: StatefulRevisionView, data: string): boolean {
  const t = revisionTemplate(latest.data);
  if (!t) return false;
  const meta = t.metadata as Record<string, unknown> | undefined;
  if (meta && meta.creationTimestamp === null) {
    const { creationTimestamp: _ts, ...rest } = meta;
    return statefulSetRevisionData({ ...t, metadata: rest }) === data;
  }
  return statefulSetRevisionData(t) === data;
}

/** The current revision: the one status names, else the update revision. */
export function currentRevisionOf(set: StatefulSetView, revisions: readonly StatefulRevisionView[], update: StatefulRevisionView): StatefulRevisionView {
  return revisions.find((r) => r.name === set.status.currentRevision) ?? update;
}

/** One pod-level write, in the order upstream makes them. */
export type PodAction =
  | { type: 'delete'; pod: { name: string; uid: string }; why: string }
  | { type: 'create'; ordinal: number; pod: StatefulPodManifest; claims: ClaimManifest[]; why: string }
  /** a pending pod's missing claims are made, and every claim's owners put right */
  | { type: 'createClaims'; ordinal: number; pod: { name: string; uid: string }; claims: ClaimManifest[]; why: string }
  /** the pod's identity or storage is put right (UpdateStatefulPod), claims' owners with it */
  | { type: 'updatePod'; ordinal: number; pod: { name: string; uid: string }; claims: ClaimManifest[]; why: string }
  /** a condemned pod's claims get the owners the retention policy wants */
  | { type: 'fixClaims'; ordinal: number; pod: { name: string; uid: string }; why: string };

/** The stages of a sync; Parallel runs each in slow-start batches, stopping at the first failing batch. */
export interface SyncPlan {
  burst: boolean;
  replicaActions: PodAction[];
  condemnedClaimActions: PodAction[];
  condemnedActions: PodAction[];
  updateActions: PodAction[];
  /** the status as upstream would write it once these writes are made */
  status: Required<Pick<StatefulSetStatusView, 'observedGeneration' | 'replicas' | 'readyReplicas' | 'currentReplicas' | 'updatedReplicas' | 'availableReplicas' | 'collisionCount'>> & { currentRevision: string; updateRevision: string };
  /** what OrderedReady waits for, in words, when it stopped */
  waitingFor?: string;
}

/** A slot in the ordinal range: the pod there, or the pod upstream would make for it. */
type Slot = { pod: StatefulPodView; fresh?: { manifest: StatefulPodManifest; revision: string } };

function counts(slots: readonly StatefulPodView[], minReadySeconds: number, current: string, update: string, nowMs: number) {
  const c = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  for (const p of slots) {
    if (isCreated(p)) c.replicas++;
    if (isRunningAndReady(p)) {
      c.readyReplicas++;
      if (isAvailable(p, minReadySeconds, nowMs)) c.availableReplicas++;
    }
    if (isCreated(p) && !isTerminating(p)) {
      if (podRevision(p) === current) c.currentReplicas++;
      if (podRevision(p) === update) c.updatedReplicas++;
    }
  }
  return c;
}

const podRef = (p: StatefulPodView) => ({ name: p.name, uid: p.uid });

/**
 * updateStatefulSet: what this sync writes, given the pods the set owns (every one a member by
 * name), the claims named after its templates, and its two revisions.
 */
export function planSync(set: StatefulSetView, pods: readonly StatefulPodView[], claims: ReadonlyMap<string, StatefulClaimView>,
  current: StatefulRevisionView, update: StatefulRevisionView, collisionCount: number, nowMs: number): SyncPlan {
  const min = set.minReadySeconds;
  const burst = allowsBurst(set);
  const monotonic = !burst;
  const plan: SyncPlan = {
    burst, replicaActions: [], condemnedClaimActions: [], condemnedActions: [], updateActions: [],
    status: {
      observedGeneration: set.generation, currentRevision: current.name, updateRevision: update.name, collisionCount,
      ...counts(pods, min, current.name, update.name, nowMs),
    },
  };
  const currentTemplate = revisionTemplate(current.data) ?? set.template;
  const updateTemplate = revisionTemplate(update.data) ?? set.template;
  const start = startOrdinal(set);
  const slots: Slot[] = [];
  const condemned: StatefulPodView[] = [];
  const byOrdinal = new Map<number, StatefulPodView>();
  for (const p of pods) {
    if (inOrdinalRange(p.name, set)) byOrdinal.set(ordinalOf(p.name), p);
    else if (ordinalOf(p.name) >= 0) condemned.push(p);
  }
  for (let ord = start; ord <= endOrdinal(set); ord++) {
    const have = byOrdinal.get(ord);
    if (have) {
      slots.push({ pod: have });
      continue;
    }
    // newVersionedStatefulSetPod: below the partition an ordinal is made at the current revision
    const ru = set.updateStrategy.rollingUpdate;
    const atCurrent = (set.updateStrategy.type === 'RollingUpdate' && !ru && ord < start + (set.status.currentReplicas ?? 0)) || (!!ru && ord < start + ru.partition);
    const revision = atCurrent ? current.name : update.name;
    const manifest = statefulPodManifest(set, atCurrent ? currentTemplate : updateTemplate, revision, ord);
    slots.push({
      pod: { name: manifest.metadata.name, namespace: set.namespace, uid: '', labels: manifest.metadata.labels, phase: '', ready: false, deleting: false, volumes: {} },
      fresh: { manifest, revision },
    });
  }
  condemned.sort((a, b) => ordinalOf(b.name) - ordinalOf(a.name));
  const replicas = slots.map((s) => s.pod);
  let firstUnavailable: StatefulPodView | undefined;
  for (const p of replicas) if (!firstUnavailable && isUnavailable(p, min, nowMs)) firstUnavailable = p;
  for (let i = condemned.length - 1; i >= 0; i--) if (!firstUnavailable && isUnavailable(condemned[i], min, nowMs)) firstUnavailable = condemned[i];

  const finish = (extra?: () => void): SyncPlan => {
    const c = counts([...replicas, ...condemned], min, current.name, update.name, nowMs);
    plan.status = { ...plan.status, ...c };
    extra?.();
    return plan;
  };
  if (set.deleting) return plan;

  const claimsUpToDate = (p: StatefulPodView) =>
    claimsOf(set, ordinalOf(p.name), claims).every((c) => !c.claim || isClaimOwnerUpToDate(c.claim.ownerReferences, set, podRef(p)));

  // processReplica, in ordinal order
  for (const slot of slots) {
    const p = slot.pod;
    const ord = ordinalOf(p.name);
    if (isFailed(p) || isSucceeded(p)) {
      if (!p.deleting) plan.replicaActions.push({ type: 'delete', pod: podRef(p), why: `${p.name} has ${p.phase}: it is deleted to be made again` });
      if (monotonic) return finish(() => (plan.waitingFor = `${p.name} to be replaced`));
      continue;
    }
    if (slot.fresh) {
      // PodClaimIsStale: a claim still owned by an earlier pod of this ordinal waits for the collector
      const stale = set.retention.whenScaled !== 'Retain' && claimsOf(set, ord, claims).some((c) => c.claim && hasStaleOwnerRef(c.claim.ownerReferences, (r) => r.apiVersion === 'v1' && r.kind === 'Pod' && r.name === p.name, ''));
      if (stale) {
        if (monotonic) return finish(() => (plan.waitingFor = `the claims of an earlier ${p.name} to be deleted`));
        continue;
      }
      plan.replicaActions.push({ type: 'create', ordinal: ord, pod: slot.fresh.manifest, claims: claimManifests(set, ord), why: `ordinal ${ord} has no pod` });
      if (monotonic) return finish(() => (plan.waitingFor = `${p.name} to be created`));
      continue;
    }
    if (isPending(p)) {
      const missing = claimsOf(set, ord, claims).some((c) => !c.claim || c.claim.deleting);
      if (missing || !claimsUpToDate(p)) plan.replicaActions.push({ type: 'createClaims', ordinal: ord, pod: podRef(p), claims: claimManifests(set, ord), why: `pending ${p.name} needs its claims` });
    }
    if (monotonic) {
      const wait = isTerminating(p) ? 'to terminate' : !isRunningAndReady(p) ? 'to be Running and Ready' : !isAvailable(p, min, nowMs) ? 'to be available' : undefined;
      if (wait) return finish(() => (plan.waitingFor = `${p.name} ${wait}`));
    }
    if (!(identityMatches(set, p) && storageMatches(set, p) && claimsUpToDate(p))) {
      plan.replicaActions.push({ type: 'updatePod', ordinal: ord, pod: podRef(p), claims: claimManifests(set, ord), why: `${p.name}'s identity, storage or claim owners differ from the set's` });
    }
  }

  // the condemned pods' claims take the scaled-down owners first
  for (const p of condemned) {
    if (!claimsUpToDate(p)) plan.condemnedClaimActions.push({ type: 'fixClaims', ordinal: ordinalOf(p.name), pod: podRef(p), why: `${p.name} is scaled down: its claims follow the retention policy` });
  }

  // processCondemned, highest ordinal first
  for (const p of condemned) {
    if (isTerminating(p)) {
      if (monotonic) return finish(() => (plan.waitingFor = `${p.name} to terminate before scaling down further`));
      continue;
    }
    if (monotonic && p !== firstUnavailable) {
      if (!isRunningAndReady(p) || !isAvailable(p, min, nowMs)) return finish(() => (plan.waitingFor = `${firstUnavailable?.name ?? p.name} to be Running, Ready and available before scaling down`));
    }
    plan.condemnedActions.push({ type: 'delete', pod: podRef(p), why: `scale down: ${p.name} is beyond the last ordinal ${endOrdinal(set)}` });
    if (monotonic) return finish();
  }

  return finish(() => {
    if (set.updateStrategy.type === 'OnDelete') return;
    // the rolling update: the highest ordinal not at the update revision goes, one at a time
    const updateMin = set.updateStrategy.rollingUpdate?.partition ?? 0;
    for (let target = replicas.length - 1; target >= updateMin; target--) {
      const p = replicas[target];
      if (podRevision(p) !== update.name && !isTerminating(p)) {
        plan.updateActions.push({ type: 'delete', pod: podRef(p), why: `rolling update: ${p.name} is at revision ${podRevision(p)}, not ${update.name}` });
        plan.status.currentReplicas--;
        return;
      }
      if (isUnavailable(p, min, nowMs)) {
        plan.waitingFor = `${p.name} to be available during the rolling update`;
        return;
      }
    }
  });
}

/** A pod action that makes nothing: fresh pods have no UID yet. */
export const actionCount = (plan: SyncPlan) => plan.replicaActions.length + plan.condemnedClaimActions.length + plan.condemnedActions.length + plan.updateActions.length;

/** completeRollingUpdate, then inconsistentStatus: the status to write, or undefined when the stored one stands. */
export function statusToWrite(set: StatefulSetView, planned: SyncPlan['status']): SyncPlan['status'] | undefined {
  const s = { ...planned };
  if (set.updateStrategy.type === 'RollingUpdate' && s.updatedReplicas === set.replicas && s.readyReplicas === set.replicas && s.replicas === set.replicas) {
    s.currentReplicas = s.updatedReplicas;
    s.currentRevision = s.updateRevision;
  }
  const o = set.status;
  const differs = s.observedGeneration > (o.observedGeneration ?? 0) || s.replicas !== o.replicas || s.currentReplicas !== (o.currentReplicas ?? 0)
    || s.readyReplicas !== (o.readyReplicas ?? 0) || s.updatedReplicas !== (o.updatedReplicas ?? 0) || s.currentRevision !== (o.currentRevision ?? '')
    || s.availableReplicas !== (o.availableReplicas ?? 0) || s.updateRevision !== (o.updateRevision ?? '');
  return differs ? s : undefined;
}

/** truncateHistory: the oldest revisions beyond the limit that neither revision nor any pod uses. */
export function revisionsToTruncate(set: StatefulSetView, revisions: readonly StatefulRevisionView[], pods: readonly StatefulPodView[], current?: string, update?: string): string[] {
  const live = new Set<string>([...(current ? [current] : []), ...(update ? [update] : []), ...pods.map(podRevision)]);
  const history = sortRevisions(revisions).filter((r) => !live.has(r.name));
  const limit = set.revisionHistoryLimit;
  if (limit < 0 || history.length <= limit) return [];
  return history.slice(0, history.length - limit).map((r) => r.name);
}

/** syncStatefulSet's requeue for minReadySeconds: when the next ready pod becomes available. */
export function availabilityRequeueMs(set: StatefulSetView, pods: readonly StatefulPodView[], status: SyncPlan['status'], nowMs: number): number | undefined {
  if (set.minReadySeconds <= 0 || status.readyReplicas === status.availableReplicas) return undefined;
  let next: number | undefined;
  for (const p of pods) {
    if (!p.ready || isAvailable(p, set.minReadySeconds, nowMs)) continue;
    const since = parseTime(p.readySince);
    if (since === undefined) continue;
    const wait = since + set.minReadySeconds * 1000 - nowMs;
    next = next === undefined ? wait : Math.min(next, wait);
  }
  return Math.max(0, next ?? set.minReadySeconds * 1000);
}
