import type { ConditionStatus, DisruptionSettings, TokenBucket, ZoneState } from './logic';

/**
 * One node as the informer sees it: what its conditions and taints say, and whether its kubelet
 * has gone silent. Sent whenever any of it but `probeAtMs` changes.
 */
export interface NodeReport {
  uid: string;
  /** upstream's zone key (region, NUL, zone) */
  zone: string;
  /** labelled node.kubernetes.io/exclude-disruption: not counted in its zone's state */
  excluded: boolean;
  /** the Ready condition's status as the API has it; undefined: the node has none */
  ready?: ConditionStatus;
  /** the Ready condition's lastHeartbeatTime, so a status write can tell a kubelet that posted meanwhile */
  heartbeat?: string;
  /** no heartbeat and no Lease renewal within the grace period */
  stale: boolean;
  /** when the informer last heard from the kubelet, ms since the epoch */
  probeAtMs: number;
  /** NoExecute taints the controller manages */
  unreachableTaint: boolean;
  notReadyTaint: boolean;
  /** the NoSchedule condition taints, or the beta OS and arch labels, disagree with the node */
  noScheduleOutOfSync: boolean;
  labelsOutOfSync: boolean;
  /**
   * whether any pod is bound to the node, as the informer's pods say; absent until they are listed
   * (and in reports of runs from before it was sent): the node's pods are then listed to be sure
   */
  hasPods?: boolean;
}

/** A pod bound to a node that is not Ready (upstream's pod handler): its Ready condition goes False. */
export interface PodOnNode {
  namespace: string;
  name: string;
  node: string;
}

export interface NodeLifecycleSettings extends DisruptionSettings {
  /** --node-monitor-grace-period, ms */
  monitorGraceMs: number;
  /** --node-startup-grace-period, ms */
  startupGraceMs: number;
}

export interface NodeLifecycleEvent {
  /** latest report per node name */
  nodes?: Record<string, NodeReport>;
  /** nodes deleted, with the UID they had */
  nodesGone?: Record<string, string>;
  pods?: PodOnNode[];
  /** a replica's flags, applied to the run already going */
  settings?: NodeLifecycleSettings;
}

/** A zone's NoExecute tainting queue (upstream's RateLimitedTimedQueue). */
export interface ZoneQueue {
  /** nodes waiting, first come first served */
  waiting: string[];
  /** nodes taken in and not removed since: upstream's set, which keeps a processed node from coming back */
  members: string[];
  bucket: TokenBucket;
  /** nodes were left waiting for a token when the run last looked (see tryAccept's `draining`) */
  draining?: boolean;
}

/** Everything the run knows, JSON-plain so continue-as-new carries it. */
export interface NodeLifecycleState {
  nodes: Record<string, NodeReport>;
  zoneStates: Record<string, ZoneState>;
  queues: Record<string, ZoneQueue>;
  /** nodes whose pods must still be marked not ready (upstream's nodesToRetry) */
  retry: string[];
  /** after leaving full disruption, no node is silent before this plus its grace period (ms since the epoch) */
  probeFloorMs?: number;
}
