export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export type Log = (line: string) => void;

/** Poll until `check` returns a value; errors while polling count as "not yet" (the API server may be busy). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(intervalMs);
  }
}
