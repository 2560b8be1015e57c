import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { productionIdentityArgs } from './manager';
import { TEST_DATA_DIR } from './stack';

/**
 * Upstream kube-controller-manager v1.35.4 on the test stack, the reference every *-vs-upstream
 * e2e file compares against. One per file; its log goes to the stack's logs/kcm-upstream-<name>.log.
 */
export class UpstreamKcm {
  private proc: ChildProcess | undefined;
  /** where this start's output begins in the log */
  private logFrom = 0;

  constructor(private readonly logName: string) {}

  /** Where its output goes (appended to across starts). */
  get logFile(): string {
    return path.join(TEST_DATA_DIR, 'logs', `kcm-upstream-${this.logName}.log`);
  }

  /**
   * Starts it with upstream's --controllers names and extra flags (e.g.
   * --use-service-account-credentials), first stopping a run a failed test may have left: two
   * upstream managers at once would each act on the same objects. It returns once its caches are
   * synced, as ours is ready only once its informers are: both then see the test's changes through
   * their watches. `noCacheWait` is for controller sets none of which waits for a cache (the CSR
   * cleaner alone lists on its hourly timer), whose log never says one is synced.
   */
  async start(controllers: string, args: readonly string[] = [], { noCacheWait = false } = {}): Promise<void> {
    await this.stop();
    this.logFrom = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    const bin = (await ensureBinaries(['kube-controller-manager']))['kube-controller-manager'];
    // as kubeadm runs it: its own identity, each controller as its ServiceAccount
    const [kubeconfig, kc, ...sa] = productionIdentityArgs(TEST_DATA_DIR, args);
    const log = fs.openSync(this.logFile, 'a');
    this.proc = spawn(bin, [kubeconfig, kc, `--authentication-kubeconfig=${kc}`, `--authorization-kubeconfig=${kc}`,
      `--controllers=${controllers}`, '--leader-elect=false', '--secure-port=0', ...sa, ...args], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    if (!noCacheWait) await this.cachesSynced();
  }

  /**
   * Waits until every informer cache a controller of this start waited for is synced (its log has
   * as many "Caches are synced" as "Waiting for caches to sync", at least one). A change made
   * before then reaches upstream through its first lists instead of its watches, and its taint
   * manager then works a tainted node's pods twice, once from the node and once from each pod.
   */
  private async cachesSynced(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = fs.readFileSync(this.logFile).subarray(this.logFrom).toString('utf8');
      const waiting = text.split('"Waiting for caches to sync"').length - 1;
      const synced = text.split('"Caches are synced"').length - 1;
      if (waiting > 0 && synced >= waiting) return;
      if (this.proc?.exitCode !== null || this.proc?.signalCode !== null) throw new Error(`upstream exited before its caches synced; see ${this.logFile}`);
      if (Date.now() > deadline) throw new Error(`upstream's caches not synced in ${timeoutMs} ms (${synced} of ${waiting}); see ${this.logFile}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops it (SIGTERM) and waits for the exit; a no-op when it is not running. */
  async stop(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }
}
