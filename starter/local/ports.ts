import * as fs from 'node:fs';
import * as net from 'node:net';

export class PortInUseError extends Error {
  constructor(readonly port: number, readonly purpose: string, host = '127.0.0.1') {
    super(`port ${port} (wanted for ${purpose}) is already in use on ${host} by another process; ` +
      `stop that process or choose another port with the matching --*-port flag`);
  }
}

/** True if we can bind 127.0.0.1:port right now. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

async function ephemeralPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host, exclusive: true }, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The first port of the kernel's ephemeral range: the ports it gives outgoing connections (and
 * bind(0)). Linux says in /proc; elsewhere the IANA range's start is the safe guess.
 */
export function ephemeralRangeStart(): number {
  try {
    const lo = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(lo) && lo > 1024) return lo;
  } catch {
    /* not Linux */
  }
  return 49152;
}

/** Where listening ports are picked: below the ephemeral range, above the well-known and registered crowd. */
const PICK_FLOOR = 10_000;

/**
 * The range free ports are picked from: TEMPORAL_KCM_PORT_RANGE (`LOW-HIGH`, inclusive) when set,
 * else PICK_FLOOR up to the ephemeral range's start. Stacks that run side by side on one machine
 * (the test lanes) each get a range of their own, so two of them never pick the same port between
 * one's probe and its part's bind.
 */
export function pickRange(env: NodeJS.ProcessEnv = process.env): { low: number; high: number } {
  const spec = env.TEMPORAL_KCM_PORT_RANGE;
  if (!spec) return { low: PICK_FLOOR, high: ephemeralRangeStart() - 1 };
  const m = /^(\d+)-(\d+)$/.exec(spec.trim());
  const low = m ? Number(m[1]) : NaN;
  const high = m ? Number(m[2]) : NaN;
  if (!(low >= 1024 && high <= 65535 && high - low >= 100)) {
    throw new Error(`TEMPORAL_KCM_PORT_RANGE=${spec}: want LOW-HIGH, 1024 <= LOW, HIGH <= 65535, at least 100 ports`);
  }
  return { low, high };
}

/** Splits the default pick range into `count` disjoint ranges; `index` (0-based) names one, as TEMPORAL_KCM_PORT_RANGE wants it. */
export function laneRange(index: number, count: number): string {
  const low = PICK_FLOOR;
  const size = Math.floor((ephemeralRangeStart() - low) / count);
  return `${low + index * size}-${low + (index + 1) * size - 1}`;
}

/**
 * Hands out distinct free ports for one `up` (or one test run). Ports are picked at random below
 * the kernel's ephemeral range: a port the kernel chose (bind(0)) lies inside that range, so
 * between our probe closing and the part binding it, any outgoing connection on the machine could
 * take it as its local port (CI once saw Temporal's Web UI fail to bind that way). Outgoing
 * connections never use ports below the range, so only another listener could race us there.
 */
export class PortAllocator {
  private readonly taken = new Set<number>();

  /** `requested` > 0 must be free (or it is an error); 0 means any free port. `host`: where it will be bound. */
  async take(purpose: string, requested = 0, host = '127.0.0.1'): Promise<number> {
    if (requested > 0) {
      if (this.taken.has(requested) || !(await isPortFree(requested, host))) throw new PortInUseError(requested, purpose, host);
      this.taken.add(requested);
      return requested;
    }
    const { low, high } = pickRange();
    if (high - low >= 100) {
      for (let i = 0; i < 100; i++) {
        const p = low + Math.floor(Math.random() * (high - low + 1));
        if (this.taken.has(p)) continue;
        // claimed before the probe, so concurrent takes never hand out the same port
        this.taken.add(p);
        if (await isPortFree(p, host)) return p;
        this.taken.delete(p);
      }
    }
    // no room below the range (an unusual kernel setting): the kernel's pick, as before
    for (let i = 0; i < 50; i++) {
      const p = await ephemeralPort(host);
      if (!this.taken.has(p)) {
        this.taken.add(p);
        return p;
      }
    }
    throw new Error(`could not find a free port for ${purpose}`);
  }

  reserve(port: number): void {
    this.taken.add(port);
  }
}

/** Resolves when something accepts TCP connections on host:port. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok: boolean) => { sock.destroy(); resolve(ok); };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}
