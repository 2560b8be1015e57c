import {
  CSI_PLUGIN_NAME,
  type AttachDetachSettings,
  type AttachableVolume,
  type AttachmentObservation,
  type DesiredNode,
  type NodeAttachment,
  type ScheduledPod,
} from './types';

/** upstream's CSI watch timeout: how long an attach or detach waits for the external attacher */
export const ATTACHER_TIMEOUT_MS = 2 * 60_000;
/** upstream's exponential backoff of a failed volume operation: 0.5 s doubling to 2 min 2 s */
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 122_000;

export function operationBackoffMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.min(20, Math.max(0, failures - 1)));
}

/** The CSI plugin's unique volume name: `kubernetes.io/csi/<driver>^<handle>`. */
export function csiUniqueName(driver: string, handle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${handle}`;
}

/** The driver and handle of a CSI unique volume name, as upstream's detacher splits it. */
export function parseCsiUniqueName(uniqueName: string): { driver: string; handle: string } | undefined {
  const prefix = `${CSI_PLUGIN_NAME}/`;
  if (!uniqueName.startsWith(prefix)) return undefined;
  const parts = uniqueName.slice(prefix.length).split('^');
  return parts.length === 2 ? { driver: parts[0], handle: parts[1] } : undefined;
}

export type AttachDetachStep =
  | { kind: 'createAttachment'; node: string; reason: string }
  | { kind: 'deleteAttachment'; node: string; verifySafe: boolean; reason: string }
  | { kind: 'report'; node: string; attached: boolean; reason: string }
  | { kind: 'event'; node: string; pods: ScheduledPod[]; type: 'Normal' | 'Warning'; reason: string; message: string };

export interface PlanInput {
  now: number;
  uniqueName: string;
  volume?: AttachableVolume;
  desired: readonly DesiredNode[];
  /** the periodic sync asked: drop attachments whose VolumeAttachment is gone or not attached */
  verify: boolean;
  asw: Readonly<Record<string, NodeAttachment>>;
  /** desired nodes already told of a Multi-Attach error */
  multiAttachReported: readonly string[];
  observed: AttachmentObservation;
  settings: AttachDetachSettings;
}

export interface Plan {
  asw: Record<string, NodeAttachment>;
  multiAttachReported: string[];
  steps: AttachDetachStep[];
  /** the earliest deadline, backoff or force-detach time to look again at */
  wakeAt?: number;
  /**
   * once the steps are done, nothing is under way or wanted: the run may end, and the watch starts
   * another when something changes
   */
  settled: boolean;
}

const volumeLabel = (input: PlanInput) => input.volume?.pvName ?? input.uniqueName;

/** `<prefix> for volume "<name>" <suffix>`, upstream's GenerateMsg. */
export function volumeMessage(prefix: string, volumeName: string, suffix: string): string {
  return `${prefix} for volume ${JSON.stringify(volumeName)} ${suffix}`;
}

/** A failed operation: uncertain from now, retried after the backoff. */
export function failOperation(a: NodeAttachment, kind: 'attach' | 'detach', now: number): NodeAttachment {
  const failures = (a.failedOp === kind ? a.failures : 0) + 1;
  return {
    confirmed: false, ...(a.detachRequestedAt !== undefined ? { detachRequestedAt: a.detachRequestedAt } : {}),
    failures, retryAt: now + operationBackoffMs(failures), failedOp: kind,
  };
}

/** The backoff of an earlier failure of this kind still holds (another kind starts afresh). */
const backingOff = (a: NodeAttachment | undefined, kind: 'attach' | 'detach', now: number) =>
  a?.retryAt !== undefined && a.failedOp === kind && a.retryAt > now;

/** upstream's reportMultiAttachError: the pods holding the volume elsewhere, counted per namespace. */
export function multiAttachMessage(volumeName: string, pod: ScheduledPod, elsewhere: readonly ScheduledPod[]): string {
  if (!elsewhere.length) return volumeMessage('Multi-Attach error', volumeName, 'Volume is already exclusively attached to one node and can\'t be attached to another');
  const local = elsewhere.filter((p) => p.namespace === pod.namespace).map((p) => p.name);
  const others = elsewhere.length - local.length;
  let msg: string;
  if (local.length) msg = `Volume is already used by pod(s) ${local.join(', ')}${others > 0 ? ` and ${others} pod(s) in different namespaces` : ''}`;
  else msg = `Volume is already used by ${others} pod(s) in different namespaces`;
  return volumeMessage('Multi-Attach error', volumeName, msg);
}

/**
 * One pass of upstream's reconciler over one volume: finished operations taken in, detaches of
 * nodes no pod wants it on (once unmounted, or forced), attaches where pods want it (one node at
 * a time unless the volume may be attached to many), and node status brought in line. Pure: the
 * workflow runs the steps in order.
 */
export function planAttachDetach(input: PlanInput): Plan {
  const { now, observed, settings, volume } = input;
  const asw: Record<string, NodeAttachment> = {};
  for (const [n, a] of Object.entries(input.asw)) asw[n] = { ...a, ...(a.op ? { op: { ...a.op } } : {}) };
  const steps: AttachDetachStep[] = [];
  const wake: number[] = [];
  const desired = new Map(input.desired.map((d) => [d.node, d]));
  const podsOn = (node: string) => desired.get(node)?.pods ?? [];
  const name = volumeLabel(input);
  const driver = volume?.driver ?? parseCsiUniqueName(input.uniqueName)?.driver ?? 'unknown';
  const handle = volume?.handle ?? parseCsiUniqueName(input.uniqueName)?.handle ?? input.uniqueName;

  // the periodic sync (upstream's VerifyVolumesAreAttached): an attachment the attacher no longer
  // confirms is forgotten, and attached again below if pods still want it
  if (input.verify) {
    for (const [n, a] of Object.entries(asw)) {
      const va = observed.attachments[n];
      if (a.confirmed && !a.op && !(va?.attached && !va.deleting)) delete asw[n];
    }
  }

  // operations the attacher has answered (or that ran out of time); `only`: just these nodes
  function settle(only?: ReadonlySet<string>): void {
    for (const [n, a] of Object.entries(asw)) {
      if (!a.op || (only && !only.has(n))) continue;
      const va = observed.attachments[n];
      if (a.op.kind === 'attach') {
        let error: string | undefined;
        if (va?.deleting) error = 'volume attachment is being deleted';
        else if (va?.attached) {
          asw[n] = { confirmed: true, failures: 0 };
          steps.push({ kind: 'event', node: n, pods: podsOn(n), type: 'Normal', reason: 'SuccessfulAttachVolume', message: volumeMessage('AttachVolume.Attach succeeded', name, '') });
          continue;
        } else if (va?.attachError) error = va.attachError;
        else if (now >= a.op.deadline) error = `timed out waiting for external-attacher of ${driver} CSI driver to attach volume ${handle}`;
        if (error === undefined) {
          wake.push(a.op.deadline);
          continue;
        }
        asw[n] = failOperation(a, 'attach', now);
        wake.push(asw[n].retryAt!);
        if (podsOn(n).length) steps.push({ kind: 'event', node: n, pods: podsOn(n), type: 'Warning', reason: 'FailedAttachVolume', message: volumeMessage('AttachVolume.Attach failed', name, `: ${error}`) });
      } else {
        if (!va) {
          delete asw[n];
          continue;
        }
        if (va.detachError === undefined && now < a.op.deadline) {
          wake.push(a.op.deadline);
          continue;
        }
        asw[n] = failOperation(a, 'detach', now);
        wake.push(asw[n].retryAt!);
      }
    }
  }

  // what the attacher did since the last pass
  settle();
  /** nodes whose operation starts in this pass: an attacher that has already answered is seen at once */
  const started = new Set<string>();

  const pendingAnywhere = () => Object.values(asw).some((a) => a.op);

  // detach what no pod wants here any more
  for (const [n, a] of Object.entries(asw)) {
    if (desired.has(n) || a.op) continue;
    if (backingOff(a, 'detach', now)) {
      wake.push(a.retryAt!);
      continue;
    }
    if (!volume?.multiAttach && pendingAnywhere()) continue;
    const node = observed.nodes[n];
    const requestedAt = a.detachRequestedAt ?? now;
    a.detachRequestedAt = requestedAt;
    const timeoutExpired = now - requestedAt > settings.maxWaitForUnmountMs;
    const forceTimeout = timeoutExpired && !settings.disableForceDetachOnTimeout;
    const healthy = !!node?.exists && node.ready;
    const forceDetach = !healthy && forceTimeout;
    const outOfService = !!node?.outOfService;
    if (node?.inUse && !forceDetach && !outOfService) {
      // still mounted: wait for the kubelet, or for the timeout on a node that is not healthy
      if (!healthy && !settings.disableForceDetachOnTimeout) wake.push(requestedAt + settings.maxWaitForUnmountMs + 1);
      continue;
    }
    if (node?.exists && node.reported) steps.push({ kind: 'report', node: n, attached: false, reason: `no scheduled pod uses the volume on ${n}: it is no longer reported attached before its detach` });
    const verifySafe = !forceTimeout && !outOfService;
    steps.push({
      kind: 'deleteAttachment', node: n, verifySafe,
      reason: verifySafe ? `no scheduled pod on ${n} uses the volume and it is not mounted there`
        : outOfService ? `${n} has the out-of-service taint: detached without waiting for unmount`
          : `${n} is not healthy and the volume waited ${Math.round(settings.maxWaitForUnmountMs / 1000)}s for unmount: force detach`,
    });
    asw[n] = { ...a, op: { kind: 'detach', deadline: now + ATTACHER_TIMEOUT_MS } };
    started.add(n);
  }

  // attach where pods want it
  const reported = new Set(input.multiAttachReported.filter((n) => desired.has(n)));
  for (const d of input.desired) {
    const a = asw[d.node];
    if (a?.op) continue;
    if (a?.confirmed) {
      a.detachRequestedAt = undefined;
      continue;
    }
    if (backingOff(a, 'attach', now)) {
      wake.push(a!.retryAt!);
      continue;
    }
    if (!volume) continue;
    if (!volume.multiAttach) {
      if (pendingAnywhere()) continue;
      const elsewhere = Object.entries(asw).filter(([n, x]) => n !== d.node && x.confirmed).map(([n]) => n);
      if (elsewhere.length) {
        if (!reported.has(d.node)) {
          reported.add(d.node);
          const holders = elsewhere.flatMap(podsOn);
          for (const pod of d.pods) {
            steps.push({ kind: 'event', node: d.node, pods: [pod], type: 'Warning', reason: 'FailedAttachVolume', message: multiAttachMessage(volume.pvName, pod, holders) });
          }
        }
        continue;
      }
    }
    const va = observed.attachments[d.node];
    if (!va) steps.push({ kind: 'createAttachment', node: d.node, reason: `pod(s) ${d.pods.map((p) => `${p.namespace}/${p.name}`).join(', ')} on ${d.node} use the volume` });
    asw[d.node] = {
      confirmed: a?.confirmed ?? false, failures: a?.failures ?? 0, ...(a?.failedOp ? { failedOp: a.failedOp } : {}),
      op: { kind: 'attach', deadline: now + ATTACHER_TIMEOUT_MS },
    };
    started.add(d.node);
  }

  settle(started);

  // node status: what is attached for certain, except what is being detached
  const told = new Set(steps.filter((s) => s.kind === 'report').map((s) => s.node));
  for (const n of new Set([...Object.keys(asw), ...Object.keys(observed.nodes)])) {
    const node = observed.nodes[n];
    if (!node?.exists || told.has(n)) continue;
    const a = asw[n];
    const want = !!a?.confirmed && a.op?.kind !== 'detach';
    if (node.reported === want) continue;
    steps.push({ kind: 'report', node: n, attached: want, reason: want ? `the volume is attached to ${n}` : `the volume is not attached to ${n} for certain` });
  }

  const busy = Object.values(asw).some((a) => a.op || a.retryAt !== undefined || a.detachRequestedAt !== undefined);
  const undesired = Object.keys(asw).some((n) => !desired.has(n));
  const unattached = volume ? input.desired.some((d) => !asw[d.node]?.confirmed) : false;
  return {
    asw,
    multiAttachReported: [...reported].sort(),
    steps,
    ...(wake.length ? { wakeAt: Math.min(...wake) } : {}),
    settled: !busy && !undesired && !unattached,
  };
}

/**
 * The actual state a new run starts from, as upstream's restart rebuilds it: attached where a node
 * reports the volume, uncertain where only a VolumeAttachment exists.
 */
export function initialActualState(observed: AttachmentObservation): Record<string, NodeAttachment> {
  const asw: Record<string, NodeAttachment> = {};
  for (const [n, v] of Object.entries(observed.nodes)) if (v.reported) asw[n] = { confirmed: true, failures: 0 };
  for (const n of Object.keys(observed.attachments)) asw[n] ??= { confirmed: false, failures: 0 };
  return asw;
}

/** The later event wins (it carries the whole desired state); a sync's verify request is kept. */
export function mergeAttachDetachEvents<E extends { verify?: boolean }>(earlier: E, later: E): E {
  return earlier.verify && !later.verify ? { ...later, verify: true } : later;
}
