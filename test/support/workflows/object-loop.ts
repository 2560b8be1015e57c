import { patched, proxyActivities } from '@temporalio/workflow';
import { DEFAULT_TUNING, LoopTuning, runObjectLoop } from '../../../workflows/runtime/object-loop';
import { objectIdentity } from '../../../workflows/runtime/identity';
import type { ThrownReport } from '../../../workflows/runtime/api-rejections';

/**
 * The smallest per-object workflow: runObjectLoop with the identity helper, shaped like the real
 * controllers (observe, hand over to a new run on a new UID, learn the UID, reconcile), with a
 * fake "API" the test drives through in-process activities. test/workflow/object-loop.test.ts
 * runs it on the Temporal dev server.
 */

/** What the fake API says about the probe's object. */
export interface ProbeObservation {
  /** absent: the object is gone and the run ends */
  uid?: string;
  /** the reconcile fails with this error */
  fail?: string;
  /** the object needs nothing more: an episode run ends here */
  done?: boolean;
  /** the observation takes this long (a signal can arrive meanwhile) */
  holdMs?: number;
  /** the reconcile asks to run again after this long */
  requeueMs?: number;
  /** the workflow's own code throws a TypeError with this text once the observation is in (a bug, not a failed call) */
  throws?: string;
  /** the observing activity's own code throws a TypeError with this text, as the manager's workers pass it on (asCodeFailure) */
  activityThrows?: string;
}

export interface ProbeActivities {
  /** `applied` is the workflow's state at that reconcile: the events it has folded in so far */
  observeProbe(req: { name: string; runUid?: string; applied: string[] }): Promise<ProbeObservation>;
  /** the report every controller's worker takes when its code throws (activities/kube/failure-reports.ts) */
  reportThrown(req: ThrownReport): Promise<void>;
}

export interface ProbeEvent {
  note: string;
  /** folding this event in throws a TypeError with this text, after the note is recorded (a half-applied event) */
  throws?: string;
  /** carried and ignored: weight for a history that grows in bytes rather than events */
  ballast?: string;
}

export interface ProbeInput {
  name: string;
  uid?: string;
  tuning?: Partial<LoopTuning>;
  /** set KcmUid to the run's UID at the start (a run handed over inherits its predecessor's) */
  publish?: boolean;
  /** state carried across continue-as-new: the events folded in so far */
  applied?: string[];
  /** how many times this object's run continued as new because its history grew long */
  generation?: number;
  /** an episode workflow: ends once the object is done, after the signals that came meanwhile */
  episode?: boolean;
  /** the loop's rereadsOnNewRun (the probe observes at every reconcile, and carries what it applied) */
  rereads?: boolean;
  /** the loop carries signals (ObjectLoop.carries) */
  carries?: boolean;
  /** signals a run carried into this one (the loop's carried) */
  carriedSignals?: ProbeEvent[];
}

export const PROBE_CONTROLLER = 'probe';

const io = proxyActivities<ProbeActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 1 } });

export async function objectLoopProbeWorkflow(input: ProbeInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const applied = [...(input.applied ?? [])];
  const generation = input.generation ?? 0;
  // a new object under the name: a fresh run with none of this one's state
  const id = objectIdentity<typeof objectLoopProbeWorkflow>(input.uid, (next) => [
    { name: input.name, uid: next, tuning: input.tuning, publish: input.publish },
  ]);
  if (input.publish) id.publish();
  /** when the last requeue asked to be woken, and each wake's due time told to onWake less that */
  let askedWakeAt: number | undefined;
  const wakes: string[] = [];
  /** how many of this run's wakes the loop called a resync */
  let resyncs = 0;

  await runObjectLoop<ProbeEvent>({
    controller: PROBE_CONTROLLER,
    tuning,
    // as a patched() check, as a controller that adopts draining takes it up: asked only when signals are pending
    drainBeforeFinish: input.episode ? () => patched('probe-drains-before-finish') : false,
    rereadsOnNewRun: input.rereads,
    ...(input.carries ? { carries: input } : {}),
    apply(e) {
      applied.push(e.note);
      if (e.throws) throw new TypeError(e.throws);
    },
    async reconcile() {
      const seen = await io.observeProbe({ name: input.name, runUid: id.uid, applied });
      if (!seen.uid) return { finished: true };
      await id.handOverIfNew(seen.uid);
      id.learn(seen.uid);
      if (seen.fail) return { failed: true, error: seen.fail };
      if (seen.throws) throw new TypeError(seen.throws);
      if (seen.requeueMs !== undefined) {
        askedWakeAt = Date.now() + seen.requeueMs;
        return { requeueAfterMs: seen.requeueMs };
      }
      return seen.done ? { finished: true } : {};
    },
    onWake: (dueAt) => {
      wakes.push(askedWakeAt === undefined ? 'unasked' : String(dueAt - askedWakeAt));
    },
    onResync: () => {
      resyncs++;
    },
    continueAsNewArgs: () => [{ ...input, uid: id.uid, applied, generation: generation + 1 } satisfies ProbeInput],
    describe: () => ({ uid: id.uid, applied, generation, wakes, resyncs }),
  });
}
