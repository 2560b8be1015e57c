/**
 * What the endpoints and endpointslice controllers know of a Service and of the pods it selects,
 * as the watch projects them: enough to compute Endpoints and EndpointSlices as upstream does,
 * nothing more (no pod specs beyond ports, no statuses beyond readiness and addresses).
 */
import type { V1ObjectReference } from '@kubernetes/client-node';

/** core/v1 ObjectReference as Endpoints addresses and EndpointSlice endpoints carry it: client-node's model is its JSON shape. */
export type ObjectReference = V1ObjectReference;

export interface ServicePortView {
  name?: string;
  protocol: string;
  port: number;
  /** a number, or the name of a container port */
  targetPort?: number | string;
  appProtocol?: string;
}

export interface ServiceView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** absent: a Service without a selector (its Endpoints are someone else's) */
  selector?: Record<string, string>;
  ports: ServicePortView[];
  /** 'None' for headless services */
  clusterIP?: string;
  type: string;
  publishNotReadyAddresses: boolean;
  /** as set by the API server, e.g. ['IPv4'] */
  ipFamilies: string[];
  labels: Record<string, string>;
  /** spec.trafficDistribution (hints), when set */
  trafficDistribution?: string;
  deletionTimestamp?: string;
  /** metadata.creationTimestamp: the endpoints controllers' trigger time for a Service */
  creationTimestamp?: string;
}

export interface ContainerPortView {
  name?: string;
  containerPort: number;
  protocol: string;
}

export interface EndpointPod {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  /** status.podIPs in order (status.podIP first) */
  ips: string[];
  nodeName?: string;
  /** topology.kubernetes.io/zone of the pod's Node, as the watch knows it */
  zone?: string;
  hostname?: string;
  subdomain?: string;
  phase: string;
  restartPolicy: string;
  /** Ready condition True */
  ready: boolean;
  deletionTimestamp?: string;
  /** every container's ports (init containers with restartPolicy Always included), for named targetPorts */
  ports: ContainerPortView[];
  /** newest of the pod's condition transition times, for the last-change-trigger-time annotation */
  lastTransitionTime?: string;
  /** lastTransitionTime of the Ready condition alone: upstream's pod trigger time for last-change-trigger-time */
  readyTransitionTime?: string;
  creationTimestamp: string;
}

/**
 * What the watch sends a Service's workflow; several arrive merged. `pods` with `relist` is the
 * complete set of pods the selector matches; otherwise pods changed (latest state).
 */
export interface ServicePodsEvent {
  service?: ServiceView;
  /** the Service with this UID was deleted */
  serviceDeletedUid?: string;
  pods?: EndpointPod[];
  /** UIDs of pods deleted, or no longer selected */
  podsGone?: string[];
  relist?: boolean;
}
