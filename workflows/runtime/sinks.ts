import type { Sinks } from '@temporalio/workflow';
import type { ThrowStage } from './api-rejections';

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'finished';

/**
 * Worker-side callbacks workflows use for metrics. Sinks are not called again when a history is
 * replayed, so counters count reconciles that happened, not replays of them.
 */
export interface KcmSinks extends Sinks {
  kcm: {
    reconciled(controller: string, outcome: ReconcileOutcome, durationMs: number): void;
    signals(controller: string, received: number, coalesced: number): void;
    /** the controller's own workflow code threw (not a failed call it made), folding an event in or reconciling */
    thrown(controller: string, stage: ThrowStage): void;
    /** the shadow ledger settled `count` comparisons of a controller's writes with this outcome */
    shadowOutcomes(controller: string, outcome: string, count: number): void;
  };
}
