import * as http from 'node:http';
import * as net from 'node:net';
import type { TelemetryOptions } from '@temporalio/worker';

/**
 * The Temporal SDK's own metrics (workflow task failures and latencies, poll results, slots, sticky
 * cache hits: `temporal_*`), served on our /metrics after our registry's. Core computes them in Rust
 * and serves them through its Prometheus exporter on a loopback port of its own; /metrics reads
 * that page per scrape. The SDK's buffered exporter would hand every update to JS instead, work on
 * the thread every reconcile already shares, and it is experimental.
 */
export interface SdkMetrics {
  telemetry: TelemetryOptions;
  /** the exporter's page, or '' while it is not up (before the first worker starts the runtime) */
  read(): Promise<string>;
}

/** A loopback port free now; the exporter binds it when the runtime starts, moments later. */
async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function get(url: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode}`));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

export async function sdkMetrics(): Promise<SdkMetrics> {
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}/metrics`;
  return {
    telemetry: {
      metrics: {
        // Temporal's published dashboards use the default names (temporal_ prefix, no _total or unit
        // suffix); only durations are in seconds, as every other duration on /metrics is
        prometheus: { bindAddress: `127.0.0.1:${port}`, useSecondsForDurations: true },
      },
    },
    read: async () => {
      try {
        const text = await get(url, 2000);
        return text.endsWith('\n') || text === '' ? text : `${text}\n`;
      } catch {
        return '';
      }
    },
  };
}
