/**
 * Runs `fn` over `items`, at most `limit` at a time, as upstream's worker counts bound it; the
 * first error stops new work and is thrown once the work in flight has ended.
 *
 * Safe in workflow code as well as in activities: workers take items in order from one index, so
 * each item's `fn` starts (and runs up to its first await) in the items' order, and what comes after
 * is ordered by the completions the history records. A caller that must keep an order (a queue it
 * appends to) does so before its first await.
 */
export async function pool<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const t = items[next++];
      try {
        await fn(t);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure;
}
