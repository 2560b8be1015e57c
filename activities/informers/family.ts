import type { LoopTuning } from '../../workflows/runtime/object-loop';
import type { FlagValues } from '../../workers/flags';
import type { ResourceInfo } from '../kube/discovery';

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
}
