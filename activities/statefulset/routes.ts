import type { RouteContext } from '../../workers/descriptor';
import { controllerRef } from '../../workflows/common/controller-ref';
import { selectorMatches } from '../../workflows/common/selector';
import type { StatefulSetEvent } from '../../workflows/statefulset/types';
import { CONTROLLER, isMemberOf } from '../../workflows/statefulset/utils';
import { mergeStatefulSetEvents, statefulSetWorkflow, statefulSetWorkflowId } from '../../workflows/statefulset/workflow';
import type { RouteFamily } from '../informers/family';
import { BY_NAMESPACE } from '../informers/indexes';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { STATEFULSET_FIELDS, STATEFUL_POD_FIELDS, statefulPodView } from './projections';

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What of a StatefulSet a sync depends on: everything but its status (which the sync writes) and its version. */
const setSpecAndMeta = (o: KubeObject) => {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (o.metadata ?? {}) as Record<string, unknown>;
  return { meta, spec: (o as { spec?: unknown }).spec };
};

/**
 * Routes of the StatefulSet controller, as upstream's handlers queue StatefulSets: a set to itself
 * (when it is new, listed, deleted, or anything but its status changed); a pod to its controller,
 * or as an orphan to every set in its namespace that it could belong to (the selector matches and
 * its name is a member's). Each signal only says "look again": the workflow reads the set, its
 * pods, claims and revisions afresh at every sync.
 */
export function statefulSetRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const sets = cache.watch(RESOURCES.statefulSets, STATEFULSET_FIELDS);
  sets.addIndex(BY_NAMESPACE);
  const pods = cache.watch(RESOURCES.pods, STATEFUL_POD_FIELDS);
  const synced = () => sets.synced && pods.synced;

  const send = (set: KubeObject, event: StatefulSetEvent, urgent = true) => {
    const m = set.metadata ?? {};
    const namespace = m.namespace ?? '';
    const name = m.name ?? '';
    const uid = m.uid ?? '';
    signaller.queue({
      controller: CONTROLLER, workflow: statefulSetWorkflow, kind: 'StatefulSet', namespace, name, uid,
      args: { namespace, name, uid, tuning: input.tuning }, workflowId: statefulSetWorkflowId(namespace, name),
    }, { ...event, uid }, mergeStatefulSetEvents, urgent);
  };

  /** the sets a pod concerns: its controller, or as an orphan every set that could adopt it */
  const concerned = (o: KubeObject): KubeObject[] => {
    const ns = o.metadata?.namespace ?? '';
    const name = o.metadata?.name ?? '';
    const ref = controllerRef(o.metadata?.ownerReferences);
    if (ref) {
      if (ref.kind !== 'StatefulSet') return [];
      const s = sets.getByName(ns, ref.name);
      return s && s.metadata?.uid === ref.uid ? [s] : [];
    }
    return sets.byIndex(BY_NAMESPACE, ns).filter((s) => {
      const selector = (s as { spec?: { selector?: Parameters<typeof selectorMatches>[0] } }).spec?.selector;
      return isMemberOf({ name: s.metadata?.name ?? '' }, name) && selectorMatches(selector, o.metadata?.labels);
    });
  };

  const all = () => {
    if (synced()) for (const s of sets.list()) send(s, {}, false);
  };

  sets.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        send(ev.old, { gone: true });
        return;
      }
      if (ev.source !== 'watch' || !synced()) return;
      if (ev.type === 'updated' && sameJson(setSpecAndMeta(ev.old), setSpecAndMeta(ev.obj))) return;
      send(ev.obj, {});
    },
    onListed: all,
  });

  pods.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !synced()) return;
      const oldObj = ev.type === 'added' ? undefined : ev.old;
      const newObj = ev.type === 'deleted' ? undefined : ev.obj;
      // a change nothing here decides on (most of status, annotations) is dropped
      if (oldObj && newObj && sameJson({ ...statefulPodView(oldObj), resourceVersion: '' }, { ...statefulPodView(newObj), resourceVersion: '' })) return;
      const targets = new Map<string, KubeObject>();
      for (const s of [...(oldObj ? concerned(oldObj) : []), ...(newObj ? concerned(newObj) : [])]) targets.set(s.metadata?.uid ?? '', s);
      for (const s of targets.values()) send(s, {});
    },
    onListed: all,
  });

  return {};
}
