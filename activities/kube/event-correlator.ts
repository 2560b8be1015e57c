/**
 * What client-go's event recorder does to an Event before it is written, which is what `kubectl
 * get events` shows of a controller: similar Events (one object, one reason, other messages) past
 * ten in ten minutes become one "(combined from similar events): ..." Event whose count grows; an
 * Event seen before is not written again but its count and lastTimestamp patched; and per source
 * and object and type a burst of 25 writes, then one per 5 minutes, is all that is sent. Hand-written
 * because these numbers and this order are what makes our Events look like upstream's.
 */

export interface CorrelatedEvent {
  /** source component (the controller's event source, e.g. replicaset-controller) */
  component: string;
  involvedObject: { kind: string; namespace: string; name: string; uid: string; apiVersion: string };
  type: string;
  reason: string;
  message: string;
}

/** What to write: a new Event (count 1), or a patch of the one made before under `name` (count above 1). */
export type Correlation =
  | { skip: true }
  | { skip: false; name: string; message: string; count: number; firstTimestamp: string };

/** client-go's defaults: its LRU caches' size, the aggregation's threshold and interval, the spam filter's bucket */
const CACHE_ENTRIES = 4096;
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
const SPAM_BURST = 25;
const SPAM_REFILL_PER_MS = 1 / 300_000;
export const COMBINED_PREFIX = '(combined from similar events): ';

/** A map that forgets its least recently used entry past `max` (insertion order doubles as use order). */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value!);
  }
}

const join = (parts: string[]) => parts.join('\u0000');
const objectKey = (e: CorrelatedEvent) => [e.involvedObject.kind, e.involvedObject.namespace, e.involvedObject.name, e.involvedObject.uid, e.involvedObject.apiVersion];

export class EventCorrelator {
  private readonly aggregates = new Lru<{ messages: Set<string>; last: number }>(CACHE_ENTRIES);
  private readonly observed = new Lru<{ name: string; count: number; firstTimestamp: string }>(CACHE_ENTRIES);
  private readonly spam = new Lru<{ tokens: number; at: number }>(CACHE_ENTRIES);

  /**
   * Decides what becomes of `e` at `now` (ms), as client-go does in this order: aggregation, then
   * the seen-before count (which counts even an Event the spam filter then drops), then the spam
   * filter. `name` is the name a new Event gets; a repeat keeps the first one's.
   */
  correlate(e: CorrelatedEvent, now: number, name: string): Correlation {
    const aggregateKey = join([e.component, ...objectKey(e), e.type, e.reason]);
    let record = this.aggregates.get(aggregateKey);
    if (!record || now - record.last > AGGREGATE_INTERVAL_MS) record = { messages: new Set(), last: now };
    record.messages.add(e.message);
    record.last = now;
    this.aggregates.set(aggregateKey, record);
    let message = e.message;
    let key = join([aggregateKey, e.message]);
    if (record.messages.size >= AGGREGATE_MAX_EVENTS) {
      // client-go drops an arbitrary one of the messages it holds, so the set stays one short of
      // the threshold and every further new message is combined again; the oldest is as good as any
      record.messages.delete(record.messages.values().next().value!);
      message = COMBINED_PREFIX + e.message;
      key = aggregateKey;
    }
    const before = this.observed.get(key);
    const seen = before
      ? { ...before, count: before.count + 1 }
      : { name, count: 1, firstTimestamp: new Date(now).toISOString() };
    this.observed.set(key, seen);
    if (!this.allowed(join([e.component, ...objectKey(e), e.type]), now)) return { skip: true };
    return { skip: false, ...seen, message };
  }

  private allowed(key: string, now: number): boolean {
    const b = this.spam.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) * SPAM_REFILL_PER_MS);
    b.at = now;
    this.spam.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
