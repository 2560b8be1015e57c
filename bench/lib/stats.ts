const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** Nearest-rank percentile (p in 0..100); NaN for no samples. */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = sorted(xs);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const min = (xs: number[]) => (xs.length ? Math.min(...xs) : NaN);
export const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);

export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
}

export function spread(xs: number[]): Spread {
  const ok = xs.filter((x) => Number.isFinite(x));
  return { n: ok.length, median: median(ok), min: min(ok), max: max(ok) };
}
