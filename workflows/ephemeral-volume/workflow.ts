import { log, proxyActivities } from '@temporalio/workflow';
import type { EphemeralVolumeActivities } from '../../activities/ephemeral-volume/activities';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER,
  type Claims,
  type EphemeralPodView,
  createFailedMessage,
  failureEventMessage,
  nextStep,
  wantsClaims,
} from './logic';

/** What the watch sends: the pod's ephemeral volumes and what the watch knows of their claims. */
export interface EphemeralVolumeEvent {
  pod: EphemeralPodView;
  claims: Claims;
}

export interface EphemeralVolumeWorkflowInput {
  namespace: string;
  name: string;
  /** the pod this run creates claims for; a pod recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function ephemeralVolumeWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

/** The later view of the pod wins; claim states add up, the later one winning per claim. */
export function mergeEphemeralVolumeEvents(earlier: EphemeralVolumeEvent, later: EphemeralVolumeEvent): EphemeralVolumeEvent {
  return { pod: later.pod, claims: { ...earlier.claims, ...later.claims } };
}

// a replica killed mid-create is noticed in 5 s, not after a minute; each call is one quick request
const io = proxyActivities<EphemeralVolumeActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this pod's ephemeral volumes lack their claims": started by the watch when a pod
 * with a generic ephemeral volume appears (or one of its claims is deleted) and a claim is
 * missing or not the pod's. Claims are created in volume order; the first failure is recorded as
 * upstream's FailedBinding Warning on the pod and retried with backoff, each retry reading the pod
 * and its claims afresh. The run ends once every claim exists and is the pod's, or the pod is
 * gone or being deleted.
 */
export async function ephemeralVolumeWorkflow(input: EphemeralVolumeWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof ephemeralVolumeWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
  let pod: EphemeralPodView | undefined;
  let claims: Claims = {};
  /** the view came from a signal since the last reconcile; otherwise (a retry) it is read afresh */
  let fresh = false;
  let created = 0;
  let failing = '';

  async function reconcile(): Promise<ReconcileResult> {
    if (!fresh || !pod) {
      const seen = await io.observeEphemeralPod({ namespace: input.namespace, name: input.name });
      if (!seen.pod) return { finished: true };
      pod = seen.pod;
      claims = seen.claims;
    }
    fresh = false;
    await id.handOverIfNew(pod.uid);
    id.learn(pod.uid);
    if (!wantsClaims(pod)) return { finished: true };

    for (;;) {
      const step = nextStep(pod, claims);
      if (!step) {
        failing = '';
        return { finished: true };
      }
      let error: string;
      if (step.kind === 'foreign') {
        error = step.message;
      } else {
        const r = await io.createEphemeralClaim({
          reason: `ephemeral volume ${step.volume.name} of the pod has no claim ${step.volume.claim}`,
          namespace: pod.namespace, pod: pod.name, podUid: pod.uid, volume: step.volume.name, claim: step.volume.claim, template: step.volume.template,
        });
        if (r.outcome !== 'rejected') {
          claims = { ...claims, [step.volume.claim]: { uid: r.uid, controllerUid: pod.uid } };
          if (r.outcome === 'created') created++;
          continue;
        }
        error = createFailedMessage(step.volume.claim, r.message);
      }
      failing = failureEventMessage(step.volume.name, error);
      await io.recordEphemeralVolumeFailure({ namespace: pod.namespace, pod: pod.name, podUid: pod.uid, message: failing });
      log.warn('ephemeral volume sync failed', { volume: step.volume.name, error });
      return { failed: true, error: `pod ${pod.namespace}/${pod.name}, ${failing}` };
    }
  }

  await runObjectLoop<EphemeralVolumeEvent>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      pod = e.pod;
      claims = { ...claims, ...e.claims };
      fresh = true;
    },
    reconcile,
    describe: () => ({
      pod: pod ? `${pod.namespace}/${pod.name}` : undefined,
      volumes: pod?.volumes.map((v) => v.name),
      claimsMissing: pod?.volumes.filter((v) => !claims[v.claim]).map((v) => v.claim),
      created,
      failing: failing || undefined,
    }),
    continueAsNewArgs: () => [input],
  });
}
