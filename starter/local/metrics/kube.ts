/**
 * A minimal kube-apiserver client for the metrics stand-in and `local up`'s own setup: JSON requests and a
 * list+watch pod cache over node's https, with the stack's admin certificate. Deliberately not
 * @kubernetes/client-node, whose loading alone costs a process ~0.5 s and ~60 MiB: the stand-in
 * runs for the stack's whole life next to everything else on the machine.
 */
import * as https from 'node:https';
import type { V1Pod } from '@kubernetes/client-node';
import { lineSplitter } from '../../../activities/kube/lines';

export interface KubeTarget {
  server: string; // https://127.0.0.1:port
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export class KubeError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
  }
}

export interface RequestOpts {
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  /** who is asking, as the API server's audit log names it */
  userAgent?: string;
}

export function kubeRequest<T>(t: KubeTarget, method: string, path: string, opts: RequestOpts = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const req = https.request(new URL(path, t.server), {
      method,
      ca: t.ca, cert: t.cert, key: t.key,
      timeout: opts.timeoutMs ?? 10_000,
      headers: {
        accept: 'application/json',
        'user-agent': opts.userAgent ?? 'temporal-kcm-metrics-standin',
        ...(body ? { 'content-type': opts.contentType ?? 'application/json', 'content-length': body.length } : {}),
      },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) {
          try { resolve(JSON.parse(text) as T); } catch (e) { reject(e); }
          return;
        }
        let reason = 'Unknown';
        let message = text.slice(0, 500);
        try {
          const st = JSON.parse(text) as { reason?: string; message?: string };
          reason = st.reason ?? reason;
          message = st.message ?? message;
        } catch { /* not a Status */ }
        reject(new KubeError(code, reason, `${method} ${path}: ${code} ${message}`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

type Logger = (event: string, fields?: Record<string, unknown>) => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Every pod of the cluster, kept by list then watch; the watch resumes from the last
 * resourceVersion it saw and relists on 410 Gone or when kube-apiserver goes away (a restart).
 */
export class PodCache {
  private readonly pods = new Map<string, V1Pod>();
  private rv = '';
  private synced = false;
  private stopped = false;
  private current?: import('node:http').ClientRequest;
  private firstSync: Promise<void>;
  private markSynced!: () => void;

  constructor(private readonly t: KubeTarget, private readonly log: Logger) {
    this.firstSync = new Promise((r) => (this.markSynced = r));
  }

  values(): IterableIterator<V1Pod> {
    return this.pods.values();
  }

  get(namespace: string, name: string): V1Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in (or after `ms`, whichever first). */
  waitForSync(ms: number): Promise<void> {
    return Promise.race([this.firstSync, sleep(ms)]).then(() => undefined);
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.current?.destroy();
  }

  private async loop(): Promise<void> {
    let backoff = 200;
    while (!this.stopped) {
      try {
        if (!this.rv) await this.relist();
        await this.watch();
        backoff = 200;
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof KubeError && e.code === 410) this.rv = '';
        this.log('pod watch interrupted', { err: (e as Error).message, retryMs: backoff });
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private async relist(): Promise<void> {
    const list = await kubeRequest<{ metadata: { resourceVersion: string }; items: V1Pod[] }>(this.t, 'GET', '/api/v1/pods?limit=0', { timeoutMs: 30_000 });
    this.pods.clear();
    for (const p of list.items) this.pods.set(`${p.metadata?.namespace}/${p.metadata?.name}`, p);
    this.rv = list.metadata.resourceVersion;
    if (!this.synced) this.log('pod cache synced', { pods: this.pods.size });
    this.synced = true;
    this.markSynced();
  }

  /** One watch request until the server ends it; events update the cache. */
  private watch(): Promise<void> {
    return new Promise((resolve, reject) => {
      const path = `/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${encodeURIComponent(this.rv)}`;
      const req = https.get(new URL(path, this.t.server), {
        ca: this.t.ca, cert: this.t.cert, key: this.t.key,
        headers: { accept: 'application/json', 'user-agent': 'temporal-kcm-metrics-standin' },
      }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new KubeError(res.statusCode ?? 0, 'WatchFailed', `watch pods: status ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', lineSplitter((line) => {
          let ev: { type: string; object: V1Pod & { code?: number; message?: string } };
          try {
            ev = JSON.parse(line) as typeof ev;
          } catch (e) {
            req.destroy();
            reject(e as Error);
            return false;
          }
          if (ev.type === 'ERROR') {
            req.destroy();
            reject(new KubeError(ev.object.code ?? 0, 'WatchError', `watch pods: ${ev.object.message ?? 'error'}`));
            return false;
          }
          const rv = ev.object.metadata?.resourceVersion;
          if (rv) this.rv = rv;
          if (ev.type === 'BOOKMARK') return;
          const key = `${ev.object.metadata?.namespace}/${ev.object.metadata?.name}`;
          if (ev.type === 'DELETED') this.pods.delete(key);
          else this.pods.set(key, ev.object);
        }));
        res.on('end', () => resolve());
        res.on('error', reject);
      });
      this.current = req;
      req.on('error', reject);
    });
  }
}
