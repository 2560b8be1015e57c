import type { LoopTuning } from '../../workflows/runtime/object-loop';
import type { FlagValues } from '../../workers/flags';
import type { ResourceInfo } from '../kube/discovery';
import type { Store } from './store';

/** What the informer is told; every replica of one set of controllers starts its informer with the same. */
export interface InformerInput {
  /** short names of the controllers this informer routes for */
  controllers: string[];
  tuning?: Partial<LoopTuning>;
  burstReplicas?: number;
  /** the replica's resolved flags, by name; routes read their controller's with flagValue() */
  flags?: FlagValues;
}

/**
 * What a controller's routes hand back once they have registered with the shared cache. Most
 * keep nothing of their own and return an empty family; the garbage collector keeps its graph
 * and finds resources at run time.
 */
export interface RouteFamily {
  /** sizes of what the routes keep beyond the shared stores, for the heartbeat */
  sizes?(): Record<string, number>;
  /**
   * Called at start and periodically with what discovery serves (read once per round for every
   * family): registers resources found at run time (the collector watches whatever discovery
   * offers, CRDs included) with the cache.
   */
  discover?(resources: readonly ResourceInfo[]): void;
  /**
   * Work on a clock rather than on a change (node health notices a heartbeat that did not come):
   * `run` is called about every `everyMs`, between flushes of the signaller.
   */
  periodic?: { everyMs: number; run(nowMs: number): void };
  /** controllers whose open workflows are checked against their store's first list (see GoneSweep) */
  sweeps?: GoneSweep[];
}

/**
 * An object deleted while no watch ran (every replica down, or between a failover and the next
 * list) never shows up as a deletion: a new replica's cache starts empty, so its first list has
 * nothing to compare with, where upstream's informer would have the object from before and tell
 * its handlers (DeletedFinalStateUnknown). The open workflows are this project's memory of what
 * existed before, so after the first list of `store` the informer lists the open workflows of
 * `controller` and sends each whose object the store lacks `reobserve`: the workflow reads its
 * object from the API and ends once it finds it gone, or, where the controller's deletion event
 * ends a run without a read, takes it as that deletion. An object the store lacks is only taken
 * as deleted once the API server answers 404 for it: a store resumed at the last holder's position
 * (see WatchPositions) lacks, until its watch catches up, objects created since that already have
 * workflows. Should one be created again later, its next event starts a fresh run.
 */
export interface GoneSweep {
  /** the workflows' KcmController and KcmKind search attributes (a controller may run workflows of other kinds: the Job controller's orphan pods) */
  controller: string;
  kind: string;
  /** the objects those workflows are one per, by namespace and name */
  store: Store;
  /** the signal that makes such a workflow read its object again; `uid` is the workflow's KcmUid */
  reobserve(uid: string | undefined): unknown;
}
