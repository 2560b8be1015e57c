import type { RouteContext } from '../../workers/descriptor';
import { laterView, protectionNeed } from '../../workflows/common/storage-protection';
import { CONTROLLER, claimsFreedBy, podUsingPvc, type PvcView } from '../../workflows/pvc-protection/logic';
import { pvcProtectionWorkflow, pvcProtectionWorkflowId, type PvcProtectionEvent, type PvcProtectionWorkflowInput } from '../../workflows/pvc-protection/workflow';
import type { RouteFamily } from '../informers/family';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { CLAIM_POD_FIELDS, PODS_BY_CLAIM, PVC_PROTECTION_FIELDS, pvcPodView, pvcView } from './projections';

/**
 * Routes of the PVC protection controller. Upstream queues a claim on each of its add and update
 * events that needs the finalizer added or is a deletion candidate, and the claims a pod names
 * when the pod is deleted, terminated or not scheduled; its sync then asks its pod informer
 * (through the pod-PVC index) whether a pod uses the claim before it lists pods live. Here the
 * informer question is asked where the informer is: a deletion candidate that a pod in the watch
 * uses starts no workflow (upstream's sync would keep it and stop), and the pod event that frees
 * it queues it again. Nothing is judged before both claims and pods are listed, as upstream
 * waits for both caches.
 */
export function pvcProtectionRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const pvcs = cache.watch(RESOURCES.persistentVolumeClaims, PVC_PROTECTION_FIELDS);
  const pods = cache.watch(RESOURCES.pods, CLAIM_POD_FIELDS);
  pods.addIndex(PODS_BY_CLAIM);
  const ready = () => pvcs.synced && pods.synced;

  const send = (pvc: PvcView) => {
    const args: PvcProtectionWorkflowInput = { namespace: pvc.namespace, name: pvc.name, uid: pvc.uid, tuning: input.tuning };
    const event: PvcProtectionEvent = { pvc };
    signaller.queue({ controller: CONTROLLER, workflow: pvcProtectionWorkflow, kind: 'PersistentVolumeClaim', namespace: pvc.namespace, name: pvc.name,
      uid: pvc.uid, args, workflowId: pvcProtectionWorkflowId(pvc.namespace, pvc.name) }, event, laterView<PvcProtectionEvent>);
  };

  /** upstream's processPVC up to the live list: decided here when the watch alone can decide */
  const judge = (o: KubeObject) => {
    const pvc = pvcView(o);
    const need = protectionNeed(pvc);
    if (need === 'none') return;
    if (need === 'check-use') {
      const users = pods.byIndex(PODS_BY_CLAIM, `${pvc.namespace}/${pvc.name}`).map(pvcPodView);
      if (podUsingPvc(users, pvc)) return;
    }
    send(pvc);
  };
  // each claim on its own: one the route throws on leaves the others judged
  const eachClaim = pvcs.eachObject(judge);
  const judgeAll = () => {
    if (ready()) eachClaim();
  };

  pvcs.subscribe({
    onEvent(ev) {
      // upstream has no delete handler: a deleted claim needs nothing; a (re)list is judged whole once it is in
      if (ev.type === 'deleted' || ev.source !== 'watch' || !ready()) return;
      judge(ev.obj);
    },
    onListed: judgeAll,
  });

  const judgeClaims = (namespace: string, claims: readonly string[]) => {
    for (const claim of claims) {
      const o = pvcs.getByName(namespace, claim);
      if (o) judge(o);
    }
  };

  pods.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'deleted') {
        const pod = pvcPodView(ev.old);
        judgeClaims(pod.namespace, claimsFreedBy(pod, true));
        return;
      }
      const pod = pvcPodView(ev.obj);
      judgeClaims(pod.namespace, claimsFreedBy(pod, false));
    },
    onListed: judgeAll,
  });

  return {};
}
