import { proxyActivities } from '@temporalio/workflow';
import type { AttachDetachActivities } from '../../activities/attachdetach/activities';
import { API_BATCHES } from '../runtime/activity-options';
import { type CarriedSignals, DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { failOperation, initialActualState, parseCsiUniqueName, planAttachDetach, type AttachDetachStep } from './logic';
import {
  CONTROLLER,
  type AttachDetachEvent,
  type AttachDetachSettings,
  type AttachableVolume,
  type DesiredNode,
  type NodeAttachment,
} from './types';

export interface AttachDetachWorkflowInput extends CarriedSignals<AttachDetachEvent> {
  uniqueName: string;
  settings: AttachDetachSettings;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new */
  state?: AttachDetachState;
}

/** The volume's actual state of the world and the last desired state the watch sent. */
export interface AttachDetachState {
  asw: Record<string, NodeAttachment>;
  multiAttachReported: string[];
  volume?: AttachableVolume;
  desired: DesiredNode[];
}

export const attachDetachWorkflowId = (uniqueName: string) => `${CONTROLLER}/${uniqueName}`;

const io = proxyActivities<AttachDetachActivities>(API_BATCHES);

/**
 * One attachable volume, attached to the nodes its pods are scheduled on and detached from the
 * others, as upstream's attach/detach reconciler does for each volume it knows. The run starts
 * from what nodes report and which VolumeAttachments exist (as upstream's restart does), keeps
 * its actual state durably while attaches and detaches are under way, and ends once the volume is
 * where it is wanted: the watch starts a new run when that changes.
 */
export async function attachDetachWorkflow(input: AttachDetachWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const parsed = parseCsiUniqueName(input.uniqueName);
  let state: AttachDetachState | undefined = input.state;
  let latest: Pick<AttachDetachState, 'volume' | 'desired'> = { volume: state?.volume, desired: state?.desired ?? [] };
  let verify = false;
  let lastSteps: string[] = [];

  function apply(ev: AttachDetachEvent): void {
    latest = { volume: ev.volume ?? latest.volume, desired: ev.desired };
    if (ev.verify) verify = true;
  }

  async function reconcile(): Promise<ReconcileResult> {
    const volume = latest.volume;
    const driver = volume?.driver ?? parsed?.driver;
    const handle = volume?.handle ?? parsed?.handle;
    if (!driver || handle === undefined) return { failed: true, error: `${input.uniqueName} is not a CSI volume name` };
    const asked = new Set([...latest.desired.map((d) => d.node), ...Object.keys(state?.asw ?? {})]);
    const observed = await io.observeAttachments({ uniqueName: input.uniqueName, driver, handle, nodes: [...asked].sort() });
    state ??= { asw: initialActualState(observed), multiAttachReported: [], desired: [] };
    const verifying = verify;
    verify = false;
    const now = Date.now();
    const plan = planAttachDetach({
      now, uniqueName: input.uniqueName, volume, desired: latest.desired, verify: verifying,
      asw: state.asw, multiAttachReported: state.multiAttachReported, observed, settings: input.settings,
    });
    state = { asw: plan.asw, multiAttachReported: plan.multiAttachReported, volume, desired: latest.desired };
    lastSteps = plan.steps.map(describeStep);
    for (const step of plan.steps) await run(step, driver, handle, volume, now);
    if (plan.settled) return { finished: true };
    // the attacher's answers and the nodes' changes come as watch events; timers cover deadlines and backoffs
    return plan.wakeAt !== undefined ? { requeueAfterMs: Math.max(0, plan.wakeAt - Date.now()) } : {};
  }

  async function run(step: AttachDetachStep, driver: string, handle: string, volume: AttachableVolume | undefined, now: number): Promise<void> {
    switch (step.kind) {
      case 'createAttachment':
        if (!volume) return;
        await io.createAttachment({ driver, handle, node: step.node, pvName: volume.pvName, reason: step.reason });
        return;
      case 'deleteAttachment': {
        const outcome = await io.deleteAttachment({ uniqueName: input.uniqueName, driver, handle, node: step.node, verifySafe: step.verifySafe, reason: step.reason });
        // the node still lists the volume in use: the detach did not start, and is retried after a backoff
        if (outcome === 'in-use' && state?.asw[step.node]) state.asw[step.node] = failOperation(state.asw[step.node], 'detach', now);
        return;
      }
      case 'report':
        await io.reportAttached({ node: step.node, uniqueName: input.uniqueName, attached: step.attached, reason: step.reason });
        return;
      case 'event':
        await io.recordPodEvents({ pods: step.pods, type: step.type, reason: step.reason, message: step.message });
        return;
    }
  }

  await runObjectLoop<AttachDetachEvent>({
    controller: CONTROLLER,
    tuning,
    apply,
    reconcile,
    // an episode: an event arriving as the run ends is folded in, not lost
    drainBeforeFinish: true,
    // the desired nodes and the verify asks come only as signals: those pending at the history ceiling go to the next run
    carries: input,
    describe: () => ({
      volume: latest.volume?.pvName,
      desiredNodes: latest.desired.map((d) => d.node),
      attached: Object.entries(state?.asw ?? {}).filter(([, a]) => a.confirmed).map(([n]) => n),
      uncertain: Object.entries(state?.asw ?? {}).filter(([, a]) => !a.confirmed).map(([n]) => n),
      operations: Object.entries(state?.asw ?? {}).filter(([, a]) => a.op).map(([n, a]) => `${a.op!.kind} ${n} until ${new Date(a.op!.deadline).toISOString()}`),
      lastSteps,
    }),
    continueAsNewArgs: () => [{ ...input, ...(state ? { state } : {}) }],
  });
}

function describeStep(s: AttachDetachStep): string {
  switch (s.kind) {
    case 'createAttachment': return `attach to ${s.node}`;
    case 'deleteAttachment': return `detach from ${s.node}${s.verifySafe ? '' : ' (forced)'}`;
    case 'report': return `${s.attached ? 'report' : 'unreport'} on ${s.node}`;
    case 'event': return `${s.reason} on ${s.pods.map((p) => p.name).join(', ')}`;
  }
}
