/**
 * Upstream's ephemeral volume controller (pkg/controller/volume/ephemeral): one claim per generic
 * ephemeral volume of a pod, named `<pod>-<volume>`, created from the volume's claim template
 * and controlled by the pod, so the garbage collector deletes it with the pod.
 */
import type { OwnerRef } from '../common/meta';
import { claimIsForPod, ephemeralClaimName, notCreatedForPodMessage } from '../common/ephemeral-claims';

export const CONTROLLER = 'ephemeral-volume';
/** the source component of upstream's Events (its recorder's EventSource) */
export const EVENT_COMPONENT = 'ephemeral_volume';
/** upstream's volume events.FailedBinding */
export const FAILED_BINDING = 'FailedBinding';

/** A volume's volumeClaimTemplate: only labels and annotations of its metadata are copied, and the spec. */
export interface ClaimTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

export interface EphemeralVolume {
  name: string;
  /** `<pod>-<volume>` */
  claim: string;
  template: ClaimTemplate;
}

/** A pod as the controller reads it: its generic ephemeral volumes, in spec order. */
export interface EphemeralPodView {
  namespace: string;
  name: string;
  uid: string;
  deleting: boolean;
  volumes: EphemeralVolume[];
}

/** A claim that exists under a volume's claim name. */
export interface ClaimState {
  uid: string;
  /** the UID of its controller owner, if it has one */
  controllerUid?: string;
}

/** Each volume's claim by claim name: null when there is none. */
export type Claims = Record<string, ClaimState | null>;

/** enqueuePod: a pod not being deleted with at least one generic ephemeral volume. */
export function wantsClaims(pod: EphemeralPodView): boolean {
  return !pod.deleting && pod.volumes.length > 0;
}

export type EphemeralStep =
  | { kind: 'create'; volume: EphemeralVolume }
  /** a claim under the name that the pod does not control: the sync fails with upstream's message */
  | { kind: 'foreign'; volume: EphemeralVolume; message: string };

/**
 * syncHandler's walk over the volumes: the first volume whose claim is missing (to create) or not
 * the pod's (an error that stops the walk); none when every claim exists and is the pod's.
 * A claim the watch has not reported counts as missing; the create then says whether it exists.
 */
export function nextStep(pod: EphemeralPodView, claims: Claims): EphemeralStep | undefined {
  for (const volume of pod.volumes) {
    const c = claims[volume.claim];
    if (!c) return { kind: 'create', volume };
    if (!claimIsForPod(pod.namespace, pod.uid, { namespace: pod.namespace, controllerUid: c.controllerUid })) {
      return { kind: 'foreign', volume, message: notCreatedForPodMessage(pod.namespace, volume.claim, pod.namespace, pod.name) };
    }
  }
  return undefined;
}

/** Whether the watch should start a workflow for the pod: some claim to create, or one that is not the pod's. */
export function claimsDue(pod: EphemeralPodView, claims: Claims): boolean {
  return wantsClaims(pod) && nextStep(pod, claims) !== undefined;
}

/** The claim's name for each of the pod's volumes. */
export function volumeClaims(podName: string, volumes: ReadonlyArray<{ name: string; template: ClaimTemplate }>): EphemeralVolume[] {
  return volumes.map((v) => ({ name: v.name, claim: ephemeralClaimName(podName, v.name), template: v.template }));
}

/** The Event upstream records on the pod when a volume's sync fails. */
export function failureEventMessage(volume: string, error: string): string {
  return `ephemeral volume ${volume}: ${error}`;
}

/** upstream's wording when the create itself fails */
export function createFailedMessage(claim: string, apiMessage: string): string {
  return `create PVC ${claim}: ${apiMessage}`;
}

/** The PersistentVolumeClaim upstream creates for a volume: the template's labels, annotations and spec, controlled by the pod. */
export function claimFor(pod: Pick<EphemeralPodView, 'name' | 'uid'>, volume: EphemeralVolume) {
  const owner: OwnerRef = { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true, blockOwnerDeletion: true };
  const meta = volume.template.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: volume.claim,
      ownerReferences: [owner],
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.labels ? { labels: meta.labels } : {}),
    },
    spec: volume.template.spec,
  };
}
