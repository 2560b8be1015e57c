import type { Mode } from '../scenarios/types';

/**
 * The memory-map study (`--memory`): one fleet size; upstream once a repetition, ours with the
 * environment it is given by default and once per value of glibc's MALLOC_ARENA_MAX in `arenas`.
 * glibc gives a process up to eight malloc arenas per core, each kept at its high-water mark;
 * the manager's threads (the workflow threads, libuv's pool, the SDK core's Tokio runtime) each
 * come to use one.
 */
export interface MemoryPlan {
  size: number;
  arenas: number[];
  settleS: number;
  idleS: number;
}

export function memoryPlan(mode: Mode, size?: number, arenas?: number[]): MemoryPlan {
  const base = ({
    full: { size: 1000, arenas: [2], settleS: 15, idleS: 60 },
    quick: { size: 100, arenas: [2], settleS: 5, idleS: 20 },
    smoke: { size: 10, arenas: [2], settleS: 2, idleS: 5 },
  } satisfies Record<Mode, MemoryPlan>)[mode];
  return { ...base, ...(size ? { size } : {}), ...(arenas ? { arenas } : {}) };
}
