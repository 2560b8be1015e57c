import { Context } from '@temporalio/activity';

/** Heartbeats the running activity; a no-op outside one (unit tests call activities directly). */
export function heartbeat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    /* not inside an activity */
  }
}

/** Runs `fn` over `items`, at most `limit` at a time, as upstream's worker counts; the first error stops new work and is thrown. */
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
