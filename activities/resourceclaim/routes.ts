import type { RouteContext } from '../../workers/descriptor';
import {
  CONTROLLER,
  consumerFate,
  isPodConsumer,
  namedClaims,
  planClaim,
  planWrites,
  podNeedsClaims,
  podNeedsWork,
  type ConsumerFate,
} from '../../workflows/resourceclaim/logic';
import {
  mergeNudges,
  resourceClaimPodWorkflow,
  resourceClaimPodWorkflowId,
  resourceClaimWorkflow,
  resourceClaimWorkflowId,
  type ResourceClaimWorkflowInput,
} from '../../workflows/resourceclaim/workflow';
import type { RouteFamily } from '../informers/family';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { CLAIM_FIELDS, CLAIM_POD_FIELDS, PODS_BY_RESOURCE_CLAIM, claimPodView, claimView } from './projections';

/** upstream's deletedObjects: the UIDs of pods seen deleted, so their reservations go without a doubt */
const DELETED_PODS_KEPT = 500;

/**
 * Routes of the resource claim controller, as upstream's handlers queue keys: a pod (added,
 * updated, deleted) that has claim entries queues its claims when it no longer needs them and
 * itself when it has work (podNeedsWork); a claim added or updated queues itself, and it and a
 * deleted claim queue the pods that name it. Upstream's sync of a claim then decides whether to
 * write; here that decision is made where the informer is, and a workflow starts only when a
 * write is due — the workflow decides again from the API server before writing. Nothing is judged
 * before pods and claims are both listed.
 */
export function resourceClaimRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const pods = cache.watch(RESOURCES.pods, CLAIM_POD_FIELDS);
  pods.addIndex(PODS_BY_RESOURCE_CLAIM);
  const claims = cache.watch(RESOURCES.resourceClaims, CLAIM_FIELDS);
  const ready = () => pods.synced && claims.synced;
  const deletedPods = new Set<string>();
  const rememberDeleted = (uid: string) => {
    deletedPods.delete(uid);
    deletedPods.add(uid);
    if (deletedPods.size > DELETED_PODS_KEPT) deletedPods.delete(deletedPods.values().next().value as string);
  };

  const queueClaim = (namespace: string, name: string, uid: string, reason: string) => {
    const args: ResourceClaimWorkflowInput = { namespace, name, tuning: input.tuning };
    signaller.queue({ controller: CONTROLLER, workflow: resourceClaimWorkflow, kind: 'ResourceClaim', namespace, name, uid, args,
      workflowId: resourceClaimWorkflowId(namespace, name) }, { reason }, mergeNudges, true);
  };

  const judgeClaim = (o: KubeObject) => {
    const c = claimView(o);
    const fates: Record<string, ConsumerFate> = {};
    for (const r of c.reservedFor) {
      if (!isPodConsumer(r)) continue;
      const p = pods.getByName(c.namespace, r.name);
      // a pod the cache does not have is taken as gone here; the workflow asks the API server
      fates[r.uid] = deletedPods.has(r.uid) ? 'gone' : consumerFate(r, p ? claimPodView(p) : undefined);
    }
    const ownerName = c.controllerPods[0]?.name;
    const owner = ownerName ? pods.getByName(c.namespace, ownerName) : undefined;
    const plan = planClaim(c, fates, owner ? claimPodView(owner) : undefined);
    if (!planWrites(plan)) return;
    const why = plan.delete ? 'generated for a pod that will not run' : plan.status ? 'reserved for a pod that is gone or done' : 'deleted and unused';
    queueClaim(c.namespace, c.name, c.uid, why);
  };

  const judgePod = (o: KubeObject, deleted: boolean) => {
    const pod = claimPodView(o);
    if (pod.claims.length === 0) return;
    if (deleted) rememberDeleted(pod.uid);
    if (!podNeedsClaims(pod, deleted).needs) {
      for (const n of namedClaims(pod)) {
        const c = n ? claims.getByName(pod.namespace, n) : undefined;
        if (c) judgeClaim(c);
      }
    }
    if (deleted) return;
    const work = podNeedsWork(pod, (n) => {
      const c = claims.getByName(pod.namespace, n);
      return c ? claimView(c) : undefined;
    });
    if (!work.needs) return;
    const args: ResourceClaimWorkflowInput = { namespace: pod.namespace, name: pod.name, tuning: input.tuning };
    signaller.queue({ controller: CONTROLLER, workflow: resourceClaimPodWorkflow, kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid, args,
      workflowId: resourceClaimPodWorkflowId(pod.namespace, pod.name) }, { reason: work.reason }, mergeNudges, true);
  };

  const podsNaming = (o: KubeObject) => {
    const m = o.metadata ?? {};
    for (const p of pods.byIndex(PODS_BY_RESOURCE_CLAIM, `${m.namespace ?? ''}/${m.name ?? ''}`)) judgePod(p, false);
  };

  // each object on its own: one the route throws on leaves the others judged
  const eachClaim = claims.eachObject(judgeClaim);
  const eachPod = pods.eachObject((p) => judgePod(p, false));
  const judgeAll = () => {
    if (!ready()) return;
    eachClaim();
    eachPod();
  };

  pods.subscribe({
    onEvent(ev) {
      if (!ready() || ev.source === 'list') return;
      if (ev.type === 'deleted') judgePod(ev.old, true);
      else judgePod(ev.obj, false);
    },
    onListed: judgeAll,
  });

  claims.subscribe({
    onEvent(ev) {
      if (!ready() || ev.source === 'list') return;
      if (ev.type === 'deleted') {
        podsNaming(ev.old);
        return;
      }
      judgeClaim(ev.obj);
      podsNaming(ev.obj);
    },
    onListed: judgeAll,
  });

  return {};
}
