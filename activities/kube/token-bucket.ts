/**
 * Client-side rate limit for API calls, the --kube-api-qps / --kube-api-burst pair of
 * kube-controller-manager: `burst` calls at once, refilled at `qps` per second.
 */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private queue: Array<() => void> = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly qps: number, private readonly burst: number) {
    this.tokens = burst;
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  take(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    this.refill();
    if (this.tokens >= 1 && this.queue.length === 0) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(1, ((1 - this.tokens) / this.qps) * 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.tokens >= 1 && this.queue.length) {
        this.tokens -= 1;
        this.queue.shift()!();
      }
      if (this.queue.length) this.schedule();
    }, wait);
    this.timer.unref?.();
  }
}
