import type { Client } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Logger } from 'pino';
import { FOLDED_FIELD, OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
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
  /**
   * The event cut down to fit a payload, its state trimmed or left out for the workflow to read:
   * for a controller whose events carry snapshots that can outgrow one (see SIGNAL_BUDGET_BYTES).
   * Asked only at a send, once per burst, of an event past the budget.
   */
  shrink?: (event: unknown) => unknown;
}

/**
 * A controller's rule for events its workflow need not see yet, declared in its descriptor
 * (`signalGate`). It runs the workflow's own decision on what the shared cache holds for the
 * object; it may only err toward sending.
 */
export interface SignalGate {
  /**
   * Would the object's workflow write anything if it reconciled on what the cache holds now?
   * False only when sure it would not: the event that changed the cache is then held.
   */
  wouldAct(target: Target): boolean;
  /**
   * An event carrying the object's whole current state from the cache, or, when the cache cannot
   * say, one that has the workflow read it from the API. A holder that took over the watch from
   * another merges it into its first signal to each object: events the last holder held died
   * with it, and its watch position had passed them.
   */
  full(target: Target): unknown;
}

interface Pending {
  target: Target;
  event: unknown;
  merge: (earlier: unknown, later: unknown) => unknown;
  /** something in it needs action (a pod gone, a spec changed), not just a status to record */
  urgent: boolean;
  /** the number of the earliest queued event merged into it (see Signaller.sentThrough) */
  first: number;
  /** how many queued events are merged into it: `why` shows it as the signal's `folded` */
  events: number;
  /** a new, deleted or relisted object, or a hold that ran out: its controller's gate is not asked */
  force: boolean;
  /** of `events`, how many a gate has held already (each is counted once in `held`) */
  counted: number;
  /** when a gate last held it (it stays held until a new event joins it or the hold runs out) */
  heldSince?: number;
  /** its hold ran out: the gate is asked again, by time alone */
  expired?: boolean;
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

/**
 * An event of a target with `shrink` that weighs more than this as JSON goes out shrunk: Temporal
 * refuses a payload over 2 MiB, every send of it would fail and be queued again, and the object
 * would never be reconciled. The codec's compression is not counted on.
 */
export const SIGNAL_BUDGET_BYTES = 1536 * 1024;

/** --max-signal-hold's default: how long a gate holds an object's events before it is asked about them again. */
export const DEFAULT_MAX_HOLD_MS = 5 * 60_000;

/** Held events are looked at for a hold that ran out at most this often, not at every flush. */
const HELD_SCAN_MS = 1_000;

export interface SignallerOptions {
  onSent?: (controller: string, folded: number) => void;
  /** events a gate held, by controller (each event counted once however long it stays held) */
  onHeld?: (controller: string, events: number) => void;
  /** an object's held events go out because its hold ran out and the gate, asked again, said the workflow would act */
  onHoldExpired?: (controller: string) => void;
  /** an event too large for a payload went out shrunk (see SIGNAL_BUDGET_BYTES) */
  onShrunk?: (controller: string) => void;
  /** a controller's signal gate threw (the signaller has logged it, and sent the event ungated) */
  onGateThrew?: (controller: string) => void;
  /** put before every object workflow's ID (a --shadow replica's SHADOW_WORKFLOW_ID_PREFIX) */
  idPrefix?: string;
  /** --max-signal-hold */
  maxHoldMs?: number;
}

export class Signaller {
  private pending = new Map<string, Pending>();
  /** what a gate held: not due until another event for the key joins it or the hold runs out */
  private readonly held = new Map<string, Pending>();
  private readonly gates = new Map<string, SignalGate>();
  /**
   * After taking over the watch: the keys of gated controllers already sent their full state. It
   * is kept until the next takeover, as any gated key may still have a lost held event; it grows to
   * at most one ID per gated object, which the informer's stores hold anyway.
   */
  private refreshed?: Set<string>;
  private lastHeldScan = 0;
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
  /** events gates held, in all (each once) */
  heldEvents = 0;
  /** holds that ran out and then went out (the gate, asked again, said the workflow would act) */
  holdsExpired = 0;
  /** events sent shrunk, too large for a payload */
  shrunk = 0;
  private readonly idPrefix: string;
  private readonly maxHoldMs: number;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly logger: Logger,
    private readonly options: SignallerOptions = {},
  ) {
    this.idPrefix = options.idPrefix ?? '';
    this.maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
  }

  /** keys with a signal to send (held ones not counted) */
  get size(): number {
    return this.pending.size;
  }

  /** keys whose events a gate is holding */
  get heldKeys(): number {
    return this.held.size;
  }

  /** Installs a controller's gate: its events are sent only when it says the workflow would act (none with a hold of 0). */
  gate(controller: string, gate: SignalGate): void {
    if (this.maxHoldMs > 0) this.gates.set(controller, gate);
  }

  /**
   * This holder took over a watch at the last holder's position: its first signal to each key of
   * a gated controller carries the object's full state (see SignalGate.full).
   */
  resumed(): void {
    this.refreshed = new Set();
  }

  /**
   * `force`: the event is about a new, deleted or relisted object, which always goes out; the
   * gate is asked about every other one.
   */
  queue<W extends Workflow, E>(target: Target<W>, event: E, merge: (earlier: E, later: E) => E, urgent = false, force = false): void {
    if (this.muting) {
      this.skipped++;
      return;
    }
    const n = ++this.queued;
    const id = this.idOf(target);
    const prev = this.pending.get(id) ?? this.held.get(id);
    this.held.delete(id);
    const m = merge as (a: unknown, b: unknown) => unknown;
    // a held item that takes a new event is judged again, on the cache as it now stands
    const item: Pending = { target, event: prev ? m(prev.event, event) : event, merge: m, urgent: urgent || !!prev?.urgent, first: prev?.first ?? n,
      events: (prev?.events ?? 0) + 1, force: force || !!prev?.force, counted: prev?.counted ?? 0, heldSince: prev?.heldSince };
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

  private idOf(target: Target): string {
    return boundedWorkflowId(this.idPrefix + (target.workflowId ?? `${target.controller}/${target.namespace}/${target.name}`));
  }

  /**
   * Every event numbered up to this has been sent (none is pending or in flight), or is held by a
   * gate: a watch position may pass a held event, as a holder that takes over sends each gated
   * object its full state first (see `resumed`).
   */
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
    if (this.held.size && now - this.lastHeldScan >= HELD_SCAN_MS) {
      this.lastHeldScan = now;
      // A hold that ran out is judged again, for what time alone changes (a wait for availability
      // that no event ends). Held again, it costs nothing: sending it anyway put off a workflow
      // task rather than saving it (docs/BENCHMARKS.md, "Signal gates"). The workflow's view
      // catches up with the next event that needs work, or at its resync, which reads afresh.
      for (const [id, item] of this.held) {
        if (now - item.heldSince! < this.maxHoldMs) continue;
        this.held.delete(id);
        this.pending.set(id, { ...item, expired: true });
      }
    }
    const due = [...this.pending.entries()].filter(([id, item]) => this.due(id, item, now));
    const batch: Array<[string, Pending]> = [];
    for (const [id, item] of due) {
      const gate = item.force ? undefined : this.gates.get(item.target.controller);
      if (gate && !this.gateWouldAct(gate, item.target)) {
        this.pending.delete(id);
        this.held.set(id, { ...item, heldSince: item.expired || item.heldSince === undefined ? now : item.heldSince, expired: false, counted: item.events });
        this.heldEvents += item.events - item.counted;
        this.options.onHeld?.(item.target.controller, item.events - item.counted);
        continue;
      }
      if (item.expired) {
        this.holdsExpired++;
        this.options.onHoldExpired?.(item.target.controller);
      }
      batch.push([id, item]);
    }
    // urgent events first: a pod to replace must not wait behind a storm's status signals
    batch.sort(([, a], [, b]) => Number(b.urgent) - Number(a.urgent));
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

  /**
   * A gate's judgment; one that throws (a bug, or an object it cannot judge) lets the event go:
   * the gate only saves work, and the workflow, which decides for itself, reports what it cannot handle.
   */
  private gateWouldAct(gate: SignalGate, t: Target): boolean {
    try {
      return gate.wouldAct(t);
    } catch (e) {
      this.logger.error({ controller: t.controller, key: t.namespace ? `${t.namespace}/${t.name}` : t.name, err: e instanceof Error ? (e.stack ?? e.message) : String(e) },
        'the signal gate threw on this object; its event goes out ungated');
      this.options.onGateThrew?.(t.controller);
      return true;
    }
  }

  /** The event as it goes out: with the object's full state first after a takeover, and how many events it folds in. */
  private outgoing(workflowId: string, item: Pending): unknown {
    let event = item.event;
    const gate = this.gates.get(item.target.controller);
    if (gate && this.refreshed && !this.refreshed.has(workflowId)) {
      event = item.merge(event, gate.full(item.target));
    }
    if (item.target.shrink && Buffer.byteLength(JSON.stringify(event)) > SIGNAL_BUDGET_BYTES) {
      event = item.target.shrink(event);
      this.shrunk++;
      this.options.onShrunk?.(item.target.controller);
    }
    return item.events > 1 && event && typeof event === 'object' ? { ...event, [FOLDED_FIELD]: item.events } : event;
  }

  private async send(workflowId: string, item: Pending): Promise<void> {
    const t = item.target;
    try {
      const event = this.outgoing(workflowId, item);
      await this.client.workflow.signalWithStart(t.workflow, {
        workflowId,
        taskQueue: controllerTaskQueue(this.taskQueue, t.controller),
        args: [t.args],
        signal: OBJECT_EVENT_SIGNAL,
        signalArgs: [event],
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
      if (this.gates.has(t.controller)) this.refreshed?.add(workflowId);
      this.options.onSent?.(t.controller, item.events);
    } catch (e) {
      this.errors++;
      this.logger.warn({ controller: t.controller, key: `${t.namespace}/${t.name}`, err: String(e) }, 'signal failed; will retry');
      // what came meanwhile may be pending or held: both go out with this, ungated (the send was decided)
      const prev = this.pending.get(workflowId) ?? this.held.get(workflowId);
      this.held.delete(workflowId);
      this.pending.set(workflowId, { ...item, event: prev ? item.merge(item.event, prev.event) : item.event, urgent: item.urgent || !!prev?.urgent,
        first: Math.min(item.first, prev?.first ?? item.first), events: item.events + (prev?.events ?? 0), force: true, counted: item.counted + (prev?.counted ?? 0) });
    } finally {
      this.inFlight.delete(item);
    }
  }
}
