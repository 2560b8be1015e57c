import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import { durationFlag, flagValue } from '../../workers/flags';
import {
  legacyTokenCleanerWorkflow,
  legacyTokenCleanerWorkflowId,
  type LegacyTokenCleanerEvent,
  type LegacyTokenCleanerWorkflowInput,
} from '../../workflows/legacy-token-cleaner/workflow';
import { startSingleton } from '../../workers/singleton';
import { createLegacyTokenCleanerActivities } from './activities';

export const LEGACY_TOKEN_CLEAN_UP_PERIOD = durationFlag('legacy-service-account-token-clean-up-period', '8760h0m0s',
  'The period of time since the last usage of an legacy service account token before it can be deleted.');

/** One cleaner per deployment; upstream passes at each start. */
async function startLegacyTokenCleaner(ctx: StartContext): Promise<void> {
  const settings = { cleanUpPeriodMs: flagValue(ctx.flags, LEGACY_TOKEN_CLEAN_UP_PERIOD) };
  const args: LegacyTokenCleanerWorkflowInput = { ...settings, tuning: ctx.tuning };
  const event: LegacyTokenCleanerEvent = { settings };
  await startSingleton(ctx, {
    controller: legacyTokenCleanerController.short,
    workflow: legacyTokenCleanerWorkflow,
    workflowId: legacyTokenCleanerWorkflowId(ctx.baseTaskQueue),
    args,
    event,
    kind: 'Secret',
    staticSummary: 'legacy service account token cleaner',
  });
}

export const legacyTokenCleanerController: ControllerDescriptor = {
  name: 'legacy-serviceaccount-token-cleaner-controller',
  short: 'legacy-service-account-token-cleaner',
  serviceAccount: 'legacy-service-account-token-cleaner',
  concurrency: 1,
  flags: [LEGACY_TOKEN_CLEAN_UP_PERIOD],
  workflows: [legacyTokenCleanerWorkflow],
  activities: (ctx) => createLegacyTokenCleanerActivities(ctx),
  start: startLegacyTokenCleaner,
};
