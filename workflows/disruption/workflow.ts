import { log, proxyActivities } from '@temporalio/workflow';
import type { DisruptionActivities, BudgetEvent } from '../../activities/disruption/activities';
import { API_WRITES } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER,
  STALE_POD_DISRUPTION_TIMEOUT_MS,
  budgetCounts,
  countHealthy,
  disruptedPodMap,
  failSafeStatus,
  needsControllerScale,
  nextStatus,
  notDeletedMessage,
  sharedPodMessage,
  unmanagedPods,
  unmanagedPodsMessage,
} from './logic';
import type { PdbEvent, PdbPodView, PdbView, StaleConditionPod } from './types';

export interface DisruptionWorkflowInput extends CarriedSignals<PdbEvent> {
  namespace: string;
  name: string;
  /** the budget this run keeps; a budget recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function disruptionWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

/** Folds two events, `later` winning: a whole pod set replaces what came before it. */
export function mergePdbEvents(earlier: PdbEvent, later: PdbEvent): PdbEvent {
  if (later.pdbGone) return { pdbGone: true };
  const shared = [...(earlier.shared ?? []), ...(later.shared ?? [])];
  const withShared = (e: PdbEvent): PdbEvent => (shared.length ? { ...e, shared } : e);
  const pdb = later.pdb ?? (earlier.pdbGone ? undefined : earlier.pdb);
  if (later.allPods) return withShared({ ...later, ...(pdb ? { pdb } : {}) });
  const pods = new Map<string, PdbPodView>((earlier.pods ?? []).map((p) => [p.name, p]));
  const gone = new Set(earlier.podsGone ?? []);
  for (const p of later.pods ?? []) {
    pods.set(p.name, p);
    gone.delete(p.name);
  }
  for (const n of later.podsGone ?? []) {
    pods.delete(n);
    gone.add(n);
  }
  return withShared({
    ...(pdb ? { pdb } : {}),
    ...(earlier.allPods && !earlier.pdbGone ? { allPods: true } : {}),
    ...(pods.size ? { pods: [...pods.values()] } : {}),
    ...(gone.size ? { podsGone: [...gone] } : {}),
  });
}

const io = proxyActivities<DisruptionActivities>(API_WRITES);

/**
 * One PodDisruptionBudget: keeps the pods its selector matches as the watch reports them, and
 * writes the status the eviction API decides by (healthy pods, how many may go, the evictions
 * still pending and the DisruptionAllowed condition). A pending eviction that expires wakes the
 * run on a timer, as upstream's recheck queue does.
 */
export async function disruptionWorkflow(input: DisruptionWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  // the budget's successor under the name starts clean: the signals this run was carried are the old one's
  const id = objectIdentity<typeof disruptionWorkflow>(input.uid, (uid) => [{ namespace: input.namespace, name: input.name, uid, tuning: input.tuning }]);
  let pdb: PdbView | undefined;
  const pods = new Map<string, PdbPodView>();
  /** the pod set is whole: a list came, or was read */
  let podsKnown = false;
  let gone = false;
  let sharedPending: Array<{ name: string; uid: string }> = [];
  const sharedWarned = new Set<string>();
  /** what was last reported, so that a repeated condition is one Event, not one per sync */
  let reported = { noPods: false, unmanaged: '', scaleError: '' };

  function apply(e: PdbEvent): void {
    if (e.pdbGone) {
      gone = true;
      return;
    }
    if (e.pdb) pdb = e.pdb;
    if (e.allPods) {
      pods.clear();
      podsKnown = true;
    }
    for (const p of e.pods ?? []) pods.set(p.name, p);
    for (const n of e.podsGone ?? []) pods.delete(n);
    for (const s of e.shared ?? []) if (!sharedWarned.has(s.uid)) sharedPending.push(s);
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (gone) return { finished: true };
    if (!pdb || !podsKnown) {
      const seen = await io.observeBudget({ namespace: input.namespace, name: input.name });
      if (!seen.pdb) return { finished: true };
      pdb = seen.pdb;
      pods.clear();
      for (const p of seen.pods) pods.set(p.name, p);
      podsKnown = true;
    }
    await id.handOverIfNew(pdb.uid);
    id.learn(pdb.uid);

    const events: BudgetEvent[] = [];
    for (const s of sharedPending) {
      if (sharedWarned.has(s.uid)) continue;
      sharedWarned.add(s.uid);
      events.push({ pod: s, type: 'Warning', reason: 'MultiplePodDisruptionBudgets', message: sharedPodMessage(pdb.namespace, s.name, pdb.name) });
    }
    sharedPending = [];

    const now = Date.now();
    const list = [...pods.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    if (list.length === 0 && !reported.noPods) events.push({ type: 'Normal', reason: 'NoPods', message: 'No matching pods found' });
    reported = { ...reported, noPods: list.length === 0 };

    let scale = 0;
    let failure: string | undefined;
    if (needsControllerScale(pdb)) {
      const r = await io.controllerScale({ namespace: pdb.namespace, pods: list, reason: 'the budget counts against the scale of its pods\' controllers' });
      if ('error' in r) failure = r.error;
      else scale = r.expectedCount;
      const unmanaged = unmanagedPods(list).join(',');
      if (!failure && unmanaged && unmanaged !== reported.unmanaged) {
        events.push({ type: 'Warning', reason: 'UnmanagedPods', message: unmanagedPodsMessage(pdb.selector) });
      }
      reported = { ...reported, unmanaged };
    }
    const counts = budgetCounts(pdb, list.length, scale);
    failure ??= counts.error;
    if (failure) {
      if (failure !== reported.scaleError) {
        events.push({ type: 'Warning', reason: 'CalculateExpectedPodCountFailed', message: `Failed to calculate the number of expected pods: ${failure}` });
      }
      reported = { ...reported, scaleError: failure };
      log.warn('cannot compute the budget; allowing no disruption', { error: failure });
      return write(failSafeStatus(pdb, failure, now), events, `the budget cannot be computed (${failure}): no disruption is allowed`);
    }
    reported = { ...reported, scaleError: '' };

    const disrupted = disruptedPodMap(pdb.status, list, now);
    for (const name of disrupted.notDeleted) {
      const p = pods.get(name)!;
      events.push({ pod: { name, uid: p.uid }, type: 'Warning', reason: 'NotDeleted', message: notDeletedMessage(pdb) });
    }
    const healthy = countHealthy(list, disrupted.disrupted, now);
    const status = nextStatus(pdb, healthy, counts, disrupted.disrupted, now);
    const recheck: ReconcileResult = disrupted.recheckAtMs !== undefined ? { requeueAfterMs: Math.max(0, disrupted.recheckAtMs - now) } : {};
    if (!status) {
      if (events.length) await io.recordBudgetEvents({ namespace: pdb.namespace, pdb: pdb.name, pdbUid: pdb.uid, events });
      return recheck;
    }
    const done = await write(status, events,
      `${healthy} of ${counts.expectedCount} expected pods healthy, ${counts.desiredHealthy} wanted: ${status.disruptionsAllowed} disruptions allowed`);
    return done.requeueAfterMs === 0 ? done : recheck;
  }

  async function write(status: PdbView['status'], events: BudgetEvent[], reason: string): Promise<ReconcileResult> {
    const b = pdb!;
    const r = await io.writeBudgetStatus({ namespace: b.namespace, name: b.name, uid: b.uid, resourceVersion: b.resourceVersion, status, events, reason });
    if (r.outcome === 'written') {
      pdb = { ...b, resourceVersion: r.resourceVersion, status };
      return {};
    }
    if (r.outcome === 'gone') return { finished: true };
    // written meanwhile (by the eviction API, say): decide again on the budget as it is now
    pdb = undefined;
    return { requeueAfterMs: 0 };
  }

  await runObjectLoop<PdbEvent>({
    controller: CONTROLLER,
    tuning,
    apply,
    reconcile,
    // a new run reads the budget and its pods again, but the shared-pod warnings come only as
    // signals: those pending at the history ceiling go to the next run
    carries: input,
    describe: () => ({
      pods: pods.size,
      healthy: pdb?.status.currentHealthy,
      desiredHealthy: pdb?.status.desiredHealthy,
      disruptionsAllowed: pdb?.status.disruptionsAllowed,
      pendingEvictions: Object.keys(pdb?.status.disruptedPods ?? {}).sort(),
    }),
    continueAsNewArgs: () => [input],
  });
}

export interface StaleDisruptionTargetInput {
  pod: StaleConditionPod;
  tuning?: Partial<LoopTuning>;
}

/** The mark as the watch last saw it; `resolved` when the pod went away, was unmarked or finished. */
export interface StaleDisruptionTargetEvent {
  pod?: StaleConditionPod;
  resolved?: boolean;
}

export function staleDisruptionTargetWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/pods/${name}`;
}

export const mergeStalePodEvents = (_earlier: StaleDisruptionTargetEvent, later: StaleDisruptionTargetEvent) => later;

/**
 * A pod marked as a disruption target that was then not deleted (an eviction that failed after
 * the mark): once the mark is two minutes old its condition is set False, as upstream's
 * stale-condition queue does. The wait is a durable timer; the pod is read live when it ends.
 * Every eviction marks its pod just before deleting it, so most runs end early, when the watch
 * sees the deletion.
 */
export async function staleDisruptionTargetWorkflow(input: StaleDisruptionTargetInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let pod = input.pod;
  let resolved = false;
  await runObjectLoop<StaleDisruptionTargetEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if (e.pod) {
        pod = e.pod;
        resolved = false;
      }
      if (e.resolved) resolved = true;
    },
    async reconcile(): Promise<ReconcileResult> {
      // the usual end: the eviction's deletion followed its mark
      if (resolved) return { finished: true };
      const wait = pod.since + STALE_POD_DISRUPTION_TIMEOUT_MS - Date.now();
      if (wait > 0) return { requeueAfterMs: wait };
      const r = await io.clearStaleDisruptionTarget({ namespace: pod.namespace, name: pod.name, uid: pod.uid,
        reason: 'the pod was marked as a disruption target two minutes ago and is still not being deleted' });
      return r.waitMs !== undefined ? { requeueAfterMs: r.waitMs } : { finished: true };
    },
    describe: () => ({ pod: `${pod.namespace}/${pod.name}`, markedAt: new Date(pod.since).toISOString() }),
    continueAsNewArgs: () => [{ pod, tuning: input.tuning }],
  });
}
