import { featureEnabled } from '../../workers/feature-gates';
import { durationFlag, flagValue, floatFlag, intFlag, type FlagValues } from '../../workers/flags';
import type { HpaConfig } from '../../workflows/hpa/types';

/* The horizontal-pod-autoscaler's flags, named and defaulted as upstream's (--help words are ours). */

export const CONCURRENT_HPA_SYNCS = intFlag('concurrent-horizontal-pod-autoscaler-syncs', 5,
  'How many HorizontalPodAutoscalers may be synced at the same time.');
export const HPA_SYNC_PERIOD = durationFlag('horizontal-pod-autoscaler-sync-period', '15s',
  'How often each HorizontalPodAutoscaler reads its metrics and decides on a replica count.');
export const HPA_DOWNSCALE_STABILIZATION = durationFlag('horizontal-pod-autoscaler-downscale-stabilization', '5m0s',
  'How far back the autoscaler looks at its own recommendations: it never scales down below the highest of them (for HPAs without behavior.scaleDown).', true);
export const HPA_TOLERANCE = floatFlag('horizontal-pod-autoscaler-tolerance', 0.1,
  'How far the ratio of a metric to its target may stray from 1.0 before the autoscaler acts.');
export const HPA_CPU_INITIALIZATION_PERIOD = durationFlag('horizontal-pod-autoscaler-cpu-initialization-period', '5m0s',
  'How long after a pod starts its CPU samples may be skipped.', true);
export const HPA_INITIAL_READINESS_DELAY = durationFlag('horizontal-pod-autoscaler-initial-readiness-delay', '30s',
  'How long after a pod starts a change of its readiness counts as its first readiness.', true);

export const HPA_FLAGS = [
  HPA_SYNC_PERIOD, HPA_DOWNSCALE_STABILIZATION, HPA_TOLERANCE, HPA_CPU_INITIALIZATION_PERIOD, HPA_INITIAL_READINESS_DELAY,
] as const;

/** The calculation's settings from this replica's flags and feature gates. */
export function hpaConfigOf(flags: FlagValues | undefined): HpaConfig {
  return {
    tolerance: flagValue(flags, HPA_TOLERANCE),
    cpuInitializationPeriodMs: flagValue(flags, HPA_CPU_INITIALIZATION_PERIOD),
    initialReadinessDelayMs: flagValue(flags, HPA_INITIAL_READINESS_DELAY),
    downscaleStabilizationWindowMs: flagValue(flags, HPA_DOWNSCALE_STABILIZATION),
    configurableTolerance: featureEnabled(flags, 'HPAConfigurableTolerance'),
    podLevelResources: featureEnabled(flags, 'PodLevelResources'),
  };
}

export const syncPeriodMs = (flags: FlagValues | undefined): number => flagValue(flags, HPA_SYNC_PERIOD);
