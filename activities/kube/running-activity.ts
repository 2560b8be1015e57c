import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttemptLease } from './fence';

/**
 * What the worker knows of the activity running in this async context: instrument()
 * (workers/manager.ts) sets it around each activity, and the client reads it at every request.
 */
export interface RunningActivity {
  /** the activity's input: under --shadow, a proposal carries its reason */
  input: unknown;
  /** its attempt's lease and this replica's name, when writes are fenced (activities/kube/fence.ts) */
  attempt?: { lease: AttemptLease; replica: string };
}

export const runningActivity = new AsyncLocalStorage<RunningActivity>();
