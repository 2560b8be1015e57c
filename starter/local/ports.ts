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
 * Hands out distinct free loopback ports for one `up`. The kernel's ephemeral picks can repeat once
 * a probe socket closes, so we remember what this allocator already gave out.
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
