import type { Client } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Logger } from 'pino';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { boundedWorkflowId } from '../../workflows/runtime/workflow-ids';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE, SA_UID } from '../../workflows/search-attributes';

/**
 * Who a signal is for: the object's workflow, started by the signal if it is not running, on its
 * controller's task queue. The workflow is named by its function, so its input is type-checked
 * and a renamed workflow fails to compile instead of failing at run time.
 */
export interface Target<W extends Workflow = Workflow> {
  controller: string;
  workflow: W;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  /** the workflow's input, used only when the signal starts it */
  args: Parameters<W>[0];
  /** default `<controller>/<namespace>/<name>` */
  workflowId?: string;
}

interface Pending {
  target: Target;
  event: unknown;
  merge: (earlier: unknown, later: unknown) => unknown;
  /** something in it needs action (a pod gone, a spec changed), not just a status to record */
  urgent: boolean;
  /** the number of the earliest queued event merged into it (see Signaller.sentThrough) */
  first: number;
}

/**
 * Collects events per workflow ID and sends each key one merged signal per flush, with
 * signalWithStart. A failed send keeps the event for the next flush, merged with what came since.
 */
/**
 * A key signalled this recently waits for the next flush after the interval: the first event of
 * a quiet object goes out at once, while a storm on one object (a big rollout, a burst of pod
 * updates) costs at most a couple of signals a second, each carrying everything merged so far.
 */
export const HOT_KEY_INTERVAL_MS = 500;

/**
 * An urgent event (one the workflow must act on: a pod gone, a spec changed) waits only this long
 * after its key's last signal. Upstream's workqueue takes a key again as soon as the last sync
 * ends, so a pod deleted right after a status flurry is replaced at once there; holding it for the
 * hot-key interval would add up to half a second to that replacement.
 */
export const URGENT_INTERVAL_MS = 50;

export class Signaller {
  private pending = new Map<string, Pending>();
  private lastSent = new Map<string, number>();
  /** taken from `pending` by a flush and not sent yet */
  private readonly inFlight = new Set<Pending>();
  private wake?: () => void;
  private muting = 0;
  /** events queued so far, in all: each queued event is numbered by this count */
  queued = 0;
  /** events dropped because they were queued while muted */
  skipped = 0;
  sent = 0;
  errors = 0;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly logger: Logger,
    private readonly onSent?: (controller: string) => void,
    /** put before every object workflow's ID (a --shadow replica's SHADOW_WORKFLOW_ID_PREFIX) */
    private readonly idPrefix = '',
  ) {}

  get size(): number {
    return this.pending.size;
  }

  queue<W extends Workflow, E>(target: Target<W>, event: E, merge: (earlier: E, later: E) => E, urgent = false): void {
    if (this.muting) {
      this.skipped++;
      return;
    }
    const n = ++this.queued;
    const id = boundedWorkflowId(this.idPrefix + (target.workflowId ?? `${target.controller}/${target.namespace}/${target.name}`));
    const prev = this.pending.get(id);
    const m = merge as (a: unknown, b: unknown) => unknown;
    const item: Pending = { target, event: prev ? m(prev.event, event) : event, merge: m, urgent: urgent || !!prev?.urgent, first: prev?.first ?? n };
    this.pending.set(id, item);
    if (this.wake && this.due(id, item, Date.now())) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    }
  }

  /**
   * Waits up to `ms`, or less when a key that may go out now is queued: a quiet object's event (or
   * an urgent one past its short interval) is sent within a tick instead of at the next period. The
   * tick lets a watch chunk's other events join the same flush; hot keys still wait out their
   * interval, so storms of status changes stay coalesced.
   */
  idle(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let finished = false;
      const wake = () => setImmediate(done);
      const done = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        if (this.wake === wake) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.wake = wake;
    });
  }

  /**
   * Runs `fn` with every event it queues dropped, and says how many: the routes' reaction to a
   * list of what the last holder of the watch had already signalled (see WatchPositions) would
   * only repeat it.
   */
  muted(fn: () => void): number {
    const before = this.skipped;
    this.muting++;
    try {
      fn();
    } finally {
      this.muting--;
    }
    return this.skipped - before;
  }

  /**
   * Runs `fn` with its events sent even inside `muted`: for a check a route makes of the state as a
   * whole rather than of the listed objects (the garbage collector's dependents whose owners are
   * gone, once every store has listed), which the last holder may never have made: that state can
   * have come about while no watch ran, and reach this holder as a list instead of an event.
   */
  unmuted(fn: () => void): void {
    const muting = this.muting;
    this.muting = 0;
    try {
      fn();
    } finally {
      this.muting = muting;
    }
  }

  /** Every event numbered up to this has been sent (none is pending or in flight). */
  sentThrough(): number {
    let oldest = this.queued + 1;
    for (const item of this.pending.values()) oldest = Math.min(oldest, item.first);
    for (const item of this.inFlight) oldest = Math.min(oldest, item.first);
    return oldest - 1;
  }

  /** May this key's pending signal go out now? */
  private due(id: string, item: Pending, now: number): boolean {
    const sentAt = this.lastSent.get(id);
    return sentAt === undefined || now - sentAt >= (item.urgent ? URGENT_INTERVAL_MS : HOT_KEY_INTERVAL_MS);
  }

  async flush(concurrency = 32): Promise<void> {
    const now = Date.now();
    for (const [id, at] of this.lastSent) if (now - at >= HOT_KEY_INTERVAL_MS) this.lastSent.delete(id);
    // urgent events first: a pod to replace must not wait behind a storm's status signals
    const batch = [...this.pending.entries()].filter(([id, item]) => this.due(id, item, now)).sort(([, a], [, b]) => Number(b.urgent) - Number(a.urgent));
    for (const [id, item] of batch) {
      this.pending.delete(id);
      this.inFlight.add(item);
      this.lastSent.set(id, now);
    }
    const sends = new Set<Promise<void>>();
    for (const [id, item] of batch) {
      const p: Promise<void> = this.send(id, item).finally(() => sends.delete(p));
      sends.add(p);
      if (sends.size >= concurrency) await Promise.race(sends);
    }
    await Promise.all(sends);
  }

  private async send(workflowId: string, item: Pending): Promise<void> {
    const t = item.target;
    try {
      await this.client.workflow.signalWithStart(t.workflow, {
        workflowId,
        taskQueue: controllerTaskQueue(this.taskQueue, t.controller),
        args: [t.args],
        signal: OBJECT_EVENT_SIGNAL,
        signalArgs: [item.event],
        // the Web UI shows it in the workflow list and at the top of the history
        staticSummary: `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} (${t.controller})`,
        typedSearchAttributes: [
          { key: SA_CONTROLLER, value: t.controller },
          { key: SA_KIND, value: t.kind },
          { key: SA_NAMESPACE, value: t.namespace },
          { key: SA_NAME, value: t.name },
          { key: SA_UID, value: t.uid },
        ],
      });
      this.sent++;
      this.onSent?.(t.controller);
    } catch (e) {
      this.errors++;
      this.logger.warn({ controller: t.controller, key: `${t.namespace}/${t.name}`, err: String(e) }, 'signal failed; will retry');
      const prev = this.pending.get(workflowId);
      this.pending.set(workflowId, { ...item, event: prev ? item.merge(item.event, prev.event) : item.event, urgent: item.urgent || !!prev?.urgent,
        first: Math.min(item.first, prev?.first ?? item.first) });
    } finally {
      this.inFlight.delete(item);
    }
  }
}
