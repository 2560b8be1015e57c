import { proxyActivities } from '@temporalio/workflow';
import type { EndpointSliceActivities } from '../../activities/endpointslice/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { ServicePods } from '../service-endpoints/state';
import type { ServicePodsEvent } from '../service-endpoints/types';
import { describePlan, isEmptyPlan, isManaged, planEndpointSlices, triggerTime } from './logic';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, type ServiceRef, type SliceView, type TriggerState } from './types';
import { API_BATCHES } from '../runtime/activity-options';

export interface EndpointSliceWorkflowInput {
  namespace: string;
  name: string;
  /** the Service this run belongs to; a run started by a signal learns it from the first event */
  uid?: string;
  maxEndpointsPerSlice?: number;
  tuning?: Partial<LoopTuning>;
  /** set on continue-as-new: the pods are not carried along, the first reconcile reads them */
  resumed?: boolean;
  /** pods' trigger times at the last reconcile, carried across continue-as-new while small */
  trigger?: TriggerState;
}

export function endpointSliceWorkflowId(namespace: string, name: string): string {
  return `endpointslice/${namespace}/${name}`;
}

/** Beyond this many pods the trigger-time memory is dropped on continue-as-new (its first write then reports the Service's creation, as after an upstream restart). */
const MAX_CARRIED_TRIGGER_PODS = 2000;

const io = proxyActivities<EndpointSliceActivities>(API_BATCHES);

/**
 * One Service's EndpointSlices. The pods come from the watch (signals); the slices this controller
 * stored are read through an activity when the run starts, after a relist, a resync timer, a failed
 * or conflicting write, and are otherwise known from the writes' own results: a pod's readiness
 * flip costs one update and no read. Slices are not deleted with the Service: their owner reference
 * hands them to the garbage collector, as upstream.
 */
export async function endpointSliceWorkflow(input: EndpointSliceWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const max = input.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  const key = { namespace: input.namespace, name: input.name };
  const state = new ServicePods();
  // A new Service under the name: its own run, with none of this one's memory.
  const id = objectIdentity<typeof endpointSliceWorkflow>(input.uid, (next) => [nextRun(next, false)]);
  /** the pods map is complete: a relist arrived, or they were read */
  let podsKnown = false;
  /** undefined: read them before deciding */
  let slices: SliceView[] | undefined;
  let trigger = input.trigger;
  let signalled = false;

  function nextRun(nextUid: string | undefined, carry: boolean): EndpointSliceWorkflowInput {
    const small = carry && trigger && Object.keys(trigger.pods).length <= MAX_CARRIED_TRIGGER_PODS;
    const next: EndpointSliceWorkflowInput = { namespace: input.namespace, name: input.name, resumed: true };
    if (nextUid) next.uid = nextUid;
    if (input.maxEndpointsPerSlice !== undefined) next.maxEndpointsPerSlice = input.maxEndpointsPerSlice;
    if (input.tuning) next.tuning = input.tuning;
    if (small) next.trigger = trigger;
    return next;
  }

  async function reconcile(): Promise<ReconcileResult> {
    // woken by a timer (resync or backoff), not by the watch: the slices may have drifted
    if (!signalled) slices = undefined;
    signalled = false;
    if (state.deleted) return { finished: true };

    if (!state.service || !podsKnown) {
      const read = await io.readServicePods(key);
      if (!read.service) return { finished: true };
      state.apply({ service: read.service, pods: read.pods, relist: true });
      podsKnown = true;
    }
    const svc = state.service!;
    await id.handOverIfNew(svc.uid);
    id.learn(svc.uid);
    if (!isManaged(svc)) {
      slices = undefined;
      return {};
    }

    slices ??= await io.observeEndpointSlices(key);
    const pods = state.sortedPods();
    const t = triggerTime(trigger, svc, pods);
    trigger = t.state;
    const plan = planEndpointSlices(svc, pods, slices, { maxEndpointsPerSlice: max, ...(t.time ? { triggerTime: t.time } : {}) });
    if (isEmptyPlan(plan)) return {};

    const service: ServiceRef = { namespace: svc.namespace, name: svc.name, uid: svc.uid, resourceVersion: svc.resourceVersion };
    const reason = `${pods.length} selected pods: ${describePlan(plan)}`;
    let known = slices;
    try {
      if (plan.create.length) {
        const r = await io.createEndpointSlices({ service, slices: plan.create, knownNames: known.map((s) => s.name), reason });
        known = [...known, ...r.created];
        slices = known;
        // the namespace is going away: nothing more to do, as upstream
        if (r.namespaceTerminating) return {};
        if (r.failure) return { failed: true };
      }
      if (plan.update.length) {
        const r = await io.updateEndpointSlices({ service, slices: plan.update, reason });
        const fresh = new Map(r.updated.map((s) => [s.name, s]));
        known = known.map((s) => fresh.get(s.name) ?? s);
        slices = known;
        if (r.conflict) {
          slices = undefined;
          return { requeueAfterMs: 0 };
        }
        if (r.failure) return { failed: true };
      }
      if (plan.delete.length) {
        const r = await io.deleteEndpointSlices({ service, slices: plan.delete, reason });
        const gone = new Set(r.deleted);
        known = known.filter((s) => !gone.has(s.name));
        slices = known;
        if (r.failure) return { failed: true };
      }
    } catch (err) {
      // a write that gave up may have half happened: read before deciding again
      slices = undefined;
      throw err;
    }
    return {};
  }

  await runObjectLoop<ServicePodsEvent>({
    controller: 'endpointslice',
    tuning,
    reread() {
      // --shadow: the slices it wrote were dry runs
      slices = undefined;
    },
    apply(e) {
      signalled = true;
      if (e.relist) {
        podsKnown = true;
        slices = undefined; // events may have been missed, the slices' among them
      }
      state.apply(e);
    },
    reconcile,
    continueAsNewArgs: () => [nextRun(id.uid, true)],
    // a new run starts with podsKnown false and no slices: its first reconcile reads the Service,
    // its pods and its slices
    rereadsOnNewRun: true,
  });
}
