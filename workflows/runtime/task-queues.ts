/*
 * Task queue names. Each controller has its own queue (`<base>/<controller>`), polled in every
 * replica that runs it by a worker whose slots are that controller's `--concurrent-*-syncs`, so a
 * storm in one controller cannot hold back another, and replicas started with different
 * `--controllers` split the controllers between them. The base queue (`--task-queue`) keeps the
 * informer workflows and whatever a build from before per-controller queues left running there.
 * Workflow code uses these too (the move of a workflow from the base queue), so they stay pure.
 */

import { idHash } from './workflow-ids';

export function controllerTaskQueue(base: string, controller: string): string {
  return `${base}/${controller}`;
}

/**
 * The queue a workflow of `controller` running on `current` should be on: undefined when it is
 * there already. Before per-controller queues, every workflow ran on the base queue.
 */
export function taskQueueToMoveTo(current: string, controller: string): string | undefined {
  return current.endsWith(`/${controller}`) ? undefined : controllerTaskQueue(current, controller);
}

/** The queue of one informer: the replicas that run exactly this set of controllers poll it. */
export function informerTaskQueue(base: string, controllers: readonly string[]): string {
  return `${base}/informers/${informerSetKey(controllers)}`;
}

/** Longer lists of controllers are named by their count and a hash (see informerSetKey). */
const SET_KEY_MAX = 64;

/**
 * An order-independent name for a set of controllers: their names joined while short enough to
 * read, else `<count>-controllers-<hash>`. The key is part of the informer's workflow ID, which a
 * SQL-persisted Temporal keeps in 255 characters; every default controller joined is over 500.
 */
export function informerSetKey(controllers: readonly string[]): string {
  const joined = joinedSetKey(controllers);
  if (joined.length <= SET_KEY_MAX) return joined;
  return `${new Set(controllers).size}-controllers-${idHash(joined)}`;
}

/** The set's names joined, as every informer was keyed before the key was bounded. */
export function joinedSetKey(controllers: readonly string[]): string {
  return [...new Set(controllers)].sort().join('+') || 'none';
}

/** A visibility query clause for every workflow of one deployment (its base queue and every queue under it). */
export function deploymentQueuesQuery(base: string): string {
  const q = JSON.stringify(base);
  return `(TaskQueue = ${q} OR TaskQueue STARTS_WITH ${JSON.stringify(`${base}/`)})`;
}
