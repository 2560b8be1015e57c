import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { KubeRest } from './rest';
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
 * Records core/v1 Events on objects, as upstream controllers' recorders do, so that `kubectl
 * describe` shows them, with the same spam limit, so a 500-pod scale-up leaves 25 events, not 500.
 * Best effort and asynchronous: a lost Event must never fail or slow the write it reports.
 */
export function createEventRecorder(rest: KubeRest, instance: string, logger: Logger): RecordEvent {
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
    rest.request('POST', resourcePath(RESOURCES.events, namespace), { body }).catch((e: unknown) => {
      logger.warn({ err: String(e), reason, key: `${target.namespace}/${target.name}` }, 'could not record event');
    });
  };
}
