import { Connection, type TLSConfig } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { onAbort, sleep } from '../activities/kube/abort';
import { ContactClock } from '../activities/kube/fence';
import { TEMPORAL_CHANNEL_ARGS } from '../starter/run-options';
import { ensureSearchAttributes } from './search-attributes';

export interface TemporalConnections {
  /** the client's (starts, signals, queries, the contact probe) */
  connection: Connection;
  /** the workers' (polls, completions) */
  native: NativeConnection;
}

export interface ConnectOptions {
  address: string;
  namespace: string;
  tls?: TLSConfig;
  logger: Logger;
  /** aborted (SIGTERM while waiting): the wait ends with an error */
  signal?: AbortSignal;
  /** told why the replica is not up yet while it waits, and undefined once connected */
  waiting?(why: string | undefined): void;
}

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** the same failure again is logged this often, not at every retry */
const REPEAT_LOG_MS = 60_000;

const STOPPED = 'stopped while waiting for Temporal';

/** `p`, or a rejection as soon as `signal` is aborted */
function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const off = onAbort(signal, () => reject(new Error(STOPPED)));
    p.then(resolve, reject).finally(off);
  });
}

/**
 * Connects to Temporal, waiting as long as it takes. A replica started while Temporal is down (a
 * cluster coming up, a Temporal upgrade) waits for it, as upstream's manager waits for its API
 * server, instead of exiting and leaving the restart to whatever supervises it. It serves /healthz
 * meanwhile and answers /readyz 503 with the reason. A namespace without our search attributes
 * that these credentials may not add them to is waited on as well, and said each minute.
 */
export async function connectTemporal(o: ConnectOptions): Promise<TemporalConnections> {
  let delay = FIRST_RETRY_MS;
  let lastLogged: { message: string; at: number } | undefined;
  // an attempt against an address that does not answer takes the client's connect deadline (10 s)
  o.waiting?.(`connecting to Temporal at ${o.address}`);
  for (;;) {
    /** the client connection this attempt opened, to close when the attempt fails */
    const opened: { connection?: Connection } = {};
    const attempt = (async (): Promise<TemporalConnections> => {
      const connection = await Connection.connect({ address: o.address, tls: o.tls, channelArgs: TEMPORAL_CHANNEL_ARGS });
      opened.connection = connection;
      await ensureSearchAttributes(connection, o.namespace);
      return { connection, native: await NativeConnection.connect({ address: o.address, tls: o.tls }) };
    })();
    try {
      // a stop does not wait for the attempt's deadline
      const connected = await abortable(attempt, o.signal);
      if (lastLogged) o.logger.info({ temporal: o.address }, 'Temporal reached');
      o.waiting?.(undefined);
      return connected;
    } catch (e) {
      if (o.signal?.aborted) {
        // the attempt goes on in the background: whatever it opens is closed
        attempt.then((c) => c.native.close(), () => undefined).finally(() => void opened.connection?.close().catch(() => undefined));
        throw e;
      }
      await opened.connection?.close().catch(() => undefined);
      const message = e instanceof Error ? e.message : String(e);
      o.waiting?.(`waiting for Temporal at ${o.address}: ${message}`);
      const now = Date.now();
      if (!lastLogged || lastLogged.message !== message || now - lastLogged.at >= REPEAT_LOG_MS) {
        o.logger.warn({ temporal: o.address, namespace: o.namespace, error: message, retryInMs: delay }, 'cannot reach Temporal; waiting for it');
        lastLogged = { message, at: now };
      }
      await sleep(delay, o.signal);
      if (o.signal?.aborted) throw new Error(STOPPED);
      delay = Math.min(MAX_RETRY_MS, delay * 2);
    }
  }
}

/** the probe's period while no activity runs: enough for /readyz */
const CONTACT_IDLE_EVERY_MS = 10_000;
/**
 * the probe's period while activities run and for 10 s after: each attempt's fence
 * (activities/kube/fence.ts) allows a few seconds without an answer, so answers must come several
 * times within that
 */
const CONTACT_BUSY_EVERY_MS = 500;
const CONTACT_DEADLINE_MS = 5_000;
/** this long without an answer and the replica is not ready: two missed probes and a bit */
const CONTACT_STALE_MS = 25_000;

/**
 * Whether Temporal has answered this replica lately. Workers keep polling through an outage
 * (core retries), so their state says RUNNING while nothing reaches them; /readyz asks this
 * instead. The probe is GetSystemInfo, the call every SDK client makes first: cheap for the
 * frontend, and it goes to the address the workers poll. Its answers also feed the fence's
 * ContactClock, so it probes often while activities run and rarely otherwise.
 */
export class TemporalContact {
  private lastError: string | undefined;
  private lastProbeAt = 0;
  /** the probe under way: a confirmation joins it rather than sending another */
  private inFlight: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly logger: Logger,
    private readonly address: string,
    private readonly clock: ContactClock = new ContactClock(),
  ) {}

  /** One GetSystemInfo, or the one already under way: whether Temporal answered. */
  private probe(): Promise<boolean> {
    this.inFlight ??= (async () => {
      this.lastProbeAt = Date.now();
      try {
        await this.connection.withDeadline(Date.now() + CONTACT_DEADLINE_MS, () => this.connection.workflowService.getSystemInfo({}));
        if (this.lastError !== undefined) this.logger.info({ temporal: this.address }, 'Temporal answers again');
        this.clock.heard();
        this.lastError = undefined;
        return true;
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (this.lastError === undefined) this.logger.warn({ temporal: this.address, error: message }, 'Temporal does not answer; controllers wait for it');
        this.lastError = message;
        this.clock.failed();
        return false;
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      const every = this.clock.probingOften() ? CONTACT_BUSY_EVERY_MS : CONTACT_IDLE_EVERY_MS;
      if (Date.now() - this.lastProbeAt >= every) void this.probe();
    }, CONTACT_BUSY_EVERY_MS);
    this.timer.unref();
    this.clock.setAsker(() => this.probe());
    this.stopWatch = this.clock.watch();
    void this.probe();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.stopWatch?.();
  }

  /** undefined when Temporal answered lately, else why not */
  problem(now = Date.now()): string | undefined {
    const lastOk = this.clock.lastHeard();
    if (now - lastOk < CONTACT_STALE_MS) return undefined;
    return `Temporal at ${this.address} has not answered for ${Math.round((now - lastOk) / 1000)}s: ${this.lastError ?? 'no answer'}`;
  }
}
