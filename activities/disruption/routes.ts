import type { RouteContext } from '../../workers/descriptor';
import { selectorMatches } from '../../workflows/common/selector';
import { CONTROLLER, staleConditionWaitMs } from '../../workflows/disruption/logic';
import type { PdbEvent, PdbPodView, PdbView, StaleConditionPod } from '../../workflows/disruption/types';
import {
  disruptionWorkflow,
  disruptionWorkflowId,
  mergePdbEvents,
  mergeStalePodEvents,
  staleDisruptionTargetWorkflow,
  staleDisruptionTargetWorkflowId,
  type StaleDisruptionTargetEvent,
} from '../../workflows/disruption/workflow';
import type { RouteFamily } from '../informers/family';
import { BY_NAMESPACE } from '../informers/indexes';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { DISRUPTION_POD_FIELDS, PDB_FIELDS, SCALE_FIELDS, disruptionTargetView, pdbPodView, pdbView, staleConditionPod } from './projections';

/** how long a DisruptionTarget mark must stand on a live pod before a workflow times it */
export const MARK_SETTLE_MS = 10_000;

const samePod = (a: PdbPodView, b: PdbPodView) => JSON.stringify(a) === JSON.stringify(b);
const sameSelector = (a: PdbView, b: PdbView) => JSON.stringify(a.selector) === JSON.stringify(b.selector);

/**
 * Routes of the disruption controller, as upstream's handlers queue budgets: a budget to itself
 * (with every pod it selects when it is new, relisted or its selector changed), a pod to every
 * budget that selects it before or after the change, and a pod whose DisruptionTarget mark may go
 * stale to a workflow of its own. The workloads' stores are the finders' listers: the activities
 * read a controller's scale from them when they run on this replica.
 */
export function disruptionRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const pdbs = cache.watch(RESOURCES.podDisruptionBudgets, PDB_FIELDS);
  pdbs.addIndex(BY_NAMESPACE);
  const pods = cache.watch(RESOURCES.pods, DISRUPTION_POD_FIELDS);
  pods.addIndex(BY_NAMESPACE);
  for (const r of [RESOURCES.replicationControllers, RESOURCES.replicaSets, RESOURCES.deployments, RESOURCES.statefulSets]) cache.watch(r, SCALE_FIELDS);

  const send = (b: PdbView, event: PdbEvent, urgent = false) => {
    signaller.queue({
      controller: CONTROLLER, workflow: disruptionWorkflow, kind: 'PodDisruptionBudget', namespace: b.namespace, name: b.name, uid: b.uid,
      args: { namespace: b.namespace, name: b.name, uid: b.uid, tuning: input.tuning }, workflowId: disruptionWorkflowId(b.namespace, b.name),
    }, event, mergePdbEvents, urgent);
  };
  const selected = (b: PdbView): PdbPodView[] =>
    pods.byIndex(BY_NAMESPACE, b.namespace).filter((p) => selectorMatches(b.selector, p.metadata?.labels)).map(pdbPodView);
  const full = (b: PdbView) => send(b, { pdb: b, pods: selected(b), allPods: true });
  // each budget on its own: one the route throws on leaves the others their full view
  const fullAll = pdbs.eachObject((o) => full(pdbView(o)));
  /** the budgets whose selector matches these labels, by name (upstream picks one of them arbitrarily) */
  const budgetsFor = (namespace: string, labels: Record<string, string> | undefined): PdbView[] =>
    pdbs.byIndex(BY_NAMESPACE, namespace).map(pdbView).filter((b) => selectorMatches(b.selector, labels)).sort((a, b) => (a.name < b.name ? -1 : 1));

  /*
   * Every eviction marks its pod and deletes it a moment later, so a mark is first held here and
   * gets a workflow only if the pod is still marked and not deleted after MARK_SETTLE_MS: no
   * workflow per eviction. A relist brings back the marks a replaced informer forgot.
   */
  const heldMarks = new Map<string, { pod: StaleConditionPod; seenAt: number }>();
  /** marks a workflow is timing: their pod's deletion (or unmarking) ends it early */
  const timedMarks = new Set<string>();
  const sendMark = (pod: StaleConditionPod, event: StaleDisruptionTargetEvent) => {
    signaller.queue({
      controller: CONTROLLER, workflow: staleDisruptionTargetWorkflow, kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid,
      args: { pod, tuning: input.tuning }, workflowId: staleDisruptionTargetWorkflowId(pod.namespace, pod.name),
    }, event, mergeStalePodEvents);
  };
  const watchStale = (o: KubeObject, gone = false) => {
    const pod = staleConditionPod(o);
    const stale = !gone && staleConditionWaitMs(disruptionTargetView(o), Date.now()) !== undefined;
    if (!stale) {
      heldMarks.delete(pod.uid);
      if (timedMarks.delete(pod.uid)) sendMark(pod, { resolved: true });
    } else if (timedMarks.has(pod.uid)) {
      sendMark(pod, { pod });
    } else {
      heldMarks.set(pod.uid, { pod, seenAt: heldMarks.get(pod.uid)?.seenAt ?? Date.now() });
    }
  };

  pdbs.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        send(pdbView(ev.old), { pdbGone: true });
        return;
      }
      // a list ends in every budget's full view once the pods are listed too
      if (ev.source !== 'watch' || !pods.synced) return;
      const b = pdbView(ev.obj);
      if (ev.type === 'added' || !sameSelector(pdbView(ev.old), b)) full(b);
      else send(b, { pdb: b });
    },
    onListed() {
      if (pods.synced) fullAll();
    },
  });

  /** pods already reported as selected by several budgets: upstream warns on every event of such a pod, here once */
  const warnedShared = new Set<string>();

  pods.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') watchStale(ev.old, true);
      else watchStale(ev.obj);
      if (ev.source !== 'watch' || !pdbs.synced) return;
      const before = ev.type === 'added' ? undefined : ev.old;
      const after = ev.type === 'deleted' ? undefined : ev.obj;
      const ns = (after ?? before)!.metadata?.namespace ?? '';
      const name = (after ?? before)!.metadata?.name ?? '';
      if (!after) {
        warnedShared.delete(before!.metadata?.uid ?? '');
        for (const b of budgetsFor(ns, before!.metadata?.labels)) send(b, { podsGone: [name] }, true);
        return;
      }
      const view = pdbPodView(after);
      const now = budgetsFor(ns, after.metadata?.labels);
      // upstream picks one of the budgets arbitrarily and warns on the pod; here the first by name does
      const shared = now.length > 1 && !warnedShared.has(view.uid) ? [{ name, uid: view.uid }] : undefined;
      if (shared) warnedShared.add(view.uid);
      const unchanged = before && samePod(pdbPodView(before), view) && JSON.stringify(before.metadata?.labels ?? {}) === JSON.stringify(after.metadata?.labels ?? {});
      if (unchanged) {
        if (shared) send(now[0], { shared });
        return;
      }
      now.forEach((b, i) => send(b, { pods: [view], ...(i === 0 && shared ? { shared } : {}) }, !view.ready || view.deleting));
      const kept = new Set(now.map((b) => b.uid));
      for (const b of before ? budgetsFor(ns, before.metadata?.labels) : []) if (!kept.has(b.uid)) send(b, { podsGone: [name] }, true);
    },
    onListed() {
      if (pdbs.synced) fullAll();
    },
  });

  return {
    // a PDB gone while no watch ran: told of its deletion as the watch would have told it
    sweeps: [{ controller: CONTROLLER, kind: 'PodDisruptionBudget', store: pdbs, reobserve: () => ({ pdbGone: true } satisfies PdbEvent) }],
    sizes: () => ({ sharedPodsWarned: warnedShared.size, heldMarks: heldMarks.size, timedMarks: timedMarks.size }),
    periodic: {
      everyMs: MARK_SETTLE_MS / 2,
      run(nowMs) {
        for (const [uid, { pod, seenAt }] of heldMarks) {
          if (nowMs - seenAt < MARK_SETTLE_MS) continue;
          heldMarks.delete(uid);
          timedMarks.add(uid);
          sendMark(pod, { pod });
        }
      },
    },
  };
}
