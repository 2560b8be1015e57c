/**
 * Where the watch stands, carried from one holder of the informer activity to the next in its
 * heartbeat, so a new holder resumes the watch instead of relisting every object into a signal.
 *
 * A position is, per watched collection path, a resourceVersion up to which every change the
 * routes turned into signals has been sent. A new holder lists each collection exactly at its
 * position (the state the last holder's routes had already told workflows about) with signals
 * muted, then watches from there: only the changes since reach workflows, as signals, the way
 * the last holder would have sent them.
 */
export type WatchPositions = Record<string, string>;

/** The informer activity's heartbeat details. */
export interface InformerHeartbeat {
  /** objects per store and per route-kept index, for anyone describing the workflow */
  sizes: Record<string, number>;
  /** absent until every store has listed once on this holder (or its predecessor's still hold) */
  positions?: WatchPositions;
}

/**
 * The positions in a previous attempt's heartbeat details, if it left any. Anything else (details
 * of a build before positions, a hand-edited history) means a full list, which is always correct.
 */
export function positionsFromHeartbeat(details: unknown): WatchPositions | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const positions = (details as { positions?: unknown }).positions;
  if (typeof positions !== 'object' || positions === null) return undefined;
  const out: WatchPositions = {};
  for (const [path, rv] of Object.entries(positions)) if (typeof rv === 'string' && /^\d+$/.test(rv)) out[path] = rv;
  return Object.keys(out).length ? out : undefined;
}

/** A storm whose signals cannot go out (Temporal down) must not grow the log without bound. */
const MAX_SNAPSHOTS = 256;

/**
 * Snapshots of the stores' positions, each dated by the count of signals queued when it was
 * taken. Routes queue their signals synchronously inside a store's event, so once every signal up
 * to a snapshot's count has been sent, every change up to its positions has reached its workflows:
 * the snapshot is safe to resume from. Pure: the informer feeds it on each heartbeat.
 */
export class PositionLog {
  private readonly snapshots: Array<{ queued: number; positions: WatchPositions }> = [];
  private safe?: WatchPositions;

  constructor(inherited?: WatchPositions) {
    // until this holder has a safe snapshot of its own, its predecessor's positions still hold:
    // nothing this holder has done since can have sent fewer signals than they promise
    this.safe = inherited;
  }

  /** Where every store stands now, after `queued` signals were queued in all. */
  record(queued: number, positions: WatchPositions): void {
    this.snapshots.push({ queued, positions });
    // dropping the oldest unsettled snapshot only makes the next safe one newer, never unsafe
    if (this.snapshots.length > MAX_SNAPSHOTS) this.snapshots.shift();
  }

  /** Every signal numbered up to `sentThrough` has gone out: the newest snapshot it covers is safe. */
  settle(sentThrough: number): WatchPositions | undefined {
    let i = -1;
    for (let j = 0; j < this.snapshots.length && this.snapshots[j].queued <= sentThrough; j++) i = j;
    if (i >= 0) {
      this.safe = this.snapshots[i].positions;
      this.snapshots.splice(0, i + 1);
    }
    return this.safe;
  }
}
