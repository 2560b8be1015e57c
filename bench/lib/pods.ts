import * as http from 'node:http';
import * as https from 'node:https';
import { lineSplitter } from '../../activities/kube/lines';
import { adminKubeConfig } from '../../starter/local/stack';
import { BenchStack } from './stack';
import { sleep } from './util';

interface PodMeta {
  uid: string;
  name: string;
  /** the `app` label: which workload the pod belongs to */
  app: string;
  deleting: boolean;
  /** client clock when the watch first showed this pod */
  seenAt: number;
  ready: boolean;
}

interface WatchPod {
  metadata: { uid: string; name: string; resourceVersion: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/**
 * Pods of one namespace as a watch shows them, with the time each first appeared. Timing by
 * watch, not by polling lists, keeps the benchmark's own load on the API server small and its
 * clock resolution fine; both managers are measured through the same watch.
 */
export class PodWatch {
  readonly pods = new Map<string, PodMeta>();
  private stopped = false;
  private req?: http.ClientRequest;
  private rv = '';

  private constructor(private readonly stack: BenchStack, private readonly ns: string) {}

  static async start(stack: BenchStack, ns: string): Promise<PodWatch> {
    const w = new PodWatch(stack, ns);
    const list = await stack.rest.request<{ metadata: { resourceVersion: string }; items: WatchPod[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
    for (const p of list.body.items) w.apply('ADDED', p);
    w.rv = list.body.metadata.resourceVersion;
    void w.loop();
    return w;
  }

  private apply(type: string, p: WatchPod): void {
    if (type === 'DELETED') {
      this.pods.delete(p.metadata.uid);
      return;
    }
    const ready = !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    const prev = this.pods.get(p.metadata.uid);
    this.pods.set(p.metadata.uid, {
      uid: p.metadata.uid, name: p.metadata.name, app: p.metadata.labels?.app ?? '', deleting: !!p.metadata.deletionTimestamp, seenAt: prev?.seenAt ?? Date.now(), ready,
    });
  }

  private async loop(): Promise<void> {
    const kc = adminKubeConfig(this.stack.dataDir);
    const server = kc.getCurrentCluster()!.server;
    while (!this.stopped) {
      await new Promise<void>((resolve) => {
        const url = new URL(`${server}/api/v1/namespaces/${this.ns}/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${this.rv}`);
        const opts: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
        void kc.applyToHTTPSOptions(opts).then(() => {
          if (this.stopped) return resolve();
          const req = https.request(url, opts, (res) => {
            res.setEncoding('utf8');
            res.on('data', lineSplitter((line) => {
              let ev: { type: string; object: WatchPod };
              try {
                ev = JSON.parse(line) as { type: string; object: WatchPod };
              } catch {
                return;
              }
              if (ev.type === 'ERROR') { this.rv = ''; return; } // expired: relist below
              this.rv = ev.object.metadata.resourceVersion;
              if (ev.type !== 'BOOKMARK') this.apply(ev.type, ev.object);
            }));
            res.on('end', resolve);
            res.on('error', () => resolve());
          });
          req.on('error', () => resolve());
          req.end();
          this.req = req;
        }, () => resolve());
      });
      if (this.stopped) break;
      if (!this.rv) await this.relist().catch(() => undefined);
      await sleep(100);
    }
  }

  private async relist(): Promise<void> {
    const list = await this.stack.rest.request<{ metadata: { resourceVersion: string }; items: WatchPod[] }>('GET', `/api/v1/namespaces/${this.ns}/pods`);
    const uids = new Set(list.body.items.map((p) => p.metadata.uid));
    for (const uid of [...this.pods.keys()]) if (!uids.has(uid)) this.pods.delete(uid);
    for (const p of list.body.items) this.apply('MODIFIED', p);
    this.rv = list.body.metadata.resourceVersion;
  }

  /** Pods not being deleted, of one app or all. */
  live(app?: string): PodMeta[] {
    return [...this.pods.values()].filter((p) => !p.deleting && (app === undefined || p.app === app));
  }

  /** Pods of an app first seen at or after `t`. */
  seenSince(t: number, app: string): PodMeta[] {
    return [...this.pods.values()].filter((p) => p.seenAt >= t && p.app === app);
  }

  /** Resolves with the time the condition first held, checking every 20 ms (the watch updates state in between). */
  async until(what: string, cond: () => boolean, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what} (${this.live().length} live pods)`);
      await sleep(20);
    }
    return Date.now();
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }
}
