import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError, KubeRest } from './rest';
import { RESOURCES, resourcePath } from './resources';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
}

export type EventType = 'Normal' | 'Warning';

/** client-go's event spam filter: per source and object and type, a burst of 25, then one per 5 minutes. */
const SPAM_BURST = 25;
const SPAM_REFILL_PER_MS = 1 / 300_000;
const SPAM_KEYS_MAX = 4096;

export type RecordEvent = (component: string, target: EventTarget, type: EventType, reason: string, message: string) => void;

/**
 * client-go's broadcaster tries one event up to 12 times, 10 s apart (the first wait a random share
 * of that, so recorders don't all come back at once after an outage), while the server can't be
 * reached. A refusal by the server is final.
 */
export interface EventRetry {
  maxTries: number;
  sleepMs: number;
}
export const EVENT_RETRY: EventRetry = { maxTries: 12, sleepMs: 10_000 };

/**
 * Whether an event write that failed with `e` is tried again. Upstream's sink retries only when no
 * answer came; our rest layer already repeats throttled and 5xx answers inside the call (the event's
 * name is fixed before the first try, so a repeat of one that landed is a harmless 409), and a
 * 5xx that outlived those repeats is retried here too: an event lost to a server restart is one a
 * user never sees, and trying again costs one request.
 */
export function eventWriteRetryable(e: unknown): boolean {
  return e instanceof ApiError ? e.transient : true;
}

/**
 * Records core/v1 Events on objects, as upstream controllers' recorders do, so that `kubectl
 * describe` shows them, with the same spam limit, so a 500-pod scale-up leaves 25 events, not 500.
 * Best effort and asynchronous: a lost Event must never fail or slow the write it reports.
 */
export function createEventRecorder(rest: KubeRest, instance: string, logger: Logger, retry: EventRetry = EVENT_RETRY): RecordEvent {
  const buckets = new Map<string, { tokens: number; at: number }>();

  function allowed(key: string): boolean {
    const now = Date.now();
    const b = buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) * SPAM_REFILL_PER_MS);
    b.at = now;
    buckets.delete(key); // re-insert: Map order doubles as least-recently-used order
    buckets.set(key, b);
    if (buckets.size > SPAM_KEYS_MAX) buckets.delete(buckets.keys().next().value!);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  async function write(namespace: string, body: object, reason: string, key: string): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await rest.request('POST', resourcePath(RESOURCES.events, namespace), { body, idempotent: true });
        return;
      } catch (e) {
        // made by an earlier try whose answer was lost
        if (e instanceof ApiError && e.status === 409 && e.reason === 'AlreadyExists') return;
        const again = eventWriteRetryable(e) && tries < retry.maxTries;
        logger.warn({ err: String(e), reason, key, tries, retrying: again }, 'could not record event');
        if (!again) return;
        const wait = tries === 1 ? retry.sleepMs * Math.random() : retry.sleepMs;
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }

  return (component, target, type, reason, message) => {
    const key = [component, instance, target.kind, target.namespace, target.name, target.uid, target.apiVersion, type].join('\u0000');
    if (!allowed(key)) return;
    const now = new Date().toISOString();
    // client-go files Events about cluster-scoped objects (nodes) in the default namespace
    const namespace = target.namespace || 'default';
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${target.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: target,
      reason,
      message,
      type,
      source: { component },
      reportingComponent: component,
      reportingInstance: instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    void write(namespace, body, reason, `${target.namespace}/${target.name}`);
  };
}
