import type { ControllerDescriptor, StartContext } from '../../workers/descriptor';
import { durationFlag, flagValue } from '../../workers/flags';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import {
  legacyTokenCleanerWorkflow,
  legacyTokenCleanerWorkflowId,
  type LegacyTokenCleanerEvent,
  type LegacyTokenCleanerWorkflowInput,
} from '../../workflows/legacy-token-cleaner/workflow';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE } from '../../workflows/search-attributes';
import { createLegacyTokenCleanerActivities } from './activities';

export const LEGACY_TOKEN_CLEAN_UP_PERIOD = durationFlag('legacy-service-account-token-clean-up-period', '8760h0m0s',
  'The period of time since the last usage of an legacy service account token before it can be deleted.');

/**
 * One cleaner per deployment, started by every replica (upstream passes at each start): the
 * signal carries this replica's clean-up period, so a restarted deployment with a changed flag
 * applies it to the run already going.
 */
async function startLegacyTokenCleaner(ctx: StartContext): Promise<void> {
  const settings = { cleanUpPeriodMs: flagValue(ctx.flags, LEGACY_TOKEN_CLEAN_UP_PERIOD) };
  const args: LegacyTokenCleanerWorkflowInput = { ...settings, tuning: ctx.tuning };
  const event: LegacyTokenCleanerEvent = { settings };
  await ctx.client.workflow.signalWithStart(legacyTokenCleanerWorkflow, {
    workflowId: legacyTokenCleanerWorkflowId(ctx.baseTaskQueue),
    taskQueue: ctx.taskQueue,
    args: [args],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [event],
    staticSummary: 'legacy service account token cleaner',
    typedSearchAttributes: [
      { key: SA_CONTROLLER, value: legacyTokenCleanerController.short },
      { key: SA_KIND, value: 'Secret' },
      { key: SA_NAMESPACE, value: '' },
      { key: SA_NAME, value: '' },
    ],
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
