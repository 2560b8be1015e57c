/*
 * Waiting on an AbortSignal without a listener per waiter: the informers' watches and back-offs,
 * the Temporal connect loop and the fence's probe wait all sit on long-lived signals.
 */

/** One real 'abort' listener per signal, whatever the number of waiters on it. */
const abortWaiters = new WeakMap<AbortSignal, { waiters: Set<() => void>; listener: () => void }>();

/**
 * Calls `fn` once when `signal` aborts (at once if it has); the returned function unsubscribes.
 * Every informer's watches and back-off sleeps wait on one long-lived signal, dozens at once:
 * adding a listener each would trip Node's MaxListenersExceededWarning (11 on one AbortSignal).
 * Here they share one listener, removed with the last waiter.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  let entry = abortWaiters.get(signal);
  if (!entry) {
    const waiters = new Set<() => void>();
    const listener = () => {
      abortWaiters.delete(signal);
      for (const w of [...waiters]) w();
      waiters.clear();
    };
    entry = { waiters, listener };
    abortWaiters.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const e = entry;
  const waiter = () => fn();
  e.waiters.add(waiter);
  return () => {
    if (!e.waiters.delete(waiter) || e.waiters.size) return;
    signal.removeEventListener('abort', e.listener);
    if (abortWaiters.get(signal) === e) abortWaiters.delete(signal);
  };
}

/** Resolves after `ms`, or at once when `signal` aborts; waiters on one signal share its one listener (onAbort). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    let off: () => void = () => undefined;
    const t = setTimeout(() => { off(); resolve(); }, ms);
    if (signal) off = onAbort(signal, () => { clearTimeout(t); resolve(); });
  });
