import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { KubeRest } from './rest';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
}

export type EventType = 'Normal' | 'Warning';

/**
 * Records a core/v1 Event on an object, as upstream controllers' event recorders do, so that
 * `kubectl describe` shows it. Best effort: a lost Event must never fail the write it reports.
 */
export class EventRecorder {
  constructor(private readonly rest: KubeRest, private readonly component: string, private readonly instance: string, private readonly logger: Logger) {}

  async record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${target.name}.${randomBytes(8).toString('hex')}`, namespace: target.namespace },
      involvedObject: target,
      reason,
      message,
      type,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    try {
      await this.rest.request('POST', `/api/v1/namespaces/${target.namespace}/events`, { body });
    } catch (e) {
      this.logger.warn({ err: String(e), reason, object: `${target.namespace}/${target.name}` }, 'could not record event');
    }
  }
}
