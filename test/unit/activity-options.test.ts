import type { ActivityOptions, RetryPolicy } from '@temporalio/common';

/**
 * Every workflow takes its activity options from workflows/runtime/activity-options.ts. The values
 * below are what each workflow spelled out by hand before the presets existed; they are recorded in
 * every ActivityTaskScheduled event, so a preset edited by mistake shows up here, not in production.
 */
const recorded: ActivityOptions[] = [];
jest.mock('@temporalio/workflow', () => {
  const actual = jest.requireActual('@temporalio/workflow');
  return {
    ...actual,
    proxyActivities: (options: ActivityOptions) => {
      recorded.push(options);
      return actual.proxyActivities(options);
    },
  };
});

const API_RETRY: RetryPolicy = { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 };

const expected: Record<string, ActivityOptions[]> = {
  attachdetach: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  bootstrapsigner: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  'clusterrole-aggregation': [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  cronjob: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  csrcleaner: [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  deployment: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  endpoints: [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  'ephemeral-volume': [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  endpointslice: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  endpointslicemirroring: [
    {
      startToCloseTimeout: '2 minutes',
      heartbeatTimeout: '10 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '100 seconds', maximumAttempts: 8 },
    },
  ],
  gc: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  job: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  'legacy-token-cleaner': [
    {
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
    },
  ],
  'pv-binder': [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY }],
  'pv-expander': [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  namespace: [
    { startToCloseTimeout: '2 minutes', heartbeatTimeout: '20 seconds', retry: API_RETRY },
    {
      startToCloseTimeout: '15 minutes',
      heartbeatTimeout: '20 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 },
    },
  ],
  podgc: [
    {
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
    },
  ],
  'pv-protection': [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  'pvc-protection': [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  replicaset: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  resourcequota: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '15 seconds', retry: API_RETRY }],
  'root-ca-cert-publisher': [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  serviceaccount: [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  servicecidr: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  statefulset: [
    { startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: API_RETRY },
    { startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY },
  ],
  'serviceaccount-token': [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  tokencleaner: [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  'ttl-after-finished': [{ startToCloseTimeout: '1 minute', retry: API_RETRY }],
  'vac-protection': [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
  validatingadmissionpolicystatus: [{ startToCloseTimeout: '2 minutes', heartbeatTimeout: '5 seconds', retry: API_RETRY }],
};

test.each(Object.keys(expected))('%s schedules its activities with the options it always had', (dir) => {
  recorded.length = 0;
  jest.isolateModules(() => {
    require(`../../workflows/${dir}/workflow`);
  });
  // toStrictEqual: an option present but undefined would be a difference too
  expect(recorded).toStrictEqual(expected[dir]);
});

// capped at 1 s since failover by default (it was 5 s): every later move of the watch waits the cap
test('the informer watch retries quickly and forever', () => {
  const { WATCH_RETRY } = require('../../workflows/runtime/activity-options');
  expect(WATCH_RETRY).toStrictEqual({ initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '1 second' });
});
