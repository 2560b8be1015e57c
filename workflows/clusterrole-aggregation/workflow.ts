import { proxyActivities } from '@temporalio/workflow';
import type { AggregationActivities } from '../../activities/clusterrole-aggregation/activities';
import type { LabelSelector } from '../common/meta';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { ClusterRoleView, PolicyRule, aggregateRules, sameRules } from './logic';
import { API_WRITES } from '../runtime/activity-options';

/** An aggregated ClusterRole and the roles its selectors match, as the watch last saw them. */
export interface AggregationEvent {
  uid: string;
  /** absent when the role no longer aggregates (its aggregationRule was removed) */
  selectors?: LabelSelector[];
  rules: PolicyRule[];
  sources: ClusterRoleView[];
}

export interface AggregationWorkflowInput extends CarriedSignals<AggregationEvent> {
  name: string;
  tuning?: Partial<LoopTuning>;
}

export const aggregationWorkflowId = (name: string) => `clusterrole-aggregation/${name}`;

const io = proxyActivities<AggregationActivities>(API_WRITES);

/**
 * One episode of "this aggregated ClusterRole's rules differ from the union of its sources":
 * started by the watch when they differ, it writes the union and ends.
 */
export async function clusterRoleAggregationWorkflow(input: AggregationWorkflowInput): Promise<void> {
  let seen: AggregationEvent | undefined;

  async function reconcile(): Promise<ReconcileResult> {
    if (!seen?.selectors) return { finished: true };
    const want = aggregateRules(input.name, seen.selectors, seen.sources);
    if (sameRules(want, seen.rules)) return { finished: true };
    await io.applyAggregatedRules({
      name: input.name,
      rules: want,
      reason: `union of ${seen.sources.map((s) => s.name).join(', ') || 'no matching roles'} (${seen.rules.length} -> ${want.length} rules)`,
    });
    return { finished: true };
  }

  await runObjectLoop<AggregationEvent>({
    controller: 'clusterrole-aggregation',
    tuning: { ...DEFAULT_TUNING, ...input.tuning },
    apply(e) {
      seen = e;
    },
    reconcile,
    // the role and its sources come only as signals: those pending at the history ceiling go to the next run
    carries: input,
    continueAsNewArgs: () => [input],
  });
}
