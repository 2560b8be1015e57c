import type { RouteContext } from '../../workers/descriptor';
import { selectorMatches } from '../../workflows/common/selector';
import { CONTROLLER } from '../../workflows/daemonset/plan';
import { nodeShouldRunDaemonPod } from '../../workflows/daemonset/predicates';
import type { DaemonSetEvent, DaemonSetView, NodeVerdict } from '../../workflows/daemonset/types';
import { daemonSetWorkflow, daemonSetWorkflowId, mergeDaemonSetEvents } from '../../workflows/daemonset/workflow';
import type { RouteFamily } from '../informers/family';
import { BY_CONTROLLER_UID, BY_NAMESPACE, ORPHANS_BY_NAMESPACE } from '../informers/indexes';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { controllerRef } from '../../workflows/common/controller-ref';
import {
  DAEMONSET_FIELDS,
  DAEMON_NODE_FIELDS,
  DAEMON_POD_FIELDS,
  REVISION_FIELDS,
  daemonNodeView,
  daemonPodSpec,
  daemonPodView,
  daemonSetView,
  revisionView,
} from './projections';

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Routes of the DaemonSet controller, as upstream's handlers queue DaemonSets: a DaemonSet to
 * itself (with everything, when it is new, relisted, or its template or selector changed); a pod
 * or revision to its controller, or as an orphan to every DaemonSet whose selector matches it;
 * a node, when its labels or taints change, to every DaemonSet whose verdict for it changed. The
 * verdicts (NodeShouldRunDaemonPod) are computed here, where the nodes are, so a workflow holds a
 * verdict per node rather than the nodes.
 */
/**
 * An event too large for a payload, cut down at its send to a look again: a DaemonSet on thousands
 * of nodes, whose full event (a verdict and a pod per node) outgrows SIGNAL_BUDGET_BYTES. The
 * workflow then reads the DaemonSet, the verdicts, its pods and revisions from the API.
 */
export const shrinkDaemonSetEvent = (_event: unknown): DaemonSetEvent => ({ lookAgain: true });

export function daemonSetRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const daemonSets = cache.watch(RESOURCES.daemonSets, DAEMONSET_FIELDS);
  daemonSets.addIndex(BY_NAMESPACE);
  const nodes = cache.watch(RESOURCES.nodes, DAEMON_NODE_FIELDS);
  const pods = cache.watch(RESOURCES.pods, DAEMON_POD_FIELDS);
  pods.addIndex(BY_CONTROLLER_UID);
  pods.addIndex(ORPHANS_BY_NAMESPACE);
  const revisions = cache.watch(RESOURCES.controllerRevisions, REVISION_FIELDS);
  revisions.addIndex(BY_CONTROLLER_UID);
  revisions.addIndex(ORPHANS_BY_NAMESPACE);
  const stores = [daemonSets, nodes, pods, revisions];
  const synced = () => stores.every((s) => s.synced);

  const send = (ds: DaemonSetView, event: DaemonSetEvent, urgent = false) => {
    signaller.queue({
      controller: CONTROLLER, workflow: daemonSetWorkflow, kind: 'DaemonSet', namespace: ds.namespace, name: ds.name, uid: ds.uid,
      args: { namespace: ds.namespace, name: ds.name, uid: ds.uid, tuning: input.tuning }, workflowId: daemonSetWorkflowId(ds.namespace, ds.name),
      shrink: shrinkDaemonSetEvent,
    }, event, mergeDaemonSetEvents, urgent);
  };
  const verdict = (ds: DaemonSetView, node: KubeObject): NodeVerdict => nodeShouldRunDaemonPod(daemonNodeView(node), daemonPodSpec(ds));
  /** owned objects of a store, and the orphans the selector matches */
  const claimable = (store: typeof pods, ds: DaemonSetView) => [
    ...store.byIndex(BY_CONTROLLER_UID, ds.uid),
    ...store.byIndex(ORPHANS_BY_NAMESPACE, ds.namespace).filter((o) => selectorMatches(ds.selector, o.metadata?.labels)),
  ];
  const full = (ds: DaemonSetView) => send(ds, {
    ds,
    full: true,
    verdicts: Object.fromEntries([...nodes.list()].map((n) => [n.metadata?.name ?? '', verdict(ds, n)])),
    pods: claimable(pods, ds).map(daemonPodView),
    revisions: claimable(revisions, ds).map(revisionView),
  });
  // each DaemonSet on its own: one the route throws on leaves the others their full event
  const eachFull = daemonSets.eachObject((o) => full(daemonSetView(o)));
  const fullAll = () => {
    if (synced()) eachFull();
  };
  /** the DaemonSets an owned or orphaned object concerns: its controller, or every one whose selector matches */
  const concerned = (o: KubeObject): DaemonSetView[] => {
    const ns = o.metadata?.namespace ?? '';
    const ref = controllerRef(o.metadata?.ownerReferences);
    if (ref) {
      if (ref.kind !== 'DaemonSet') return [];
      const d = daemonSets.getByName(ns, ref.name);
      return d && d.metadata?.uid === ref.uid ? [daemonSetView(d)] : [];
    }
    return daemonSets.byIndex(BY_NAMESPACE, ns).map(daemonSetView).filter((d) => selectorMatches(d.selector, o.metadata?.labels));
  };

  daemonSets.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        send(daemonSetView(ev.old), { dsGone: true }, true);
        return;
      }
      if (ev.source !== 'watch' || !synced()) return;
      const ds = daemonSetView(ev.obj);
      const before = ev.type === 'updated' ? daemonSetView(ev.old) : undefined;
      if (!before || !sameJson(before.template, ds.template) || !sameJson(before.selector, ds.selector)) full(ds);
      else send(ds, { ds }, before.generation !== ds.generation);
    },
    onListed: fullAll,
  });

  nodes.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !synced()) return;
      const name = (ev.type === 'deleted' ? ev.old : ev.obj).metadata?.name ?? '';
      // upstream looks again only when a node's labels or taints change
      if (ev.type === 'updated' && sameJson(daemonNodeView(ev.old), daemonNodeView(ev.obj))) return;
      for (const o of daemonSets.list()) {
        const ds = daemonSetView(o);
        if (ev.type === 'deleted') {
          send(ds, { nodesGone: [name] }, true);
          continue;
        }
        const now = verdict(ds, ev.obj);
        if (ev.type === 'updated' && sameJson(verdict(ds, ev.old), now)) continue;
        send(ds, { verdicts: { [name]: now } }, true);
      }
    },
    onListed: fullAll,
  });

  for (const [store, kind] of [[pods, 'pods'], [revisions, 'revisions']] as const) {
    store.subscribe({
      onEvent(ev) {
        if (ev.source !== 'watch' || !synced()) return;
        const oldObj = ev.type === 'added' ? undefined : ev.old;
        const newObj = ev.type === 'deleted' ? undefined : ev.obj;
        const before = oldObj ? concerned(oldObj) : [];
        const after = newObj ? concerned(newObj) : [];
        const kept = new Set(after.map((d) => d.uid));
        for (const ds of after) {
          if (kind === 'pods') {
            const view = daemonPodView(newObj!);
            send(ds, { pods: [view] }, ev.type !== 'updated' || view.deleting || view.phase === 'Failed' || view.phase === 'Succeeded');
          } else {
            send(ds, { revisions: [revisionView(newObj!)] });
          }
        }
        for (const ds of before) {
          if (kept.has(ds.uid)) continue;
          if (kind === 'pods') send(ds, { podsGone: [oldObj!.metadata?.uid ?? ''] }, true);
          else send(ds, { revisionsGone: [oldObj!.metadata?.name ?? ''] });
        }
      },
      onListed: fullAll,
    });
  }

  // a DaemonSet gone while no watch ran: told of its deletion as the watch would have told it
  return { sweeps: [{ controller: CONTROLLER, kind: 'DaemonSet', store: daemonSets, reobserve: () => ({ dsGone: true } satisfies DaemonSetEvent) }] };
}
