import type { LoopTuning } from '../../workflows/runtime/object-loop';
import type { FlagValues } from '../../workers/flags';
import type { Handler } from './reflector';

/** What the informer activity is told; every replica of one set of controllers starts its informer with the same. */
export interface InformerInput {
  /** short names of the controllers this informer routes for */
  controllers: string[];
  tuning?: Partial<LoopTuning>;
  burstReplicas?: number;
  /** the replica's resolved flags, by name; routes read their controller's with flagValue() */
  flags?: FlagValues;
}

/**
 * The routes of one controller (or one engine serving several): which resources it watches and
 * how their events become signals. Several families may watch one resource; the informer runs
 * one reflector per resource and hands every event to each of them.
 */
export interface RouteFamily {
  handlers: Map<string, Handler>;
  /**
   * Paths (keys of handlers) for which this family reads metadata only; a path is watched
   * metadata-only when every family that routes it says so, which keeps Secret data and big pod
   * specs out of memory when only names and namespaces matter.
   */
  metadataOnly?: Set<string>;
  /** cache sizes, for the heartbeat and the stats log */
  sizes(): Record<string, number>;
  /**
   * Resources found at run time (the garbage collector watches whatever discovery offers, CRDs
   * included): called at start and periodically; each returned path gets a reflector of its own.
   */
  discover?(): Promise<Array<{ path: string; handler: Handler; metadataOnly: boolean }>>;
}
