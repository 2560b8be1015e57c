import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import { isPatched } from './patches';

/*
 * A controller's API calls as local activities: run by the worker inside the workflow task that
 * asks for them, recorded as one marker event, instead of a task of their own on the server.
 *
 * Why: the restart catch-up of the scale curve is bound by CPU, and per write a regular activity
 * costs three history events of its own (scheduled, started, completed) plus a second workflow
 * task (three more) to hand the result back; the Temporal server's CPU follows its events and the
 * worker's follows its tasks. A local activity costs one marker and no extra task. Every write is
 * idempotent already (DESIGN 1), so that a worker killed mid-call leads to the whole workflow task
 * running again elsewhere is safe.
 *
 * What it keeps: a marker records a local activity's result but not its input, while the history
 * must keep saying why (DESIGN 7, and `why` reads it). So the worker hands back, for a local run,
 * `{ input, result }` (LOCAL_ECHO_KEY below; `instrument` in workers/manager.ts), and this proxy
 * unwraps it.
 *
 * Histories recorded before this existed scheduled regular activities at these points: the patch
 * makes their replay take the same path, and a run switches at its first live call after upgrade.
 */

/** The marker a local activity is recorded as (the SDK's core names it so). */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** Marks a local activity's echoed result so the proxy unwraps only what the worker wrapped. */
export const LOCAL_ECHO_KEY = 'kcm.localActivity';

export interface LocalEcho<T = unknown> {
  [LOCAL_ECHO_KEY]: true;
  /** the activity's first argument, where every write carries its reason */
  input: unknown;
  result: T;
}

export function isLocalEcho(v: unknown): v is LocalEcho {
  return typeof v === 'object' && v !== null && (v as Record<string, unknown>)[LOCAL_ECHO_KEY] === true;
}

/** The local form of a regular activity preset: the same retries and limit, retried in-process for the first 10 s. */
export function localOptions(remote: ActivityOptions): LocalActivityOptions {
  return {
    startToCloseTimeout: remote.startToCloseTimeout,
    retry: remote.retry,
    // past this, a retry waits on a durable timer instead of in the worker
    localRetryThreshold: '10 seconds',
  };
}

type AnyActivities = object;

/**
 * `proxyActivities` whose calls run as local activities on new histories (see above). `remote`
 * stays what older histories recorded, for their replay.
 */
export function objectIo<A extends AnyActivities>(remote: ActivityOptions): A {
  const regular = proxyActivities<Record<string, (...args: unknown[]) => Promise<unknown>>>(remote);
  const local = proxyLocalActivities<Record<string, (...args: unknown[]) => Promise<unknown>>>(localOptions(remote));
  return new Proxy({} as A, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      return async (...args: unknown[]) => {
        if (!isPatched('local-io')) return regular[name](...args);
        const out = await local[name](...args);
        return isLocalEcho(out) ? out.result : out;
      };
    },
  });
}
