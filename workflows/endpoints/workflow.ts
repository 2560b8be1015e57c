import { proxyActivities } from '@temporalio/workflow';
import type { EndpointsActivities } from '../../activities/endpoints/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { ServicePods } from '../service-endpoints/state';
import type { ServicePodsEvent } from '../service-endpoints/types';
import { TriggerState, computeTriggerTime, desiredSubsets, planEndpoints, writeFingerprint } from './logic';
import { API_WRITES } from '../runtime/activity-options';

/** State a run hands to the next across continue-as-new; the pods are read again instead. */
export interface EndpointsCarry {
  /** upstream's trigger-time tracker for this Service, and the UID it belongs to */
  trigger?: TriggerState;
  triggerUid?: string;
  /** fingerprint of what the Endpoints was last known to say */
  written?: string;
}

export interface EndpointsWorkflowInput {
  namespace: string;
  name: string;
  /** the Service this run belongs to, when the starter knew it */
  uid?: string;
  tuning?: Partial<LoopTuning>;
  carry?: EndpointsCarry;
}

export const endpointsWorkflowId = (namespace: string, name: string) => `endpoints/${namespace}/${name}`;

const io = proxyActivities<EndpointsActivities>(API_WRITES);

/**
 * One Service's Endpoints: the watch folds the Service and its pods into this workflow; each
 * reconcile computes the Endpoints as upstream would and writes only when that differs from what
 * was last written (a live comparison runs on Service events, timers and after failures).
 */
export async function endpointsWorkflow(input: EndpointsWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const key = { namespace: input.namespace, name: input.name };
  const state = new ServicePods();
  // serves whichever Service holds the name: a new one is followed in this run, not handed over
  const id = objectIdentity(input.uid);
  let trigger = input.carry?.trigger;
  let triggerUid = input.carry?.triggerUid;
  let written = input.carry?.written;
  /** the pods are not known completely (a new run, or one started by a partial event) */
  let needObserve = true;
  /** compare with the live object even if nothing we compute changed */
  let check = true;
  let signalled = false;

  // objectIdentity publishes now; this call stays for runs recorded before it did (it is a no-op after)
  id.publish();

  async function observe(): Promise<void> {
    let cont: string | undefined;
    const first = await io.observeServiceEndpoints({ ...key });
    const pods = [...first.pods];
    cont = first.continue;
    while (cont) {
      const page = await io.observeServiceEndpoints({ ...key, continue: cont, selector: first.service?.selector });
      pods.push(...page.pods);
      cont = page.continue;
    }
    if (first.service) state.apply({ service: first.service, pods, relist: true });
    else state.apply({ serviceDeletedUid: state.service?.uid ?? 'absent' });
    needObserve = false;
    check = true;
  }

  async function reconcile(): Promise<ReconcileResult> {
    // a timer, not an event: the periodic resync, a requeue or a retry compares with the live object
    if (!signalled) check = true;
    signalled = false;
    if (needObserve && !state.deleted) await observe();

    if (state.deleted || !state.service) {
      const r = await io.deleteEndpoints({ ...key, reason: 'the Service is gone' });
      if (r.outcome === 'serviceExists' || r.outcome === 'conflict') {
        needObserve = true;
        state.deleted = false;
        return { requeueAfterMs: 0 };
      }
      return { finished: true };
    }

    const svc = state.service;
    id.follow(svc.uid);
    if (triggerUid !== svc.uid) {
      // a Service new to us under this name: upstream's tracker forgets a deleted Service
      trigger = undefined;
      written = undefined;
      triggerUid = svc.uid;
    }
    // Services without a selector get their Endpoints from someone else; the watch starts a
    // new run if one gains a selector or is deleted
    if (!svc.selector) return { finished: true };
    if (svc.type === 'ExternalName') return {};

    const pods = state.sortedPods();
    const t = computeTriggerTime(trigger, svc, pods);
    trigger = t.state;
    const plan = planEndpoints(svc, desiredSubsets(svc, pods), t.time);
    const fp = writeFingerprint(plan);
    if (fp === written && !check && !plan.overCapacity) return {};

    const r = await io.syncEndpoints(plan);
    check = false;
    switch (r.outcome) {
      case 'created':
      case 'updated':
      case 'unchanged':
        written = fp;
        return {};
      case 'skipped':
        written = undefined;
        return {};
      case 'conflict':
        written = undefined;
        check = true;
        return { requeueAfterMs: 0 };
      case 'failed':
        written = undefined;
        return { failed: true };
    }
  }

  await runObjectLoop<ServicePodsEvent>({
    controller: 'endpoint',
    tuning,
    reread() {
      // --shadow: what it wrote was a dry run; compare with the live object next time
      written = undefined;
      check = true;
    },
    apply(e) {
      signalled = true;
      state.apply(e);
      if (e.relist && e.service) needObserve = false;
      // a Service event (or a relist) is when upstream would look at the Endpoints afresh
      if (e.service) check = true;
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid, carry: { trigger, triggerUid, written } } satisfies EndpointsWorkflowInput],
    // a new run starts with needObserve: its first reconcile reads the Service, its pods and its Endpoints
    rereadsOnNewRun: true,
  });
}
