import type { RouteContext } from '../../workers/descriptor';
import { CONTROLLER, claimsDue, type Claims, type EphemeralPodView } from '../../workflows/ephemeral-volume/logic';
import {
  ephemeralVolumeWorkflow,
  ephemeralVolumeWorkflowId,
  mergeEphemeralVolumeEvents,
  type EphemeralVolumeEvent,
  type EphemeralVolumeWorkflowInput,
} from '../../workflows/ephemeral-volume/workflow';
import type { RouteFamily } from '../informers/family';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { PODS_BY_CLAIM } from '../pvc-protection/projections';
import { EPHEMERAL_POD_FIELDS, EPHEMERAL_PVC_FIELDS, claimState, ephemeralPodView } from './projections';

/**
 * Routes of the ephemeral volume controller, as upstream's handlers queue pods: a pod when it is
 * added (a pod's volumes never change, so updates are dropped), and the pods that name a claim
 * when the claim is deleted (it is created again). Upstream's sync then looks each claim up in
 * its claim informer; here that lookup is made where the informer is, and a pod goes to its
 * workflow only when a claim is missing or not the pod's, with what the watch knows of each.
 * Nothing is judged before pods and claims are both listed, as upstream waits for both caches.
 */
export function ephemeralVolumeRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const pods = cache.watch(RESOURCES.pods, EPHEMERAL_POD_FIELDS);
  pods.addIndex(PODS_BY_CLAIM);
  const pvcs = cache.watch(RESOURCES.persistentVolumeClaims, EPHEMERAL_PVC_FIELDS);
  const ready = () => pods.synced && pvcs.synced;

  const claimsOf = (pod: EphemeralPodView): Claims => {
    const out: Claims = {};
    for (const v of pod.volumes) {
      const c = pvcs.getByName(pod.namespace, v.claim);
      out[v.claim] = c ? claimState(c) : null;
    }
    return out;
  };

  const judge = (o: KubeObject) => {
    const pod = ephemeralPodView(o);
    if (pod.volumes.length === 0) return;
    const claims = claimsOf(pod);
    if (!claimsDue(pod, claims)) return;
    const args: EphemeralVolumeWorkflowInput = { namespace: pod.namespace, name: pod.name, uid: pod.uid, tuning: input.tuning };
    const event: EphemeralVolumeEvent = { pod, claims };
    signaller.queue({ controller: CONTROLLER, workflow: ephemeralVolumeWorkflow, kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid,
      args, workflowId: ephemeralVolumeWorkflowId(pod.namespace, pod.name) }, event, mergeEphemeralVolumeEvents);
  };
  const judgeAll = () => {
    if (ready()) for (const o of pods.list()) judge(o);
  };

  pods.subscribe({
    onEvent(ev) {
      // a pod's volumes never change, so only its add counts; a (re)list is judged whole once it is in
      if (ev.type !== 'added' || ev.source !== 'watch' || !ready()) return;
      judge(ev.obj);
    },
    onListed: judgeAll,
  });

  pvcs.subscribe({
    onEvent(ev) {
      if (ev.type !== 'deleted' || ev.source !== 'watch' || !ready()) return;
      const m = ev.old.metadata ?? {};
      for (const p of pods.byIndex(PODS_BY_CLAIM, `${m.namespace ?? ''}/${m.name ?? ''}`)) judge(p);
    },
    onListed: judgeAll,
  });

  return {};
}
