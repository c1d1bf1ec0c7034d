/** The one polling helper of the tests: wait for something that happens asynchronously. */

export interface EventuallyOptions {
  /** How long to keep trying, from the first call. */
  timeoutMs: number;
  /** The pause between calls (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout's message. */
  what?: string;
}

/**
 * Calls `fn` every `intervalMs` until it neither throws nor returns `false`, and answers what it
 * returned then. After `timeoutMs` it throws: the last error `fn` threw, or else a timeout error
 * naming `what`. A wait that may end either way (then asserted) ends in `.catch(() => {})`.
 */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  { timeoutMs, intervalMs = 50, what = 'the condition' }: EventuallyOptions,
): Promise<Exclude<T, false>> {
  const t0 = Date.now();
  for (;;) {
    let failed = false;
    let failure: unknown;
    try {
      const v = await fn();
      if (v !== false) return v as Exclude<T, false>;
    } catch (e) {
      failed = true;
      failure = e;
    }
    if (Date.now() - t0 >= timeoutMs) {
      if (failed) throw failure;
      throw new Error(`timed out: ${what} did not hold within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
