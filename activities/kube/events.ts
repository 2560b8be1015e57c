import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { EventCorrelator } from './event-correlator';
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
 * describe` shows them as it shows upstream's: similar Events combined, a repeat counted on the
 * first, and the same spam limit, so a 500-pod scale-up leaves 25 writes, not 500 (see
 * EventCorrelator). Best effort and asynchronous: a lost Event must never fail or slow the write it
 * reports.
 */
export function createEventRecorder(rest: KubeRest, instance: string, logger: Logger, retry: EventRetry = EVENT_RETRY): RecordEvent {
  const correlator = new EventCorrelator();
  // one Event's writes in order (client-go sends all of them from one goroutine): a count patched
  // before the Event is made, or two patches crossing, would leave a wrong count
  const queues = new Map<string, Promise<void>>();

  /** A new Event; or a repeat: its count patched, or made again under its name when it is gone (client-go does the same). */
  async function send(namespace: string, body: { metadata: { name: string }; count: number; message: string; lastTimestamp: string }): Promise<void> {
    if (body.count > 1) {
      try {
        await rest.request('PATCH', resourcePath(RESOURCES.events, namespace, body.metadata.name), {
          body: { count: body.count, message: body.message, lastTimestamp: body.lastTimestamp },
          contentType: 'application/strategic-merge-patch+json',
          idempotent: true,
        });
        return;
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 404)) throw e;
      }
    }
    await rest.request('POST', resourcePath(RESOURCES.events, namespace), { body, idempotent: true });
  }

  async function write(namespace: string, body: { metadata: { name: string }; count: number; message: string; lastTimestamp: string }, reason: string, key: string): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await send(namespace, body);
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
    const now = Date.now();
    const c = correlator.correlate({ component, involvedObject: target, type, reason, message }, now, `${target.name}.${randomBytes(8).toString('hex')}`);
    if (c.skip) return;
    // client-go files Events about cluster-scoped objects (nodes) in the default namespace
    const namespace = target.namespace || 'default';
    const combined = c.message !== message;
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: c.name, namespace },
      involvedObject: target,
      reason,
      message: c.message,
      type,
      source: { component },
      // client-go's combined Event is a new one that names no reporting controller
      ...(combined ? {} : { reportingComponent: component, reportingInstance: instance }),
      firstTimestamp: c.firstTimestamp,
      lastTimestamp: new Date(now).toISOString(),
      count: c.count,
    };
    const next = (queues.get(c.name) ?? Promise.resolve()).then(() => write(namespace, body, reason, `${target.namespace}/${target.name}`));
    queues.set(c.name, next);
    void next.finally(() => {
      if (queues.get(c.name) === next) queues.delete(c.name);
    });
  };
}
