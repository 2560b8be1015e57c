import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { shadowEntriesSignal, shadowLedgerWorkflowId, type ShadowLedgerInput } from '../../workflows/shadow/ledger';
import type { ShadowBatch, ShadowEntry, ShadowLedgerSettings, ShadowReconcile } from '../../workflows/shadow/types';
import type { RawTap } from '../informers/cache';
import { ManagerWrites } from './observer';

/** How often a replica sends its entries: the ledger matches within seconds, so a second's batching costs nothing. */
const FLUSH_PERIOD_MS = 1000;
/** Per signal: well under Temporal's 2 MiB payload limit, pod specs included. */
const MAX_BATCH_ENTRIES = 200;
const MAX_BATCH_BYTES = 512 * 1024;
/** Entries held while the ledger cannot be reached; past this the oldest go, with a warning. */
const MAX_HELD = 20_000;

/** `/apis/apps/v1/replicasets` → `replicasets`: how a proposal's path names its resource too. */
const pluralOf = (collectionPath: string) => collectionPath.replace(/\?.*$/, '').split('/').filter(Boolean).pop() ?? '';

/**
 * A replica's line to its deployment's shadow ledger: entries are batched and sent once a second
 * with signalWithStart, so the first replica to send starts the ledger. A batch that fails is kept
 * and sent again; its ID lets the ledger drop a repeat.
 */
export class ShadowFeed {
  private held: ShadowEntry[] = [];
  private reconciles: NonNullable<ShadowBatch['reconciles']> = [];
  private seq = 0;
  private readonly replica = randomUUID();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private dropped = 0;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly settings: ShadowLedgerSettings,
    private readonly logger: Logger,
  ) {}

  get workflowId(): string {
    return shadowLedgerWorkflowId(this.taskQueue);
  }

  add(e: ShadowEntry): void {
    this.held.push(e);
    if (this.held.length > MAX_HELD) {
      this.dropped += this.held.length - MAX_HELD;
      this.held.splice(0, this.held.length - MAX_HELD);
    }
  }

  /** A reconcile of ours ended: the ledger learns that its workflow saw the object since it started. */
  reconciled(r: ShadowReconcile): void {
    this.reconciles.push(r);
    if (this.reconciles.length > MAX_HELD) this.reconciles.splice(0, this.reconciles.length - MAX_HELD);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_PERIOD_MS);
    this.timer.unref();
  }

  /** Sends what is held; at most one flush runs at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.send().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async send(): Promise<void> {
    if (this.dropped) {
      this.logger.warn({ dropped: this.dropped, ledger: this.workflowId }, 'shadow ledger unreachable: oldest entries dropped');
      this.dropped = 0;
    }
    while (this.held.length || this.reconciles.length) {
      let n = 0;
      let bytes = 0;
      while (n < this.held.length && n < MAX_BATCH_ENTRIES) {
        bytes += JSON.stringify(this.held[n]).length;
        if (n > 0 && bytes > MAX_BATCH_BYTES) break;
        n++;
      }
      const reconciles = this.reconciles.slice(0, MAX_BATCH_ENTRIES * 5);
      const batch: ShadowBatch = { id: `${this.replica}:${this.seq}`, entries: this.held.slice(0, n), ...(reconciles.length ? { reconciles } : {}) };
      try {
        await this.client.workflow.signalWithStart('shadowLedgerWorkflow', {
          workflowId: this.workflowId,
          taskQueue: this.taskQueue,
          args: [{ settings: this.settings } satisfies ShadowLedgerInput],
          signal: shadowEntriesSignal,
          signalArgs: [batch],
          staticSummary: 'shadow ledger: what this deployment proposed, set beside what the cluster\'s manager did',
        });
      } catch (e) {
        this.logger.warn({ err: String(e), entries: n, ledger: this.workflowId }, 'could not send shadow entries; will retry');
        return;
      }
      this.seq++;
      this.held.splice(0, n);
      this.reconciles.splice(0, reconciles.length);
    }
  }

  /** The raw tap that turns the cluster manager's writes, on every watched resource, into entries of theirs. */
  managerWrites(): RawTap {
    const by = new Map<string, ManagerWrites>();
    const of = (path: string) => {
      let w = by.get(path);
      if (!w) by.set(path, (w = new ManagerWrites(pluralOf(path), (e) => this.add(e))));
      return w;
    };
    return {
      listed: (path, objects) => of(path).listed(objects),
      event: (path, type, obj) => of(path).event(type, obj as Parameters<ManagerWrites['event']>[1]),
    };
  }
}
