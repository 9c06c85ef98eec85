export interface WaitForOptions {
  /** Give up after this long (default 5 s). */
  timeoutMs?: number;
  /** Poll period (default 20 ms). */
  intervalMs?: number;
  /** Says what was awaited, for the timeout error. */
  message?: string;
}

/**
 * Polls `cond` until it is true; rejects after `timeoutMs` naming `message`. A throwing
 * condition counts as false (its last error is quoted on timeout).
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  opts: WaitForOptions = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const intervalMs = opts.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await cond()) return;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`waitFor timed out after ${timeoutMs} ms: ${opts.message ?? "condition"}${why}`);
    }
    await Bun.sleep(Math.min(intervalMs, Math.max(1, deadline - Date.now())));
  }
}
