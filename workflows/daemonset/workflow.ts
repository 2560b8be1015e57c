import { log, proxyActivities } from '@temporalio/workflow';
import type { DaemonSetActivities } from '../../activities/daemonset/activities';
import { claimAll } from '../common/controller-ref';
import { newerVersion } from '../common/resource-version';
import { isEverythingSelector, selectorError } from '../common/selector';
import { podName, slowStartBatches } from '../replicaset/logic';
import { API_BATCHES, POD_BATCHES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER,
  type DaemonEvent,
  manage,
  planHistory,
  revisionsToDelete,
  rollingUpdate,
  statusCounts,
  statusUpToDate,
} from './plan';
import type { DaemonPodView, DaemonRevisionView, DaemonSetEvent, DaemonSetView, FailedPodBackoff, NodeVerdict } from './types';

export interface DaemonSetWorkflowInput {
  namespace: string;
  name: string;
  /** the DaemonSet this run serves; one recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new */
  state?: { seq: number; backoffs: Array<[string, FailedPodBackoff]> };
}

export function daemonSetWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

/** Folds two events, `later` winning; a full one replaces everything before it. */
export function mergeDaemonSetEvents(earlier: DaemonSetEvent, later: DaemonSetEvent): DaemonSetEvent {
  if (later.dsGone) return { dsGone: true };
  if (later.full || earlier.dsGone) return later;
  // the workflow reads everything again: what came before is in that read
  if (later.lookAgain) return { lookAgain: true };
  const verdicts = { ...(earlier.verdicts ?? {}) };
  const nodesGone = new Set(earlier.nodesGone ?? []);
  for (const [n, v] of Object.entries(later.verdicts ?? {})) {
    verdicts[n] = v;
    nodesGone.delete(n);
  }
  for (const n of later.nodesGone ?? []) {
    delete verdicts[n];
    nodesGone.add(n);
  }
  const pods = new Map((earlier.pods ?? []).map((p) => [p.uid, p]));
  const podsGone = new Set(earlier.podsGone ?? []);
  for (const p of later.pods ?? []) {
    pods.set(p.uid, p);
    podsGone.delete(p.uid);
  }
  for (const u of later.podsGone ?? []) {
    pods.delete(u);
    podsGone.add(u);
  }
  const revisions = new Map((earlier.revisions ?? []).map((r) => [r.name, r]));
  const revisionsGone = new Set(earlier.revisionsGone ?? []);
  for (const r of later.revisions ?? []) {
    revisions.set(r.name, r);
    revisionsGone.delete(r.name);
  }
  for (const n of later.revisionsGone ?? []) {
    revisions.delete(n);
    revisionsGone.add(n);
  }
  const ds = later.ds ?? earlier.ds;
  return {
    ...(earlier.lookAgain ? { lookAgain: true } : {}),
    ...(ds ? { ds } : {}),
    ...(earlier.full ? { full: true } : {}),
    ...(Object.keys(verdicts).length || earlier.full ? { verdicts } : {}),
    ...(nodesGone.size ? { nodesGone: [...nodesGone] } : {}),
    ...(pods.size || earlier.full ? { pods: [...pods.values()] } : {}),
    ...(podsGone.size ? { podsGone: [...podsGone] } : {}),
    ...(revisions.size || earlier.full ? { revisions: [...revisions.values()] } : {}),
    ...(revisionsGone.size ? { revisionsGone: [...revisionsGone] } : {}),
  };
}

const io = proxyActivities<DaemonSetActivities>(API_BATCHES);
const pods$ = proxyActivities<Pick<DaemonSetActivities, 'createDaemonPods' | 'deleteDaemonPods'>>(POD_BATCHES);

/**
 * One DaemonSet: a pod on every node its predicates pick (the watch computes each node's verdict),
 * updated by its strategy, with its ControllerRevision history and status as upstream keeps them.
 * Pods are named deterministically from the DaemonSet's UID and a sequence kept in the workflow,
 * so a create retried after a replica died finds the pod it made: a node never gets two.
 */
export async function daemonSetWorkflow(input: DaemonSetWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof daemonSetWorkflow>(input.uid, (uid) => [{ ...input, uid, state: undefined }]);
  let ds: DaemonSetView | undefined;
  const verdicts = new Map<string, NodeVerdict>();
  const pods = new Map<string, DaemonPodView>();
  const revisions = new Map<string, DaemonRevisionView>();
  /** pods this run deleted: a late event must not bring them back to life */
  const deleted = new Set<string>();
  let known = false;
  let gone = false;
  let seq = input.state?.seq ?? 0;
  let backoffs = new Map<string, FailedPodBackoff>(input.state?.backoffs ?? []);
  let warnedSelectingAll = false;

  const putPod = (p: DaemonPodView) => {
    const prev = pods.get(p.uid);
    if (prev?.resourceVersion && p.resourceVersion && newerVersion(prev.resourceVersion, p.resourceVersion)) return;
    pods.set(p.uid, deleted.has(p.uid) ? { ...p, deleting: true } : p);
  };

  function apply(e: DaemonSetEvent): void {
    if (e.dsGone) {
      gone = true;
      return;
    }
    if (e.ds) ds = e.ds;
    // too large to have come with its state: the next reconcile reads it (histories before never carry it)
    if (e.lookAgain) known = false;
    if (e.full) {
      verdicts.clear();
      pods.clear();
      revisions.clear();
      known = true;
    }
    for (const [n, v] of Object.entries(e.verdicts ?? {})) verdicts.set(n, v);
    for (const n of e.nodesGone ?? []) verdicts.delete(n);
    for (const p of e.pods ?? []) putPod(p);
    for (const u of e.podsGone ?? []) {
      pods.delete(u);
      deleted.delete(u);
    }
    for (const r of e.revisions ?? []) revisions.set(r.name, r);
    for (const n of e.revisionsGone ?? []) revisions.delete(n);
  }

  async function observe(): Promise<boolean> {
    const o = await io.observeDaemonSet({ namespace: input.namespace, name: input.name });
    if (!o.ds) return false;
    apply({ ds: o.ds, full: true, verdicts: o.verdicts, pods: o.pods, revisions: o.revisions });
    return true;
  }

  async function events(list: DaemonEvent[]): Promise<void> {
    if (list.length) await io.recordDaemonSetEvents({ ds: ref(), events: list });
  }
  const ref = () => ({ namespace: ds!.namespace, name: ds!.name, uid: ds!.uid });

  /** syncNodes: creates in slow-start batches, then deletes; what each write did goes into the view at once */
  async function syncNodes(nodesNeedingPods: readonly string[], podsToDelete: readonly string[], hash: string, why: string): Promise<boolean> {
    let failed = false;
    let pos = 0;
    for (const size of slowStartBatches(nodesNeedingPods.length)) {
      const batch = nodesNeedingPods.slice(pos, pos + size).map((node) => ({ node, name: podName(ds!.name, ds!.uid, seq++) }));
      pos += size;
      const r = await pods$.createDaemonPods({ ds: { namespace: ds!.namespace, name: ds!.name, uid: ds!.uid, template: ds!.template, templateGeneration: ds!.templateGeneration },
        hash, pods: batch, reason: `${why}: ${batch.map((b) => b.node).join(', ')} need a daemon pod` });
      for (const p of r.created) putPod(p);
      if (r.failed.length) {
        failed = true;
        break;
      }
    }
    if (podsToDelete.length) {
      const byName = new Map([...pods.values()].map((p) => [p.name, p]));
      const targets = podsToDelete.map((n) => byName.get(n)).filter((p): p is DaemonPodView => !!p).map((p) => ({ name: p.name, uid: p.uid }));
      const r = await pods$.deleteDaemonPods({ ds: ref(), pods: targets, reason: `${why}: ${podsToDelete.join(', ')}` });
      for (const u of r.deleted) {
        deleted.add(u);
        const p = pods.get(u);
        if (p) pods.set(u, { ...p, deleting: true });
      }
      if (r.failed.length) failed = true;
    }
    return failed;
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (gone) return { finished: true };
    if ((!ds || !known) && !(await observe())) return { finished: true };
    const d = ds!;
    await id.handOverIfNew(d.uid);
    id.learn(d.uid);
    // being deleted: its revisions may be going first, so neither pods nor status are touched (as upstream)
    if (d.deleting) return {};
    if (isEverythingSelector(d.selector)) {
      if (!warnedSelectingAll) {
        warnedSelectingAll = true;
        await events([{ type: 'Warning', reason: 'SelectingAll', message: 'This daemon set is selecting all pods. A non-empty selector is required.' }]);
      }
      return {};
    }
    if (selectorError(d.selector) !== undefined) return { failed: true, error: `invalid selector: ${selectorError(d.selector)}` };

    // claim: adopt the orphans the selector matches, release what it no longer matches
    const claimant = { namespace: d.namespace, uid: d.uid, selector: d.selector! };
    const candidate = (o: { labels?: Record<string, string>; controllerRef?: DaemonPodView['controllerRef'] }) => ({
      namespace: d.namespace, labels: o.labels, ownerReferences: o.controllerRef ? [o.controllerRef] : [],
    });
    const podClaims = claimAll(claimant, [...pods.values()].map((p) => ({ ...candidate(p), ...(p.deleting ? { deletionTimestamp: 'set' } : {}), view: p })));
    const revClaims = claimAll(claimant, [...revisions.values()].map((r) => ({ ...candidate(r), view: r })));
    if (podClaims.adopt.length + podClaims.release.length + revClaims.adopt.length + revClaims.release.length) {
      const r = await io.claimDaemonObjects({
        ds: ref(),
        adoptPods: podClaims.adopt.map((c) => ({ name: c.view.name, uid: c.view.uid })),
        releasePods: podClaims.release.map((c) => ({ name: c.view.name, uid: c.view.uid })),
        adoptRevisions: revClaims.adopt.map((c) => ({ name: c.view.name, uid: c.view.uid ?? '' })),
        releaseRevisions: revClaims.release.map((c) => ({ name: c.view.name, uid: c.view.uid ?? '' })),
        reason: 'orphans the selector matches are adopted; objects it no longer matches are released',
      });
      for (const p of r.pods) putPod(p);
      for (const rv of r.revisions) revisions.set(rv.name, rv);
      return { requeueAfterMs: 0 };
    }
    const owned = podClaims.owned.map((c) => c.view);
    const ownedRevisions = revClaims.owned.map((c) => c.view);

    // history: the current template's revision, found or made
    const h = planHistory(d, ownedRevisions);
    if (h.unlabelled.length) {
      for (const r of await io.labelRevisions({ namespace: d.namespace, names: h.unlabelled, reason: 'revisions without the hash label are labelled with their name' })) revisions.set(r.name, r);
    }
    let hash: string;
    if (h.create) {
      const r = await io.createRevision({
        ds: { ...ref(), annotations: d.annotations, templateLabels: d.template.metadata?.labels }, name: h.create.name, hash: h.create.hash,
        revision: h.create.revision, data: h.data, reason: `the template has no revision yet: revision ${h.create.revision}`,
      });
      if (r.outcome === 'collision') {
        const b = await io.bumpCollisionCount({ ds: ref(), seen: d.status.collisionCount, reason: `revision name ${h.create.name} is taken by other data` });
        ds = { ...d, status: { ...d.status, ...(b.collisionCount !== undefined ? { collisionCount: b.collisionCount } : {}) } };
        known = false;
        return { requeueAfterMs: 0 };
      }
      revisions.set(r.revision.name, r.revision);
      hash = r.revision.hash ?? h.create.hash;
    } else {
      const cur = h.current!;
      hash = cur.hash ?? cur.name;
      if (h.duplicates.length) {
        await io.relabelPods({ namespace: d.namespace, pods: owned.filter((p) => p.hash !== hash).map((p) => ({ name: p.name, uid: p.uid })), hash,
          reason: `revisions ${h.duplicates.join(', ')} duplicate ${cur.name}: their pods take its hash` });
        await io.deleteRevisions({ namespace: d.namespace, names: h.duplicates, reason: `duplicates of revision ${cur.name}` });
        for (const n of h.duplicates) revisions.delete(n);
        known = false;
        return { requeueAfterMs: 0 };
      }
      if (h.bumpTo !== undefined) {
        const r = await io.renumberRevision({ namespace: d.namespace, name: cur.name, revision: h.bumpTo, reason: `the template went back to revision ${cur.name}: it becomes the newest` });
        if (r) revisions.set(r.name, r);
      }
    }

    // manage: a pod where one belongs, none where none does
    const now = Date.now();
    const m = manage(d, verdicts, owned, hash, now, backoffs);
    backoffs = m.backoffs;
    await events(m.events);
    let wrote = m.nodesNeedingPods.length + m.podsToDelete.length > 0;
    let failed = wrote && (await syncNodes(m.nodesNeedingPods, m.podsToDelete, hash, 'daemon pods'));
    let requeue = m.requeueAfterMs;
    // then the update, once the pods the manage step made or removed are in the view
    if (!wrote && d.updateStrategy.type === 'RollingUpdate') {
      const u = rollingUpdate(d, verdicts, owned, hash, now);
      if (u.error) {
        log.warn('cannot update daemon pods', { error: u.error });
        failed = true;
      } else if (u.podsToDelete.length + u.nodesToCreate.length) {
        wrote = true;
        failed = await syncNodes(u.nodesToCreate, u.podsToDelete, hash, 'rolling update');
      }
    }
    const stale = revisionsToDelete(h.old, d.revisionHistoryLimit, [...pods.values()]);
    if (stale.length) {
      await io.deleteRevisions({ namespace: d.namespace, names: stale, reason: `more old revisions than revisionHistoryLimit ${d.revisionHistoryLimit}` });
      for (const n of stale) revisions.delete(n);
    }

    // status, from the view with this sync's writes in it
    const counts = statusCounts(d, verdicts, [...pods.values()].filter((p) => p.controllerRef?.uid === d.uid), hash, Date.now());
    if (!statusUpToDate(d.status, counts, d.generation)) {
      const r = await io.updateDaemonSetStatus({ ds: { ...ref(), resourceVersion: d.resourceVersion }, counts, observedGeneration: d.generation,
        reason: `${counts.currentNumberScheduled}/${counts.desiredNumberScheduled} scheduled, ${counts.updatedNumberScheduled} updated, ${counts.numberAvailable} available` });
      if (r.outcome !== 'written') {
        if (r.outcome === 'gone') return { finished: true };
        known = false;
        return { requeueAfterMs: 0 };
      }
      ds = { ...d, resourceVersion: r.resourceVersion, status: { ...d.status, ...counts, observedGeneration: d.generation } };
    }
    if (failed) return { failed: true, error: 'some daemon pod writes failed' };
    if (wrote) return { requeueAfterMs: 0 };
    // minReadySeconds: look again when pods become available, in case no event says so
    if (d.minReadySeconds > 0 && counts.numberReady !== counts.numberAvailable) {
      requeue = Math.min(requeue ?? Infinity, d.minReadySeconds * 1000);
    }
    return requeue !== undefined ? { requeueAfterMs: requeue } : {};
  }

  await runObjectLoop<DaemonSetEvent>({
    controller: CONTROLLER,
    tuning,
    apply,
    reconcile,
    describe: () => ({
      nodes: verdicts.size,
      wanted: [...verdicts.values()].filter((v) => v.shouldRun).length,
      pods: pods.size,
      revisions: [...revisions.values()].map((r) => `${r.name}#${r.revision}`).sort(),
      scheduled: ds ? `${ds.status.currentNumberScheduled}/${ds.status.desiredNumberScheduled}` : undefined,
      updated: ds?.status.updatedNumberScheduled,
      available: ds?.status.numberAvailable,
    }),
    continueAsNewArgs: () => [{ ...input, state: { seq, backoffs: [...backoffs] } }],
    // a new run knows nothing (known false): its first reconcile reads the DaemonSet, the nodes'
    // verdicts, its pods and revisions
    rereadsOnNewRun: true,
  });
}
