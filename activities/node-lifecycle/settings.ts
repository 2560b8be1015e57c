import { durationFlag, flagValue, floatFlag, intFlag, type FlagValues } from '../../workers/flags';
import type { NodeLifecycleSettings } from '../../workflows/node-lifecycle/types';

export const NODE_MONITOR_PERIOD = durationFlag('node-monitor-period', '5s',
  'how often the node lifecycle controller looks at every node for a kubelet that went silent');
export const NODE_MONITOR_GRACE_PERIOD = durationFlag('node-monitor-grace-period', '50s',
  'how long a running node may be silent (no status heartbeat, no Lease renewal) before it is marked unhealthy');
export const NODE_STARTUP_GRACE_PERIOD = durationFlag('node-startup-grace-period', '1m',
  'how long a starting node may be silent before it is marked unhealthy');
export const NODE_EVICTION_RATE = floatFlag('node-eviction-rate', 0.1,
  'nodes per second tainted NoExecute (so their pods are evicted) when their zone is healthy');
export const SECONDARY_NODE_EVICTION_RATE = floatFlag('secondary-node-eviction-rate', 0.01,
  'nodes per second tainted NoExecute when their zone is unhealthy; 0 in zones no larger than --large-cluster-size-threshold');
export const LARGE_CLUSTER_SIZE_THRESHOLD = intFlag('large-cluster-size-threshold', 50,
  'nodes a zone needs to count as large for the eviction rate', { min: 0 });
export const UNHEALTHY_ZONE_THRESHOLD = floatFlag('unhealthy-zone-threshold', 0.55,
  'share of a zone\'s nodes (at least 3) that must be not Ready for the zone to count as unhealthy');

export const NODE_LIFECYCLE_FLAGS = [
  NODE_MONITOR_PERIOD, NODE_MONITOR_GRACE_PERIOD, NODE_STARTUP_GRACE_PERIOD, NODE_EVICTION_RATE, SECONDARY_NODE_EVICTION_RATE,
  LARGE_CLUSTER_SIZE_THRESHOLD, UNHEALTHY_ZONE_THRESHOLD,
] as const;

export function nodeLifecycleSettings(flags: FlagValues | undefined): NodeLifecycleSettings {
  return {
    monitorGraceMs: flagValue(flags, NODE_MONITOR_GRACE_PERIOD),
    startupGraceMs: flagValue(flags, NODE_STARTUP_GRACE_PERIOD),
    evictionRate: flagValue(flags, NODE_EVICTION_RATE),
    secondaryEvictionRate: flagValue(flags, SECONDARY_NODE_EVICTION_RATE),
    largeClusterThreshold: flagValue(flags, LARGE_CLUSTER_SIZE_THRESHOLD),
    unhealthyZoneThreshold: flagValue(flags, UNHEALTHY_ZONE_THRESHOLD),
  };
}
