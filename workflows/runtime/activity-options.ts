import type { ActivityOptions, Duration, RetryPolicy } from '@temporalio/common';

/*
 * The activity options of every workflow, in one place. Each workflow used to spell them out; the
 * values here are exactly those (test/unit/activity-options.test.ts holds each workflow to them),
 * so a change here changes what new ActivityTaskScheduled events record, never replay.
 *
 * Retries inside an activity are for the API's passing troubles (a 5xx, a dropped connection, a
 * worker that died). When they run out, the reconcile fails and the object loop's own backoff
 * (LoopTuning.backoffBaseMs..backoffMaxMs) takes over, so these stay short and bounded.
 */

/** Kubernetes API calls: a few quick retries (0.5 s doubling to 30 s, 8 attempts), then the loop backs off. */
export const API_RETRY: RetryPolicy = {
  initialInterval: '500ms',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 8,
};

/** An activity that makes a handful of API calls and is done in seconds: no heartbeat. */
export const API_WRITES: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: API_RETRY,
};

/**
 * An activity that works through a batch of API calls and heartbeats per call (or per page listed),
 * so a replica killed mid-way is noticed within `heartbeatTimeout` instead of the 2-minute limit.
 */
export function apiBatches(heartbeatTimeout: Duration): ActivityOptions {
  return { startToCloseTimeout: '2 minutes', heartbeatTimeout, retry: API_RETRY };
}

/** Batches of API calls heartbeating per call (deployment, cronjob, endpointslice, gc). */
export const API_BATCHES: ActivityOptions = apiBatches('10 seconds');

/**
 * Pod creates and deletes in slow-start batches (replicaset, job): the hot path of a failover, so a
 * replica killed mid-batch is noticed in 5 seconds.
 */
export const POD_BATCHES: ActivityOptions = apiBatches('5 seconds');

/** Recounts that list every kind a quota covers and heartbeat per page listed: a page takes longer than a call. */
export const LIST_PAGES: ActivityOptions = apiBatches('15 seconds');

/** Reads and writes of one terminating namespace (its conditions, discovery, the finalizer). */
export const NAMESPACE_CALLS: ActivityOptions = apiBatches('20 seconds');

/**
 * Emptying one resource of a terminating namespace: many pages of deletes (heartbeating as it goes),
 * so a long limit; the first retry waits a second, as upstream's namespace queue does.
 */
export const NAMESPACE_CONTENT: ActivityOptions = {
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 },
};

/**
 * Upstream's endpointslicemirroring queue backs off from 1 s to 100 s (defaultSyncBackOff,
 * maxSyncBackOff); its activities retry on the same scale.
 */
export const MIRRORING_BATCHES: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '100 seconds', maximumAttempts: 8 },
};

/**
 * The pod garbage collector's cluster-wide pass (list every pod, delete in batches of 100): long,
 * heartbeating per page or call; it runs again every period anyway, so it gives up sooner (5 attempts,
 * at most 10 s apart) rather than hold up the next pass.
 */
export const PERIODIC_PASS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
};

/**
 * The informer's list+watch activity only ends by failing (its worker died), and must then run
 * again on another worker at once and forever: quick retries, no attempt limit. The attempt count
 * never resets (the activity never completes), so after a few moves every retry waits the maximum:
 * kept at one second, as it is part of every later failover's time.
 */
export const WATCH_RETRY: RetryPolicy = {
  initialInterval: '200ms',
  backoffCoefficient: 2,
  maximumInterval: '1 second',
};
