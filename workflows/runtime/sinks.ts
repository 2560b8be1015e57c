import type { Sinks } from '@temporalio/workflow';

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'finished';

/**
 * Worker-side callbacks workflows use for metrics. Sinks are not called again when a history is
 * replayed, so counters count reconciles that happened, not replays of them.
 */
export interface KcmSinks extends Sinks {
  kcm: {
    reconciled(controller: string, outcome: ReconcileOutcome, durationMs: number): void;
    signals(controller: string, received: number, coalesced: number): void;
    /** the shadow ledger settled `count` comparisons of a controller's writes with this outcome */
    shadowOutcomes(controller: string, outcome: string, count: number): void;
  };
}
