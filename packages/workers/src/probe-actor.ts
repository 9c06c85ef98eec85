import { fromPromise } from "xstate";
import type { ProbeInput } from "./machine";
import type { ProbeFn, ProbeResult } from "./types";

/**
 * Wraps an engine probe so it can never outlive its timeout: a hung engine is a failed probe,
 * never a stuck actor, even if the probe ignores its abort signal.
 */
export function boundedProbe(probe: ProbeFn) {
  return fromPromise<ProbeResult, ProbeInput>(async ({ input, signal }) => {
    const { timeoutMs } = input.request.config;
    const deadline = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<ProbeResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ healthy: false, detail: `probe timed out after ${timeoutMs} ms`, latencyMs: performance.now() - started }),
        timeoutMs + 50,
      );
    });
    try {
      return await Promise.race([
        probe({ ...input.request, signal: AbortSignal.any([signal, deadline]) }).catch(
          (err): ProbeResult => ({
            healthy: false,
            detail: deadline.aborted ? `probe timed out after ${timeoutMs} ms` : `probe error: ${err instanceof Error ? err.message : String(err)}`,
            latencyMs: performance.now() - started,
          }),
        ),
        expired,
      ]);
    } finally {
      clearTimeout(timer);
    }
  });
}
