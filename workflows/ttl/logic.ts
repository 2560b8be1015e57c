/*
 * The TTL controller's decision (upstream pkg/controller/ttl): how long kubelets may cache the
 * Secrets and ConfigMaps their pods use, announced on every node by an annotation, as a step
 * function of the cluster's size with overlapping steps, so a size near a boundary does not flap.
 */

export const CONTROLLER = 'ttl';
export const TTL_ANNOTATION = 'node.alpha.kubernetes.io/ttl';

interface Boundary {
  sizeMin: number;
  sizeMax: number;
  ttlSeconds: number;
}

/** upstream's steps: each is entered above the previous one's sizeMax and left below its own sizeMin */
export const TTL_BOUNDARIES: readonly Boundary[] = [
  { sizeMin: 0, sizeMax: 100, ttlSeconds: 0 },
  { sizeMin: 90, sizeMax: 500, ttlSeconds: 15 },
  { sizeMin: 450, sizeMax: 1000, ttlSeconds: 30 },
  { sizeMin: 900, sizeMax: 2000, ttlSeconds: 60 },
  { sizeMin: 1800, sizeMax: 2 ** 31 - 1, ttlSeconds: 300 },
];

/** The step after the cluster has `count` nodes, from `step`: up past each sizeMax, down below each sizeMin. */
export function nextStep(step: number, count: number): number {
  let s = Math.max(0, Math.min(TTL_BOUNDARIES.length - 1, step));
  while (s < TTL_BOUNDARIES.length - 1 && count > TTL_BOUNDARIES[s].sizeMax) s++;
  while (s > 0 && count < TTL_BOUNDARIES[s].sizeMin) s--;
  return s;
}

export const ttlOfStep = (step: number) => TTL_BOUNDARIES[step].ttlSeconds;

/**
 * Whether a node's annotation already says `ttlSeconds`: upstream compares the integer it parses
 * (Go's Atoi: an optional sign and decimal digits), and rewrites one it cannot parse.
 */
export function annotationSays(value: string | null | undefined, ttlSeconds: number): boolean {
  if (value === null || value === undefined || !/^[+-]?\d+$/.test(value)) return false;
  return Number(value) === ttlSeconds;
}
