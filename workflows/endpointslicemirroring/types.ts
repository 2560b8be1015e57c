import type { ObjectReference } from '../service-endpoints/types';
/**
 * Payloads of the endpointslicemirroring controller: what it reads of a selector-less Service, its
 * custom Endpoints and the EndpointSlices mirrored from them, and the writes a decision asks for.
 * The decisions live in ./logic.ts.
 */

export const MIRRORING_CONTROLLER = 'endpointslicemirroring';
/** the value of the managed-by label on every slice this controller owns */
export const MIRRORING_MANAGER = 'endpointslicemirroring-controller.k8s.io';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Endpoints carrying this label set to "true" are someone else's to mirror (the endpoints controller sets it) */
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
/** a leader-election record kept on an Endpoints object: not service endpoints at all */
export const ANNOTATION_LEADER = 'control-plane.alpha.kubernetes.io/leader';
/** annotations that describe the Endpoints object itself, not what it lists: never copied to slices */
export const ANNOTATIONS_NOT_MIRRORED: readonly string[] = [
  'endpoints.kubernetes.io/last-change-trigger-time',
  'kubectl.kubernetes.io/last-applied-configuration',
];
/** --mirroring-max-endpoints-per-subset */
export const DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000;
/** the component name upstream's events carry */
export const MIRRORING_EVENT_SOURCE = 'endpoint-slice-mirroring-controller';

export type AddressType = 'IPv4' | 'IPv6';

/** core/v1 ObjectReference as an Endpoints address or a slice endpoint carries it */
export type ObjectReferenceView = ObjectReference;

export interface EndpointAddressView {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReferenceView;
}

/** core/v1 EndpointPort; `appProtocol` absent means nil, which is not the same as '' */
export interface EndpointsPortView {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubsetView {
  addresses: EndpointAddressView[];
  notReadyAddresses: EndpointAddressView[];
  ports: EndpointsPortView[];
}

export interface EndpointsView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  deletionTimestamp?: string;
  subsets: EndpointSubsetView[];
}

/** All a mirroring decision needs of the Service: whether it exists and whether it selects pods. */
export interface MirrorServiceView {
  uid: string;
  resourceVersion: string;
  /** a non-empty spec.selector (an empty one is dropped by the apiserver, as upstream sees it) */
  hasSelector: boolean;
}

/** discovery/v1 EndpointPort; every member may be absent (nil) on a slice someone else wrote */
export interface SlicePort {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}

/** discovery/v1 Endpoint, the members this controller writes or compares */
export interface SliceEndpoint {
  addresses: string[];
  conditions: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: ObjectReferenceView;
}

/**
 * One existing mirrored slice, summarised: its endpoints travel as a digest (see endpointsDigest),
 * so a slice of a thousand endpoints costs a few hundred bytes of history.
 */
export interface SliceSummary {
  name: string;
  uid: string;
  resourceVersion: string;
  addressType: string;
  ports: SlicePort[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** UID of its controller owner reference, if any */
  ownerUid?: string;
  endpointCount: number;
  endpointsDigest: string;
}

/** One reconcile's fresh read of the pair and its mirrored slices. */
export interface MirroringObservation {
  service?: MirrorServiceView;
  endpoints?: EndpointsView;
  slices: SliceSummary[];
}

/** The full content of a mirrored slice as upstream builds it. */
export interface DesiredSlice {
  addressType: AddressType;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** the Endpoints the slice is mirrored from: its controller owner */
  owner: { name: string; uid: string };
}

export type MirroringWrite =
  /** POST with generateName `<endpoints>-`; idempotent by looking for an unknown slice with the same key first */
  | { type: 'createSlice'; key: string; slice: DesiredSlice }
  /** PUT the whole slice at the version it was read at */
  | { type: 'updateSlice'; name: string; resourceVersion: string; slice: DesiredSlice; reason: string }
  /** DELETE with a UID precondition; NotFound is success */
  | { type: 'deleteSlice'; name: string; uid: string; reason: string };

export interface MirroringWarning {
  reason: 'InvalidIPAddress' | 'TooManyAddressesToMirror';
  message: string;
}

export interface MirroringPlan {
  /** whether the pair is mirrored at all; false: every write is a cleanup */
  mirror: boolean;
  /** creates, then updates, then deletes, as upstream finalizes */
  writes: MirroringWrite[];
  warnings: MirroringWarning[];
  /** in words, why this plan */
  summary: string;
}

/** A slice event the watch saw: the workflow ignores echoes of its own writes. */
export interface SliceEcho {
  name: string;
  resourceVersion: string;
  deleted?: boolean;
}

/**
 * What the watch sends a pair's workflow; several arrive merged. The workflow re-reads the pair on
 * every reconcile, so events only say that (and what) changed.
 */
export interface MirroringEvent {
  /** the Service or the Endpoints changed (or was deleted) */
  changed?: boolean;
  /** the watch relisted: events may have been missed */
  relist?: boolean;
  /** mirrored slices that changed */
  slices?: SliceEcho[];
}

export interface MirroringWorkflowInput {
  namespace: string;
  name: string;
  /** --mirroring-max-endpoints-per-subset */
  maxEndpointsPerSubset?: number;
  tuning?: Partial<import('../runtime/object-loop').LoopTuning>;
}
