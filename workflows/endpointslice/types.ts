import type { ObjectReference } from '../service-endpoints/types';
/**
 * Payloads of the endpointslice controller that cross the workflow boundary: EndpointSlices as the
 * controller reads and writes them (discovery.k8s.io/v1, only the fields it owns or must keep), and
 * the writes a reconcile asks for. Decisions live in ./logic.ts.
 */

import type { OwnerRef } from '../common/meta';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** managed-by value of this controller; the mirroring controller uses another, so their slices never mix */
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;

export type AddressType = 'IPv4' | 'IPv6' | 'FQDN';

export interface SlicePort {
  /** the API defaults an absent name to '' */
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

export interface SliceEndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export type SliceTargetRef = ObjectReference;

export interface SliceHints {
  forZones?: Array<{ name: string }>;
  forNodes?: Array<{ name: string }>;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: SliceEndpointConditions;
  hostname?: string;
  targetRef?: SliceTargetRef;
  nodeName?: string;
  zone?: string;
  hints?: SliceHints;
}

/** The content of a slice, as desired or as stored. */
export interface SliceContent {
  addressType: AddressType | string;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerRef[];
}

/** A stored EndpointSlice managed by this controller for one Service (never one pending deletion). */
export interface SliceView extends SliceContent {
  name: string;
  uid: string;
  resourceVersion: string;
  /** kept as they are on an update: they are not the controller's */
  finalizers?: string[];
}

/** An update: the full new content of a stored slice, guarded by the version it was computed from. */
export interface SliceUpdate extends SliceContent {
  name: string;
  uid: string;
  resourceVersion: string;
  finalizers?: string[];
}

export interface SliceRef {
  name: string;
  uid: string;
}

/** What one reconcile writes, in upstream's order: creates, then updates, then deletes. */
export interface SlicePlan {
  create: SliceContent[];
  update: SliceUpdate[];
  delete: SliceRef[];
}

/** The Service a write is for: the namespace, the generateName prefix, events' target. */
export interface ServiceRef {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
}

/**
 * What the workflow remembers of pods' and the Service's trigger times between reconciles (upstream's
 * TriggerTimeTracker, one Service's worth). Absent until the first reconcile: that one reports the
 * Service's creation time.
 */
export interface TriggerState {
  service: string;
  /** pod name -> lastTransitionTime seen at the previous reconcile */
  pods: Record<string, string>;
}
